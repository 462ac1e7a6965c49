"""A tiny deterministic PDF writer for the fidelity fixtures: Helvetica text lines, pages, optional ToUnicode CMap.

Hand-written objects (as in the shared case scripts) so the bytes are identical on every run and the text layer holds
exactly what a test needs, e.g. ligature glyphs mapped to U+FB01 or to U+0000, or a soft hyphen at a line end.
"""

from __future__ import annotations

#: ToUnicode CMap header/footer; the body lists bfrange/bfchar entries.
_CMAP_HEAD = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Fid def "
              b"1 begincodespacerange <00> <FF> endcodespacerange\n"
              b"1 beginbfrange <20> <7E> <0020> endbfrange\n")
_CMAP_TAIL = b"endcmap CMapName currentdict /CMap defineresource pop end end"


def escape(line: bytes) -> bytes:
    """Escape a PDF literal string."""
    return line.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def page_stream(lines: list[bytes], size: int = 11) -> bytes:
    """Content stream that shows each line below the previous one (the ' operator: next line, show)."""
    return b"BT /F1 %d Tf 72 740 Td 14 TL " % size + b" ".join(b"(" + escape(l) + b") '" for l in lines) + b" ET"


def build_pdf(pages: list[list[bytes]], *, extra_glyphs: dict[int, tuple[str, str]] | None = None,
              title: str | None = None) -> bytes:
    """Build a PDF with one page per list of lines (bytes in WinAnsi, codes >= 0x80 as given).

    extra_glyphs maps a byte code to (glyph name, Unicode text the ToUnicode CMap gives it), e.g.
    {0x80: ("fi", "\\ufb01")} or {0x81: ("ff", "\\x00")}; without it the font has no ToUnicode CMap.
    """
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font_id = 3
    objs.append(font)
    if extra_glyphs:
        diffs = b" ".join(b"%d /%s" % (code, name.encode()) for code, (name, _) in sorted(extra_glyphs.items()))
        chars = b"".join(b"<%02X> <%s>\n" % (code, text.encode("utf-16-be").hex().upper().encode())
                         for code, (_, text) in sorted(extra_glyphs.items()))
        cmap = _CMAP_HEAD + b"%d beginbfchar " % len(extra_glyphs) + chars + b"endbfchar\n" + _CMAP_TAIL
        objs.append(b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream")
        objs[font_id - 1] = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding "
                             b"/BaseEncoding /WinAnsiEncoding /Differences [" + diffs + b"] >> /ToUnicode %d 0 R >>"
                             % len(objs))
    kids = []
    for lines in pages:
        stream = page_stream(lines)
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> "
                    b"/Contents %d 0 R >>" % (font_id, len(objs)))
        kids.append(len(objs))
    objs[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    info = b""
    if title:
        objs.append(b"<< /Title (" + escape(title.encode("latin-1")) + b") /Producer (fidelity-suite) >>")
        info = b" /Info %d 0 R" % len(objs)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, info, xref)
    return bytes(out)
