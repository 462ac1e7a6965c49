"""Per-format extractors that read the whole document: bytes -> Documents (raw text; normalise afterwards with
``deepsearcher.ingest.normalize.normalize_documents``).

Each module documents the library it uses and the measurement that chose it (``scripts/bench_fidelity.py``, table in
docs/benchmarks.md). Every extractor raises ``deepsearcher.errors.SkipSource`` with a reason for a file it cannot
use, never a library's own exception.

``extract`` dispatches by format name; the built-in loader (``deepsearcher.ingest.loaders``) picks the format from
magic bytes, content type and suffix (``loaders.sniff``) and calls it. ``EXTRACTION_VERSION`` is part of every
source's version hash: raise it when an extractor's output changes, so the next load re-extracts unchanged files.
"""

from __future__ import annotations

from deepsearcher.ingest.formats.docx import extract_docx
from deepsearcher.ingest.formats.html import decode_html, extract_html
from deepsearcher.ingest.formats.json_records import JsonExtraction, extract_json
from deepsearcher.ingest.formats.markdown import extract_markdown
from deepsearcher.ingest.formats.office import extract_epub, extract_xlsx
from deepsearcher.ingest.formats.pdf import extract_pdf
from deepsearcher.ingest.formats.pptx import extract_pptx
from deepsearcher.ingest.formats.text import decode, extract_text
from deepsearcher.types import Extraction

__all__ = ["EXTRACTION_VERSION", "FORMATS", "Extraction", "extract", "extract_docx", "extract_epub", "extract_html",
           "extract_json", "extract_markdown", "extract_pdf", "extract_pptx", "extract_text", "extract_xlsx",
           "decode", "decode_html", "format_of_suffix", "JsonExtraction"]

#: Version of the extractors' output (issue #13: whole-document extractors); part of every source's version hash.
EXTRACTION_VERSION = "2"
#: Format names ``extract`` knows.
FORMATS = ("pdf", "docx", "pptx", "xlsx", "epub", "html", "markdown", "json", "jsonl", "text")

HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
_BY_SUFFIX = {".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".epub": "epub", ".json": "json",
              **{s: "html" for s in HTML_SUFFIXES}, **{s: "markdown" for s in MARKDOWN_SUFFIXES},
              **{s: "jsonl" for s in JSONL_SUFFIXES}}


def format_of_suffix(suffix: str) -> str:
    """The format ``extract`` uses for a file suffix (lower-case or not, with the dot); "text" when unknown."""
    return _BY_SUFFIX.get(suffix.lower(), "text")


def extract(data: bytes, source: str, *, fmt: str | None = None, suffix: str = "", title: str = "",
            charset: str | None = None, include_headers: bool = False, text_path: str = "text",
            title_path: str | None = "title") -> Extraction:
    """Extract one file as format ``fmt`` (one of ``FORMATS``; default: by ``suffix``).

    Args:
        data: the file's bytes.
        source: path or URL copied to every Document.
        fmt: the format; "json" is one JSON value, "jsonl" one value per line, None picks by ``suffix``.
        suffix: the file suffix, used when ``fmt`` is None.
        title: fallback title.
        charset: a declared charset (HTTP header) for text formats.
        include_headers: DOCX: also headers and footers.
        text_path, title_path: JSON/JSONL record paths (``formats.json_records``).

    Raises:
        SkipSource: the extractor's reason.
        ValueError: an unknown ``fmt``.
    """
    fmt = fmt or format_of_suffix(suffix)
    if fmt == "pdf":
        return Extraction(extract_pdf(data, source, title=title))
    if fmt == "docx":
        return Extraction(extract_docx(data, source, title=title, include_headers=include_headers))
    if fmt == "pptx":
        return Extraction(extract_pptx(data, source, title=title))
    if fmt == "xlsx":
        return Extraction(extract_xlsx(data, source, title=title))
    if fmt == "epub":
        return Extraction(extract_epub(data, source, title=title))
    if fmt == "html":
        return Extraction(extract_html(data, source, title=title, charset=charset))
    if fmt == "markdown":
        return Extraction(extract_markdown(data, source, title=title, charset=charset))
    if fmt in ("json", "jsonl"):
        result = extract_json(data, source, title=title, text_path=text_path, title_path=title_path,
                              lines=fmt == "jsonl", charset=charset)
        return Extraction(result.documents, result.skipped)
    if fmt == "text":
        return Extraction(extract_text(data, source, title=title, charset=charset))
    raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
