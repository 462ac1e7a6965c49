"""DOCX: python-docx opens the package; a walk over the WordprocessingML body reads the whole document.

Measured on the fidelity suite (docs/benchmarks.md): python-docx's API stores 68 % of the expected text (it skips
content controls, text boxes, nested tables, notes, hyperlinks in older versions), mammoth 89 % (no footnotes in raw
text, soft hyphens kept), docx2python 78 % (text boxes twice, crashes on notes parts written without relationships),
markitdown (mammoth to HTML) 96 %. No library read every fixture, so this module walks the XML python-docx loads:

* body blocks in order: paragraphs, tables (rows and cells, nested tables), block/row/cell content controls
  (``w:sdt``), custom XML and tracked insertions;
* runs: ``w:t``, tabs, breaks, non-breaking hyphens; deleted text (``w:delText``, ``w:moveFrom``) and field codes
  (``w:instrText``) are not document text; a soft hyphen element adds nothing;
* text boxes: ``mc:AlternateContent`` takes its first ``mc:Choice`` only (the ``mc:Fallback`` holds a VML copy of
  the same box); a box's paragraphs follow the paragraph that anchors it, as separate blocks, so they are neither
  glued to the body text nor stored twice; VML-only boxes (older Word) are read too;
* footnotes and endnotes (``word/footnotes.xml``, ``word/endnotes.xml``) after the body; headers and footers only
  with ``include_headers=True`` (they repeat on every page and are usually boilerplate).
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any, Iterator

from lxml import etree

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.sections import HEADINGS
from deepsearcher.types import Document

log = logging.getLogger(__name__)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_SKIP = {W + t for t in ("delText", "instrText", "moveFrom", "del", "rPr", "pPr", "sdtPr", "sdtEndPr", "tblPr",
                         "tblGrid", "trPr", "tcPr", "fldChar", "footnoteRef", "endnoteRef", "commentReference")}
_CHARS = {W + "tab": "\t", W + "br": "\n", W + "cr": "\n", W + "noBreakHyphen": "-"}


def extract_docx(data: bytes, source: str, *, title: str = "", include_headers: bool = False) -> list[Document]:
    """Extract the whole document's text as one Document.

    Args:
        data: the DOCX file's bytes.
        source: path or URL.
        title: fallback title when the core properties have none.
        include_headers: also store headers and footers (after the body).

    Returns:
        One Document; blocks are separated by blank lines, table cells by `` | ``.

    Raises:
        SkipSource: not a readable DOCX, or no text.
    """
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises PackageNotFoundError, KeyError, BadZipFile, XMLSyntaxError...
        raise SkipSource(f"unreadable DOCX ({type(exc).__name__}: {exc})") from exc
    blocks = list(_blocks(document.element.body))
    for kind in ("footnotes", "endnotes") + (("header", "footer") if include_headers else ()):
        for root in _related_roots(document.part, kind):
            blocks.extend(_note_blocks(root) if kind.endswith("notes") else _blocks(root))
    text = "\n\n".join(b for b in blocks if b.strip())
    if not text.strip():
        raise SkipSource("no text in the document")
    core_title = (document.core_properties.title or "").strip()
    headings = _headings(document)
    return [Document(text=text, source=source, title=core_title or title,
                     metadata={"format": "docx", **({HEADINGS: headings} if headings else {})})]


def _headings(document: Any) -> list[list[Any]]:
    """``[level, title]`` of the body's heading paragraphs: a paragraph style named "Heading N" (Word's built-in
    names, whatever the style id in a localised document) or one with an outline level."""
    levels: dict[str, int] = {}
    for style in document.styles:
        name = (getattr(style, "name", "") or "").lower()
        match = re.fullmatch(r"heading ([1-9])", name)
        outline = style.element.find(f"{W}pPr/{W}outlineLvl")
        if match:
            levels[style.style_id] = int(match.group(1))
        elif outline is not None and (outline.get(W + "val") or "").isdigit() and int(outline.get(W + "val")) < 9:
            levels[style.style_id] = int(outline.get(W + "val")) + 1
    out = []
    for paragraph in document.element.body.iter(W + "p"):
        style = paragraph.find(f"{W}pPr/{W}pStyle")
        level = levels.get(style.get(W + "val", "") if style is not None else "")
        if level:
            runs: list[str] = []
            _inline(paragraph, runs, [])
            title = " ".join("".join(runs).split())
            if title:
                out.append([level, title])
    return out


def _blocks(container: etree._Element) -> Iterator[str]:
    """Text blocks of a body, cell, text box, header or note, in document order."""
    for child in container:
        tag = child.tag
        if tag == W + "p":
            runs: list[str] = []
            boxes: list[str] = []
            _inline(child, runs, boxes)
            yield "".join(runs)
            yield from boxes
        elif tag == W + "tbl":
            yield from _table(child)
        elif tag in _SKIP:
            continue
        elif isinstance(tag, str):  # w:sdt, w:sdtContent, w:customXml, w:ins, mc:AlternateContent... (not comments)
            yield from _blocks(_choice(child) if tag == MC + "AlternateContent" else child)


def _inline(element: etree._Element, out: list[str], boxes: list[str]) -> None:
    for child in element:
        tag = child.tag
        if tag == W + "t":
            out.append(child.text or "")
        elif tag in _CHARS:
            out.append(_CHARS[tag])
        elif tag in _SKIP or not isinstance(tag, str):
            continue
        elif tag == W + "txbxContent":
            boxes.extend(_blocks(child))
        elif tag == MC + "AlternateContent":
            _inline(_choice(child), out, boxes)
        else:  # runs, hyperlinks, inline content controls, fields, smart tags, insertions, drawings, VML shapes
            _inline(child, out, boxes)


def _choice(alternate: etree._Element) -> etree._Element:
    """The first mc:Choice of an mc:AlternateContent (or its mc:Fallback when there is no choice)."""
    for child in alternate:
        if child.tag == MC + "Choice":
            return child
    return next((c for c in alternate if c.tag == MC + "Fallback"), alternate)


def _table(table: etree._Element) -> Iterator[str]:
    for row in _descendants(table, W + "tr", stop={W + "tbl"}):
        cells = ["\n".join(b for b in _blocks(cell) if b.strip()) for cell in _descendants(row, W + "tc",
                                                                                        stop={W + "tbl"})]
        if any(c.strip() for c in cells):
            yield " | ".join(cells)


def _descendants(element: etree._Element, tag: str, stop: set[str]) -> Iterator[etree._Element]:
    """Children with ``tag``, looking through wrappers (content controls, custom XML) but not into ``stop`` tags."""
    for child in element:
        if child.tag == tag:
            yield child
        elif isinstance(child.tag, str) and child.tag not in stop and child.tag not in _SKIP:
            yield from _descendants(child, tag, stop)


def _note_blocks(root: etree._Element) -> Iterator[str]:
    for note in root:
        if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        text = " ".join(b.strip() for b in _blocks(note) if b.strip())
        if text:
            yield text


def _related_roots(part: Any, kind: str) -> Iterator[etree._Element]:
    for rel in part.rels.values():
        if rel.is_external or rel.reltype != RELS + kind:
            continue
        target = rel.target_part
        element = getattr(target, "element", None)
        if element is None:
            try:
                element = etree.fromstring(target.blob)
            except etree.XMLSyntaxError:
                log.warning("unreadable %s part in a DOCX; skipped", kind)
                continue
        yield element
