"""Candidate extractors for scripts/bench_fidelity.py: each maps (fixture bytes, suffix) to the text it would store.

Every candidate reads the whole document with its library's documented text API, no tuning beyond what the section
in docs/benchmarks.md names. A candidate raises when its library fails; the bench counts that per fixture.
"""

from __future__ import annotations

import io
import os
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("DO_NOT_TRACK", "1")

Candidate = Callable[[bytes, str, dict], str]


class Skipped(Exception):
    """The candidate skipped the file on purpose (deepsearcher's SkipSource)."""


def builtin(data: bytes, suffix: str, options: dict) -> str:
    """The built-in loader as the load pipeline runs it: ``loaders.load_bytes`` then the normalisation stage."""
    from deepsearcher.errors import SkipSource
    from deepsearcher.ingest.loaders import load_bytes
    from deepsearcher.ingest.normalize import normalize_stage
    from deepsearcher.ingest.options import LoaderOptions

    settings = LoaderOptions(json_text_path=options.get("text_path", "text"),
                              json_title_path=options.get("title_path", "title"),
                              docx_headers_footers=options.get("include_headers", False))
    try:
        docs = normalize_stage(load_bytes(data, "fixture" + suffix, suffix=suffix, options=settings), "fixture")
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc
    return "\n\n".join(d.text for d in docs)


def _before_13() -> Any:
    """The loader of main before issue #13 (commit b09afdc), read from git into a throw-away module."""
    import importlib.util
    import subprocess
    import sys
    import tempfile

    if "_loaders_b09afdc" in sys.modules:
        return sys.modules["_loaders_b09afdc"]
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:deepsearcher/ingest/loaders.py"], capture_output=True,
                                text=True, check=True, cwd=Path(__file__).resolve().parent).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise Skipped(f"git show {BEFORE} failed: {exc}") from exc
    path = Path(tempfile.mkdtemp()) / "_loaders_b09afdc.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_loaders_b09afdc", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["_loaders_b09afdc"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


#: main before issue #13
BEFORE = "b09afdc"


def before(data: bytes, suffix: str, options: dict, normalise: bool = False) -> str:
    """The loader before issue #13 (its own binary check included), optionally followed by today's normalisation."""
    from types import SimpleNamespace

    from deepsearcher.ingest.normalize import normalize_documents

    old = _before_13()
    settings = SimpleNamespace(json_text_key="text", json_title_key="title")
    try:
        docs = old.load_bytes(data, "fixture" + suffix, suffix=suffix, options=settings)
    except Exception as exc:
        if type(exc).__name__ == "SkipSource":
            raise Skipped(str(exc)) from exc
        raise
    if normalise:
        if suffix == ".pdf":  # the old PDF loader does not tag its Documents; the hyphenation rule needs the tag
            docs = [replace(d, metadata={**d.metadata, "format": "pdf"}) for d in docs]
        docs = normalize_documents(docs)
    return "\n\n".join(d.text for d in docs)


def before_normalised(data: bytes, suffix: str, options: dict) -> str:
    """The loader before issue #13 followed by the normalisation stage."""
    return before(data, suffix, options, normalise=True)


def new_formats(data: bytes, suffix: str, options: dict, skip: tuple[str, ...] = (), nfkc: bool = False) -> str:
    """The per-format extractors (``deepsearcher.ingest.formats``) followed by normalisation (``skip``: rules
    switched off; ``nfkc``: plain NFKC instead of the targeted compatibility mapping)."""
    from deepsearcher.errors import SkipSource
    from deepsearcher.ingest.formats import extract
    from deepsearcher.ingest.normalize import normalize_documents

    try:
        docs = normalize_documents(extract(data, "fixture" + suffix, suffix=suffix, **options).documents, skip=skip)
    except SkipSource as exc:
        raise Skipped(str(exc)) from exc
    return "\n\n".join(unicodedata.normalize("NFKC", d.text) if nfkc else d.text for d in docs)


def new_formats_raw(data: bytes, suffix: str, options: dict) -> str:
    """The per-format extractors without normalisation (to measure what the stage adds)."""
    from deepsearcher.errors import SkipSource
    from deepsearcher.ingest.formats import extract

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
    from deepsearcher.ingest.formats import decode_html

    return decode_html(data)


def html_text_main_container(data: bytes, suffix: str, options: dict) -> str:
    """The page's one <main> / role=main / <article> read whole by html-text, else trafilatura favor_recall (the
    prep branch's HTML choice, kept to show why it was replaced)."""
    import html_text
    import lxml.html
    import trafilatura

    tree = lxml.html.document_fromstring(_html(data))
    for xpath in ("//main", "//*[@role='main']", "//article"):
        found = tree.xpath(xpath)
        if len(found) == 1:
            return html_text.extract_text(found[0], guess_layout=True)
        if found:
            break
    return trafilatura.extract(_html(data), favor_recall=True, include_tables=True, include_comments=False) or ""


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


_UNSTRUCTURED: dict[str, dict[str, str]] = {}


def unstructured_fast(data: bytes, suffix: str, options: dict) -> str:
    """unstructured's ``partition(strategy="fast")``, run by scripts/unstructured_partition.py under the interpreter
    ``UNSTRUCTURED_PYTHON`` names (its own venv), once for the whole suite."""
    import hashlib
    import json
    import subprocess
    import tempfile

    python = os.environ.get("UNSTRUCTURED_PYTHON")
    if not python:
        raise Skipped("UNSTRUCTURED_PYTHON is not set")
    def partition(files: dict[str, bytes]) -> None:
        folder = Path(tempfile.mkdtemp())
        paths = {}
        for name, content in files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            paths[str(path)] = hashlib.sha256(content).hexdigest()
        script = Path(__file__).resolve().parent / "unstructured_partition.py"
        done = subprocess.run([python, str(script), *paths], capture_output=True, text=True, timeout=3600,
                              env={**os.environ, "PYTHONPATH": ""})
        _UNSTRUCTURED.update({paths[p]: r for p, r in json.loads(done.stdout or "{}").items()})

    key = hashlib.sha256(data).hexdigest()
    if not _UNSTRUCTURED:  # one process for the whole suite: unstructured's import takes seconds
        from tests.fidelity.build import all_fixtures

        partition({f.name: f.data for f in all_fixtures()})
    if key not in _UNSTRUCTURED:  # an encrypted PDF (random keys: other bytes each build)
        partition({"file" + suffix: data})
    result = _UNSTRUCTURED.get(key, {"error": "Error: not run"})
    if "error" in result:
        kind, _, message = result["error"].partition(": ")
        raise type(kind, (Exception,), {})(message)  # reported as the library's own exception type
    return result["text"]


#: format -> [(candidate name, function)]; "deepsearcher ..." rows are the project's own paths.
OURS: list[tuple[str, Candidate]] = [("before #13 (b09afdc)", before),
                                     ("before #13 + normalise", before_normalised),
                                     ("extractors without normalise", new_formats_raw),
                                     ("**deepsearcher builtin (load_bytes + normalise)**", builtin)]
UNSTRUCTURED = ("unstructured (fast)", unstructured_fast)
CANDIDATES: dict[str, list[tuple[str, Candidate]]] = {
    "pdf": [("pypdf", pypdf_text), ("pypdfium2", pypdfium2_text), ("markitdown (pdfminer)", markitdown), UNSTRUCTURED],
    "docx": [("python-docx API", python_docx_api), ("mammoth", mammoth_text), ("docx2python", docx2python_text),
             ("markitdown (mammoth)", markitdown), UNSTRUCTURED],
    "pptx": [("python-pptx API (top-level shapes)", python_pptx_api), ("markitdown", markitdown), UNSTRUCTURED],
    "xlsx": [("openpyxl cells", openpyxl_cells), ("markitdown (pandas)", markitdown), UNSTRUCTURED],
    "html": [("trafilatura default", trafilatura_default),
             ("trafilatura favor_recall + formatting", trafilatura_recall),
             ("trafilatura html2txt", trafilatura_html2txt), ("readability-lxml + html-text", readability_html_text),
             ("html-text on `<main>`/`<article>`", html_text_main_container),
             ("justext", justext_text), ("markitdown", markitdown), UNSTRUCTURED],
    "md": [("charset-normalizer", charset_normalizer_text), ("markitdown", markitdown), UNSTRUCTURED],
    "txt": [("charset-normalizer", charset_normalizer_text), ("markitdown", markitdown), UNSTRUCTURED],
    "json": [("markitdown", markitdown), UNSTRUCTURED],
    "epub": [("markitdown", markitdown), UNSTRUCTURED],
}
