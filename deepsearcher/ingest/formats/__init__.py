"""Per-format extractors that read the whole document: bytes -> Documents (raw text; normalise afterwards with
``deepsearcher.ingest.normalize.normalize_documents``).

Each module documents the library it uses and the measurement that chose it (``scripts/bench_fidelity.py``, table in
docs/benchmarks.md). Every extractor raises ``deepsearcher.ingest.loaders.SkipSource`` with a reason for a file it
cannot use, never a library's own exception.

``extract`` dispatches by file suffix, for the fidelity suite and for callers that already know the format; the
loader's magic-byte sniffing (``loaders.sniff``) stays in front of it in the load pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deepsearcher.ingest.formats.docx import extract_docx
from deepsearcher.ingest.formats.html import extract_html
from deepsearcher.ingest.formats.json_records import JsonExtraction, extract_json
from deepsearcher.ingest.formats.markdown import extract_markdown
from deepsearcher.ingest.formats.office import extract_epub, extract_xlsx
from deepsearcher.ingest.formats.pdf import extract_pdf
from deepsearcher.ingest.formats.pptx import extract_pptx
from deepsearcher.ingest.formats.text import decode, extract_text
from deepsearcher.types import Document

__all__ = ["Extraction", "extract", "extract_docx", "extract_epub", "extract_html", "extract_json",
           "extract_markdown", "extract_pdf", "extract_pptx", "extract_text", "extract_xlsx", "decode",
           "JsonExtraction"]

HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}


@dataclass(frozen=True)
class Extraction:
    """What one file gave: its Documents and, for JSON/JSONL, the records dropped by reason."""

    documents: list[Document]
    skipped_records: dict[str, int] = field(default_factory=dict)


def extract(data: bytes, source: str, *, suffix: str, title: str = "", charset: str | None = None,
            include_headers: bool = False, text_path: str = "text", title_path: str | None = "title") -> Extraction:
    """Extract one file by its suffix (lower-case, with the dot); unknown suffixes are read as text.

    Raises:
        SkipSource: the extractor's reason.
    """
    suffix = suffix.lower()
    if suffix == ".pdf":
        return Extraction(extract_pdf(data, source, title=title))
    if suffix == ".docx":
        return Extraction(extract_docx(data, source, title=title, include_headers=include_headers))
    if suffix == ".pptx":
        return Extraction(extract_pptx(data, source, title=title))
    if suffix == ".xlsx":
        return Extraction(extract_xlsx(data, source, title=title))
    if suffix == ".epub":
        return Extraction(extract_epub(data, source, title=title))
    if suffix in HTML_SUFFIXES:
        return Extraction(extract_html(data, source, title=title, charset=charset))
    if suffix in MARKDOWN_SUFFIXES:
        return Extraction(extract_markdown(data, source, title=title, charset=charset))
    if suffix in JSON_SUFFIXES:
        result = extract_json(data, source, title=title, text_path=text_path, title_path=title_path,
                              lines={".json": False}.get(suffix, True))
        return Extraction(result.documents, result.skipped)
    return Extraction(extract_text(data, source, title=title, charset=charset))
