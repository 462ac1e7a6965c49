"""File loaders: bytes of one file (or one fetched URL) -> Documents, by format, with well-kept libraries.

| format | library |
|---|---|
| PDF | pypdf (one Document per page, page numbers kept) |
| DOCX | python-docx (paragraphs and tables in order) |
| PPTX | python-pptx (one Document per slide) |
| HTML | trafilatura ``bare_extraction`` on ``decode_html`` text (BOM, header or meta charset, UTF-8, detection) |
| TXT/MD/RST/... | plain text; UTF-8, else charset-normalizer with a cp1252 preference for Latin guesses |
| JSON / JSONL | one Document per record, text and title keys configurable |
| anything else | markitdown when installed (XLSX, EPUB, ...), else skipped |

A loader that cannot use a file raises ``SkipSource`` with a reason; the pipeline reports it and goes on.
``BuiltinLoader`` is the ``loader`` provider ``builtin``; ``load_bytes`` also serves fetched web pages whatever the
configured loader.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Callable

from deepsearcher.errors import SkipSource
from deepsearcher.settings import LoaderSettings
from deepsearcher.types import Document

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".org", ".text", ".log", ".csv", ".tsv", ".adoc", ".tex"}
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}
LATIN_GUESSES = {"cp1250", "cp1252", "latin_1", "iso8859_2", "iso8859_15", "cp1254", "iso8859_9", "cp850",
                 "mac_roman", "cp1257", "iso8859_4", "iso8859_13"}


__all__ = ["BuiltinLoader", "SkipSource", "load_bytes", "load_path", "non_empty", "sniff", "decode_text",
           "decode_html"]


class BuiltinLoader:
    """The ``builtin`` loader provider: each format through its library (see the table above).

    Args:
        options: the ``loader`` settings (JSON keys, file selection).
    """

    def __init__(self, options: LoaderSettings) -> None:
        self.options = options

    def load(self, path: Path) -> list[Document]:
        """Documents of one file (see ``Loader.load``)."""
        return load_path(path, self.options)


def load_path(path: Path, options: LoaderSettings) -> list[Document]:
    """Load one file with the built-in format loaders.

    Args:
        path: an existing file.
        options: loader settings (JSON keys).

    Returns:
        Non-empty list of Documents with non-blank text; ``source`` is the absolute POSIX path.

    Raises:
        SkipSource: empty, binary/unsupported, undecodable, or no text layer.
    """
    data = path.read_bytes()
    if not data.strip():
        raise SkipSource("empty file")
    source = path.resolve().as_posix()
    return load_bytes(data, source, suffix=path.suffix.lower(), title=path.stem, options=options)


def load_bytes(data: bytes, source: str, *, suffix: str = "", content_type: str | None = None,
               title: str = "", options: LoaderSettings | None = None, charset: str | None = None) -> list[Document]:
    """Dispatch raw bytes to a format loader by magic bytes first, then content type, then suffix.

    Used by files and by the crawler (a PDF served under an HTML-looking URL is still a PDF).

    Raises:
        SkipSource: as ``load_path``.
    """
    options = options or LoaderSettings()
    kind = sniff(data, suffix=suffix, content_type=content_type)
    loader: Callable[..., list[Document]] = {  # type: ignore[assignment]
        "pdf": _load_pdf, "docx": _load_docx, "pptx": _load_pptx, "html": _load_html,
        "json": _load_json, "text": _load_text, "other": _load_other,
    }[kind]
    if kind == "text":
        docs = _load_text(data, source, title, charset=charset)
    elif kind == "json":
        docs = _load_json(data, source, title, options, suffix=suffix)
    elif kind == "other":
        docs = _load_other(data, source, title, suffix=suffix)
    elif kind == "html":
        docs = _load_html(data, source, title, charset=charset)
    else:
        docs = loader(data, source, title)
    return non_empty(docs, source)


def sniff(data: bytes, *, suffix: str = "", content_type: str | None = None) -> str:
    """Classify bytes as pdf, docx, pptx, html, json, text or other.

    Magic bytes win over the content type, which wins over the file suffix: ``%PDF-`` is never indexed as text.
    """
    head = data[:2048].lstrip()
    ctype = (content_type or "").split(";")[0].strip().lower()
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        if suffix == ".docx" or "wordprocessingml" in ctype:
            return "docx"
        if suffix == ".pptx" or "presentationml" in ctype:
            return "pptx"
        return "other"
    if ctype in {"text/html", "application/xhtml+xml"} or suffix in HTML_SUFFIXES:
        return "html"
    if not suffix and not ctype and head[:15].lower().startswith((b"<!doctype html", b"<html")):
        return "html"
    if suffix in JSON_SUFFIXES or ctype in {"application/json", "application/x-ndjson"}:
        return "json"
    if _looks_binary(data):
        return "other"
    if suffix in TEXT_SUFFIXES or ctype.startswith("text/") or not suffix:
        return "text"
    return "other"


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        # UTF-16 text has NULs too; accept it only with a BOM
        return not sample.startswith((b"\xff\xfe", b"\xfe\xff"))
    return False


def decode_text(data: bytes, charset: str | None = None) -> str:
    """Decode bytes to text: declared charset, else UTF-8 (BOM-aware), else charset-normalizer.

    charset-normalizer alone picks cp1250 for some cp1252 files; when its guess is a Latin single-byte code page and
    the bytes are valid cp1252, cp1252 (the most common one) is used.

    Raises:
        SkipSource: no encoding decodes the bytes.
    """
    if charset:
        try:
            return data.decode(charset)
        except (LookupError, UnicodeDecodeError):
            log.debug("declared charset %s failed; detecting", charset)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise SkipSource("undecodable text (no character encoding fits)")
    if best.encoding in LATIN_GUESSES:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    return str(best)


def decode_html(data: bytes, charset: str | None = None) -> str:
    """Decode HTML bytes: byte-order mark, then the HTTP header charset, then ``<meta charset>``, then UTF-8, then
    detection (``decode_text``) — the WHATWG order, so UTF-8 served with no charset anywhere is never mojibake.

    WHATWG maps the labels iso-8859-1 / us-ascii to windows-1252, which browsers (and pages) actually use.

    Raises:
        SkipSource: no encoding decodes the bytes.
    """
    from bs4.dammit import EncodingDetector

    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return decode_text(data)
    declared = EncodingDetector.find_declared_encoding(data[:4096], is_html=True)
    for label in (charset, declared):
        if not label:
            continue
        label = label.strip().lower()
        for encoding in (_WHATWG_ALIASES.get(label), label):
            if encoding:
                try:
                    return data.decode(encoding)
                except (LookupError, UnicodeDecodeError):
                    continue
    return decode_text(data)


_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252",
                   "ascii": "cp1252"}


#: Share of control characters (other than tab, newline, carriage return, form feed) above which extracted "text" is
#: binary garbage: random bytes decode to text in some code page, and converters pass corrupt files through as-is.
MAX_CONTROL_SHARE = 0.01


def non_empty(docs: list[Document], source: str) -> list[Document]:
    """The Documents with text; raises ``SkipSource`` when none has any, or when the text is binary garbage."""
    kept = [d for d in docs if d.text and d.text.strip()]
    if not kept:
        raise SkipSource("no text extracted")
    text = "".join(d.text for d in kept)
    control = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\n\r\f") or 0x7F <= ord(ch) < 0xA0
                  or ch == "\ufffd")
    if control > MAX_CONTROL_SHARE * len(text):
        raise SkipSource(f"binary or corrupt content ({control} control characters in {len(text)})")
    return kept


def _load_text(data: bytes, source: str, title: str, *, charset: str | None = None) -> list[Document]:
    return [Document(text=decode_text(data, charset), source=source, title=title)]


def _load_pdf(data: bytes, source: str, title: str) -> list[Document]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [(i + 1, page.extract_text() or "") for i, page in enumerate(reader.pages)]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise SkipSource(f"unreadable PDF ({exc})") from exc
    meta_title = ""
    try:
        meta_title = (reader.metadata.title or "") if reader.metadata else ""
    except Exception:  # pypdf raises assorted errors on odd metadata; the title is optional
        meta_title = ""
    docs = [Document(text=t, source=source, title=meta_title or title, page=n) for n, t in pages if t.strip()]
    if not docs:
        raise SkipSource("no text layer (scanned?)")
    return docs


def _load_docx(data: bytes, source: str, title: str) -> list[Document]:
    import docx
    from docx.oxml.ns import qn

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises PackageNotFoundError, KeyError, BadZipFile...
        raise SkipSource(f"unreadable DOCX ({exc})") from exc
    parts: list[str] = []
    body = document.element.body
    for child in body.iterchildren():
        if child.tag == qn("w:p"):
            text = "".join(node.text or "" for node in child.iter(qn("w:t")))
            if text.strip():
                parts.append(text)
        elif child.tag == qn("w:tbl"):
            for row in child.iter(qn("w:tr")):
                cells = ["".join(n.text or "" for n in cell.iter(qn("w:t"))) for cell in row.iter(qn("w:tc"))]
                parts.append(" | ".join(c.strip() for c in cells))
    core_title = document.core_properties.title or ""
    return [Document(text="\n\n".join(parts), source=source, title=core_title or title)]


def _load_pptx(data: bytes, source: str, title: str) -> list[Document]:
    from pptx import Presentation

    try:
        prs = Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises PackageNotFoundError, KeyError, BadZipFile...
        raise SkipSource(f"unreadable PPTX ({exc})") from exc
    docs = []
    for number, slide in enumerate(prs.slides, start=1):
        texts = []
        for shape in slide.shapes:
            if getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                texts.append(shape.text_frame.text)
            if getattr(shape, "has_table", False):
                for row in shape.table.rows:
                    texts.append(" | ".join(cell.text.strip() for cell in row.cells))
        if texts:
            docs.append(Document(text="\n".join(texts), source=source, title=title, page=number))
    return docs


def _load_html(data: bytes, source: str, title: str, *, charset: str | None = None) -> list[Document]:
    import trafilatura

    # decoded here because trafilatura ignores <meta charset> and the HTTP header (it tries UTF-8, then guesses)
    result = trafilatura.bare_extraction(decode_html(data, charset), include_tables=True, include_comments=False,
                                         with_metadata=True, url=source if source.startswith("http") else None)
    text = getattr(result, "text", None) or ""
    if not text.strip():
        raise SkipSource("no main text found in HTML")
    return [Document(text=text, source=source, title=getattr(result, "title", None) or title,
                     metadata={"content_type": "text/html"})]


def _load_json(data: bytes, source: str, title: str, options: LoaderSettings, *, suffix: str) -> list[Document]:
    text = decode_text(data)
    records: list[object]
    bad_lines: list[int] = []
    try:
        if suffix in {".jsonl", ".ndjson"}:
            records = []
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        bad_lines.append(number)  # one bad line must not lose the file's other records
        else:
            parsed = json.loads(text)
            records = parsed if isinstance(parsed, list) else [parsed]
    except json.JSONDecodeError as exc:
        raise SkipSource(f"invalid JSON ({exc.msg} at line {exc.lineno})") from exc
    key, tkey = options.json_text_key, options.json_title_key
    docs = []
    for index, rec in enumerate(records):
        if isinstance(rec, dict) and isinstance(rec.get(key), str):
            rec_title = str(rec.get(tkey) or "") if tkey else ""
            docs.append(Document(text=rec[key], source=source, title=rec_title or f"{title}#{index}",
                                 metadata={"record": index}))
    if bad_lines:
        shown = ", ".join(map(str, bad_lines[:10])) + (" …" if len(bad_lines) > 10 else "")
        log.warning("%s: %d invalid JSON line(s) skipped: line %s", source, len(bad_lines), shown)
    if not docs:
        if bad_lines and not records:
            raise SkipSource(f"invalid JSON on every line (first: line {bad_lines[0]})")
        raise SkipSource(f"no JSON record has a string {key!r} key (set loader.json_text_key)")
    return docs


def _load_other(data: bytes, source: str, title: str, *, suffix: str) -> list[Document]:
    if suffix in TEXT_SUFFIXES or not suffix:
        # a .txt (or extension-less) file that sniffs as binary is not text, and markitdown would pass it through
        raise SkipSource("binary file")
    try:
        from markitdown import MarkItDown, StreamInfo
    except ModuleNotFoundError:
        raise SkipSource(f"unsupported file type {suffix or '(no extension)'}") from None
    try:
        result = MarkItDown(enable_plugins=False).convert_stream(
            io.BytesIO(data), stream_info=StreamInfo(extension=suffix or None))
    except Exception as exc:  # markitdown raises UnsupportedFormatException and converter errors
        reason = "unsupported file type" if "Unsupported" in type(exc).__name__ else "could not convert"
        raise SkipSource(f"{reason} {suffix or '(no extension)'}") from exc
    return [Document(text=result.text_content or "", source=source, title=result.title or title)]
