"""XLSX (openpyxl cell values) and EPUB (markitdown), chosen by measurement on the fidelity suite.

XLSX: markitdown goes through pandas and stores ``NaN`` for every empty cell and ``Unnamed: 1`` for missing headers
(noise in 2 of 2 fixtures); openpyxl's cached cell values have none of it. One Document per sheet (``page`` = sheet
number, the sheet name first), rows as `` | ``-joined non-empty cells.
EPUB: markitdown reads the spine in order (chapters, tables, footnote asides) and the title from the OPF metadata;
its text misses nothing on the suite once the normalisation stage removes soft hyphens.
"""

from __future__ import annotations

import io
import logging

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.sections import HEADINGS, LINE_ROWS, markdown_headings
from deepsearcher.types import Document

log = logging.getLogger(__name__)


def extract_xlsx(data: bytes, source: str, *, title: str = "") -> list[Document]:
    """One Document per sheet with any value (formulas give their cached results, as Excel saved them).

    Raises:
        SkipSource: unreadable workbook, or no cell has a value.
    """
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises InvalidFileException, BadZipFile, KeyError...
        raise SkipSource(f"unreadable XLSX ({type(exc).__name__}: {exc})") from exc
    docs = []
    try:
        for number, sheet in enumerate(workbook.worksheets, start=1):
            numbered = [(at, " | ".join(str(v) for v in row if v is not None and str(v).strip()))
                        for at, row in enumerate(sheet.iter_rows(values_only=True), start=1)]
            numbered = [(at, r) for at, r in numbered if r]
            if numbered:
                # LINE_ROWS: the sheet row of each text line (the first line is the sheet's name), for a chunk's rows
                docs.append(Document(text="\n".join([sheet.title, *(r for _, r in numbered)]), source=source,
                                     title=(workbook.properties.title or "").strip() or title, page=number,
                                     metadata={"format": "xlsx", "sheet": sheet.title,
                                               LINE_ROWS: [0, *(at for at, _ in numbered)]}))
    finally:
        workbook.close()
    if not docs:
        raise SkipSource("no cell has a value")
    return docs


def extract_epub(data: bytes, source: str, *, title: str = "") -> list[Document]:
    """The book's text in spine order, via markitdown's EPUB converter.

    Raises:
        SkipSource: markitdown is missing or cannot read the file, or the book holds no text.
    """
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as book:
            book.getinfo("META-INF/container.xml")
    except (zipfile.BadZipFile, KeyError) as exc:  # markitdown would store such bytes as text
        raise SkipSource(f"unreadable EPUB (not an EPUB container: {exc})") from exc
    try:
        from markitdown import MarkItDown, StreamInfo
    except ModuleNotFoundError as exc:
        raise SkipSource("EPUB needs markitdown (pip install markitdown)") from exc
    try:
        result = MarkItDown(enable_plugins=False).convert_stream(io.BytesIO(data),
                                                                stream_info=StreamInfo(extension=".epub"))
    except Exception as exc:  # markitdown wraps converter errors in its own exception types
        raise SkipSource(f"unreadable EPUB ({type(exc).__name__}: {exc})") from exc
    text = result.text_content or ""
    if not text.strip():
        raise SkipSource("no text in the book")
    headings = markdown_headings(text)  # markitdown writes the chapters' headings as Markdown
    return [Document(text=text, source=source, title=(result.title or "").strip() or title,
                     metadata={"format": "epub", **({HEADINGS: headings} if headings else {})})]
