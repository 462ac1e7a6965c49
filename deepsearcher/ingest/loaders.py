"""The built-in loader: bytes of one file (or one fetched URL) -> Documents, by format, with the extractors of
``deepsearcher.ingest.formats`` (each chosen by measurement on the fidelity suite, docs/benchmarks.md).

| format | extractor |
|---|---|
| PDF | pypdfium2, one Document per page; empty-password encryption opened, a real password skipped |
| DOCX | a WordprocessingML walk: content controls, tables, text boxes once, footnotes/endnotes (headers optional) |
| PPTX | python-pptx, one Document per slide: groups at any depth, tables, speaker notes |
| XLSX | openpyxl cell values, one Document per sheet |
| EPUB | markitdown, spine order |
| HTML | trafilatura ``favor_recall``, bare text in ``<div>``/``<section>`` made into paragraphs first |
| Markdown | text as written; front matter becomes the title and metadata |
| TXT/RST/... | plain text; BOM, UTF-8, else detection that gets short Windows-1252 right |
| JSON / JSONL | one Document per record, found by ``loader.json_text_path``; dropped records counted by reason |
| anything else | markitdown when it can convert it, else skipped |

A file that cannot be used raises ``SkipSource`` with a reason; the pipeline reports it and goes on. The text is
returned raw: the load pipeline's normalisation stage (``deepsearcher.ingest.normalize``) runs on every loader's
output. ``BuiltinLoader`` is the ``loader`` provider ``builtin``; ``load_bytes`` also serves fetched web pages whatever
the configured loader.
"""

from __future__ import annotations

import functools
import io
import logging
from pathlib import Path
from typing import Callable, Iterator

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.formats import HTML_SUFFIXES, JSONL_SUFFIXES, MARKDOWN_SUFFIXES, decode_html, extract
from deepsearcher.ingest.options import LoaderOptions
from deepsearcher.ingest.sources import file_title
from deepsearcher.ingest.formats.text import BLOCK_BYTES, STREAM_BYTES, stream_text
from deepsearcher.types import Document, Extraction

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".org", ".text", ".log", ".csv", ".tsv", ".adoc", ".tex"}
JSON_SUFFIXES = {".json"} | JSONL_SUFFIXES
#: ZIP-based formats told apart by suffix or content type (the magic bytes are the same ``PK``).
_ZIP_FORMATS = ((".docx", "wordprocessingml", "docx"), (".pptx", "presentationml", "pptx"),
                (".xlsx", "spreadsheetml", "xlsx"), (".epub", "epub+zip", "epub"))

__all__ = ["BuiltinLoader", "HTML_SUFFIXES", "JSON_SUFFIXES", "SkipSource", "TEXT_SUFFIXES", "decode_html",
           "load_bytes", "load_path", "sniff"]


class BuiltinLoader:
    """The ``builtin`` loader provider: each format through its extractor (see the table above).

    Args:
        options: the ``loader`` settings (JSON paths, DOCX headers, file selection).
    """

    def __init__(self, options: LoaderOptions) -> None:
        self.options = options

    def load(self, path: Path) -> Extraction:
        """Documents of one file and the records it dropped (see ``Loader.load``)."""
        return load_path(path, self.options)

    def stream(self, path: Path) -> Callable[[], Iterator[Document]] | None:
        """For a plain-text file larger than ``formats.text.STREAM_BYTES`` (not Markdown, whose front matter and
        headings need the whole file): a function that returns the file's text in pieces each time it is called
        (the pipeline reads it twice: to count its chunks, then to write them). None for any other file: load it
        with ``load``."""
        try:
            if path.stat().st_size < STREAM_BYTES or path.suffix.lower() in MARKDOWN_SUFFIXES:
                return None
            with open(path, "rb") as fh:
                head = fh.read(BLOCK_BYTES)
        except OSError:
            return None  # ``load`` reports why
        if sniff(head, suffix=path.suffix.lower()) != "text":
            return None
        return functools.partial(stream_text, path, path.resolve().as_posix(), file_title(path))


def load_path(path: Path, options: LoaderOptions) -> Extraction:
    """Load one file with the built-in extractors.

    Args:
        path: an existing file.
        options: loader settings.

    Returns:
        The Documents (raw text; ``source`` is the absolute POSIX path) and the JSON records dropped.

    Raises:
        SkipSource: empty, binary/unsupported, undecodable, encrypted with a password, or no text.
    """
    data = path.read_bytes()
    if not data.strip():
        raise SkipSource("empty file")
    source = path.resolve().as_posix()
    return load_bytes(data, source, suffix=path.suffix.lower(), title=file_title(path), options=options)


def load_bytes(data: bytes, source: str, *, suffix: str = "", content_type: str | None = None,
               title: str = "", options: LoaderOptions | None = None, charset: str | None = None) -> Extraction:
    """Dispatch raw bytes to an extractor by magic bytes first, then content type, then suffix.

    Used by files and by the crawler (a PDF served under an HTML-looking URL is still a PDF).

    Raises:
        SkipSource: as ``load_path``.
    """
    options = options or LoaderOptions()
    kind = sniff(data, suffix=suffix, content_type=content_type)
    if kind == "other":
        return Extraction(_load_other(data, source, title, suffix=suffix))
    ctype = (content_type or "").split(";")[0].strip().lower()
    if kind == "text" and (suffix in MARKDOWN_SUFFIXES or ctype == "text/markdown"):
        kind = "markdown"
    elif kind == "json":
        kind = "jsonl" if suffix in JSONL_SUFFIXES or ctype == "application/x-ndjson" else "json"
    result = extract(data, source, fmt=kind, title=title, charset=charset,
                     include_headers=options.docx_headers_footers, text_path=options.json_text_path,
                     title_path=options.json_title_path)
    if not result:
        raise SkipSource("no text extracted")
    return result


def sniff(data: bytes, *, suffix: str = "", content_type: str | None = None) -> str:
    """Classify bytes as pdf, docx, pptx, xlsx, epub, html, json, text or other.

    Magic bytes win over the content type, which wins over the file suffix: ``%PDF-`` is never indexed as text.
    """
    head = data[:2048].lstrip()
    ctype = (content_type or "").split(";")[0].strip().lower()
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        for zip_suffix, marker, kind in _ZIP_FORMATS:
            if suffix == zip_suffix or marker in ctype:
                return kind
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
        # UTF-16/32 text has NULs too; accept it only with a BOM
        return not sample.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"))
    return False


#: suffix -> (format name, the bytes its files start with, how far in they may start): a file named so that does
#: not start so is not that format (damaged, or another file renamed), said as such
_SIGNATURES = {".pdf": ("PDF", b"%PDF-", 1024), ".docx": ("Word", b"PK\x03\x04", 0),
               ".pptx": ("PowerPoint", b"PK\x03\x04", 0), ".xlsx": ("Excel", b"PK\x03\x04", 0),
               ".epub": ("EPUB", b"PK\x03\x04", 0)}


def _load_other(data: bytes, source: str, title: str, *, suffix: str) -> list[Document]:
    if suffix in TEXT_SUFFIXES or not suffix:
        # a .txt (or extension-less) file that sniffs as binary is not text, and markitdown would pass it through
        raise SkipSource("binary file")
    if suffix in _SIGNATURES:
        name, magic, within = _SIGNATURES[suffix]
        if magic not in data[:within + len(magic)]:
            if not data:
                raise SkipSource("empty file")
            raise SkipSource(f"named {suffix} but not a {name} file: it does not start like one (damaged, or another "
                             "kind of file renamed?)")
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
    return [Document(text=result.text_content or "", source=source, title=result.title or title,
                     metadata={"format": "markitdown"})]
