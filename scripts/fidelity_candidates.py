"""Candidate extractors for scripts/bench_fidelity.py: each maps (fixture bytes, suffix) to the text it would store.

Every candidate reads the whole document with its library's documented text API, no tuning beyond what the section
in docs/benchmarks.md names. A candidate raises when its library fails; the bench counts that per fixture.
"""

from __future__ import annotations

import io
import os
import unicodedata
from dataclasses import replace
from typing import Callable

os.environ.setdefault("DO_NOT_TRACK", "1")

Candidate = Callable[[bytes, str, dict], str]


class Skipped(Exception):
    """The candidate skipped the file on purpose (deepsearcher's SkipSource)."""


def builtin(data: bytes, suffix: str, options: dict) -> str:
    """The loader on main today: ``deepsearcher.ingest.loaders.load_bytes``."""
    from deepsearcher.ingest.loaders import SkipSource, load_bytes

    try:
        return "\n\n".join(d.text for d in load_bytes(data, "fixture" + suffix, suffix=suffix))
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc


def builtin_normalised(data: bytes, suffix: str, options: dict) -> str:
    """Today's loader followed by the normalisation stage (``deepsearcher.ingest.normalize``)."""
    from deepsearcher.ingest.loaders import SkipSource, load_bytes
    from deepsearcher.ingest.normalize import normalize_documents

    try:
        docs = load_bytes(data, "fixture" + suffix, suffix=suffix)
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc
    if suffix == ".pdf":  # today's PDF loader does not tag its Documents; the hyphenation rule needs the tag
        docs = [replace(d, metadata={**d.metadata, "format": "pdf"}) for d in docs]
    return "\n\n".join(d.text for d in normalize_documents(docs))


def new_formats(data: bytes, suffix: str, options: dict, skip: tuple[str, ...] = (), nfkc: bool = False) -> str:
    """The new per-format extractors (``deepsearcher.ingest.formats``) followed by normalisation (``skip``: rules
    switched off; ``nfkc``: plain NFKC instead of the targeted compatibility mapping)."""
    from deepsearcher.ingest.formats import extract
    from deepsearcher.ingest.loaders import SkipSource
    from deepsearcher.ingest.normalize import normalize_documents

    try:
        docs = normalize_documents(extract(data, "fixture" + suffix, suffix=suffix, **options).documents, skip=skip)
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc
    return "\n\n".join(unicodedata.normalize("NFKC", d.text) if nfkc else d.text for d in docs)


def new_formats_raw(data: bytes, suffix: str, options: dict) -> str:
    """The new per-format extractors without normalisation (to measure what the stage adds)."""
    from deepsearcher.ingest.formats import extract
    from deepsearcher.ingest.loaders import SkipSource

    try:
        return "\n\n".join(d.text for d in extract(data, "fixture" + suffix, suffix=suffix, **options).documents)
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc


def markitdown(data: bytes, suffix: str, options: dict) -> str:
    from markitdown import MarkItDown, StreamInfo

    return MarkItDown(enable_plugins=False).convert_stream(io.BytesIO(data),
                                                           stream_info=StreamInfo(extension=suffix)).text_content


def pypdf_text(data: bytes, suffix: str, options: dict) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt("")
    return "\n\n".join(page.extract_text() or "" for page in reader.pages)


def pypdfium2_text(data: bytes, suffix: str, options: dict) -> str:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(data, password="")
    try:
        return "\n\n".join(pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf)))
    finally:
        pdf.close()


def python_docx_api(data: bytes, suffix: str, options: dict) -> str:
    """python-docx's public API: body paragraphs and tables in order (``iter_inner_content``), cell text."""
    import docx
    from docx.table import Table

    parts = []
    for block in docx.Document(io.BytesIO(data)).iter_inner_content():
        if isinstance(block, Table):
            parts.extend(" | ".join(c.text for c in row.cells) for row in block.rows)
        else:
            parts.append(block.text)
    return "\n\n".join(parts)


def mammoth_text(data: bytes, suffix: str, options: dict) -> str:
    import mammoth

    return mammoth.extract_raw_text(io.BytesIO(data)).value


def docx2python_text(data: bytes, suffix: str, options: dict) -> str:
    from docx2python import docx2python

    with docx2python(io.BytesIO(data)) as result:
        return result.text


def python_pptx_api(data: bytes, suffix: str, options: dict) -> str:
    """python-pptx: top-level shapes' text frames and tables (what most loaders do)."""
    from pptx import Presentation

    parts = []
    for slide in Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
            if getattr(shape, "has_table", False):
                parts.extend(" | ".join(c.text for c in row.cells) for row in shape.table.rows)
    return "\n\n".join(parts)


def openpyxl_cells(data: bytes, suffix: str, options: dict) -> str:
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    parts = []
    for ws in wb.worksheets:
        parts.append(ws.title)
        for row in ws.iter_rows(values_only=True):
            cells = [str(v) for v in row if v is not None]
            if cells:
                parts.append(" | ".join(cells))
    return "\n".join(parts)


def _html(data: bytes) -> str:
    from deepsearcher.ingest.loaders import decode_html

    return decode_html(data)


def trafilatura_default(data: bytes, suffix: str, options: dict) -> str:
    import trafilatura

    return trafilatura.extract(_html(data), include_tables=True, include_comments=False) or ""


def trafilatura_recall(data: bytes, suffix: str, options: dict) -> str:
    import trafilatura

    return trafilatura.extract(_html(data), favor_recall=True, include_tables=True, include_comments=False,
                               include_formatting=True) or ""


def trafilatura_html2txt(data: bytes, suffix: str, options: dict) -> str:
    import trafilatura

    return trafilatura.html2txt(_html(data))


def justext_text(data: bytes, suffix: str, options: dict) -> str:
    import justext

    paragraphs = justext.justext(_html(data).encode("utf-8"), justext.get_stoplist("English"), encoding="utf-8")
    return "\n\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def readability_html_text(data: bytes, suffix: str, options: dict) -> str:
    """readability-lxml's article summary laid out as text by html-text."""
    import html_text
    from readability import Document as Readable

    return html_text.extract_text(Readable(_html(data)).summary(), guess_layout=True)


def charset_normalizer_text(data: bytes, suffix: str, options: dict) -> str:
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return str(best) if best is not None else ""


#: format -> [(candidate name, function)]; "deepsearcher ..." rows are the project's own paths.
OURS: list[tuple[str, Candidate]] = [("deepsearcher today (load_bytes)", builtin),
                                     ("deepsearcher today + normalise", builtin_normalised),
                                     ("new extractors (raw)", new_formats_raw),
                                     ("**new extractors + normalise**", new_formats)]
CANDIDATES: dict[str, list[tuple[str, Candidate]]] = {
    "pdf": [("pypdf", pypdf_text), ("pypdfium2", pypdfium2_text), ("markitdown (pdfminer)", markitdown)],
    "docx": [("python-docx API", python_docx_api), ("mammoth", mammoth_text), ("docx2python", docx2python_text),
             ("markitdown (mammoth)", markitdown)],
    "pptx": [("python-pptx API (top-level shapes)", python_pptx_api), ("markitdown", markitdown)],
    "xlsx": [("openpyxl cells", openpyxl_cells), ("markitdown (pandas)", markitdown)],
    "html": [("trafilatura default", trafilatura_default),
             ("trafilatura favor_recall + formatting", trafilatura_recall),
             ("trafilatura html2txt", trafilatura_html2txt), ("readability-lxml + html-text", readability_html_text),
             ("justext", justext_text), ("markitdown", markitdown)],
    "md": [("charset-normalizer", charset_normalizer_text), ("markitdown", markitdown)],
    "txt": [("charset-normalizer", charset_normalizer_text), ("markitdown", markitdown)],
    "json": [("markitdown", markitdown)],
    "epub": [("markitdown", markitdown)],
}
