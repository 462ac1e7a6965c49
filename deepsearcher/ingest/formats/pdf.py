"""PDF: pypdfium2 (PDFium, Chrome's PDF engine), one Document per page with text, page numbers kept.

Chosen by measurement on the fidelity suite (docs/benchmarks.md, "Ingestion fidelity"): raw text, pypdfium2 stored
all expected text on 10 of 11 fixtures with no noise, pypdf on 7 with NUL characters and ligature code points left
in, pdfminer (markitdown) on 7. PDFium opens RC4 and AES-128/256 files with an empty user password itself (pypdf
needs ``cryptography`` for AES), maps ligature glyphs to their letters, drops glyphs whose ToUnicode entry is U+0000,
and marks a hyphen at a line end with U+FFFE or U+0002 (the break removed): that marker becomes ``-`` plus a line
break here, so the normalisation stage decides between hyphenation and compound (``deepsearcher.ingest.normalize``, rule 3).

Any failure to open or read the file (a real user password, a truncated or corrupt file) is a ``SkipSource`` with
the reason: one bad PDF never stops a folder load. PDFium is not thread-safe (pypdfium2's documentation): calls are
serialised by a lock, so extraction threads wait for each other here; processes (the ray engine) run in parallel.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from deepsearcher.errors import SkipSource
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: PDFium's markers for a hyphen at the end of a line: FPDFText_GetUnicode gives U+0002, FPDFText_GetText U+FFFE.
PDFIUM_LINE_END_HYPHENS = ("\x02", "\ufffe")
_PDFIUM_LOCK = threading.Lock()


def extract_pdf(data: bytes, source: str, *, title: str = "") -> list[Document]:
    """Extract the text layer of every page.

    Args:
        data: the PDF file's bytes.
        source: path or URL, copied to every Document.
        title: fallback title when the PDF's information dictionary has none.

    Returns:
        One Document per page that has text (``page`` 1-based, ``metadata["format"] == "pdf"``).

    Raises:
        SkipSource: needs a password, unreadable or corrupt, or no page has a text layer (a scan).
    """
    with _PDFIUM_LOCK:
        return _extract(data, source, title)


def _extract(data: bytes, source: str, title: str) -> list[Document]:
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data, password="")
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise SkipSource("encrypted PDF that needs a password") from exc
        raise SkipSource(f"unreadable PDF ({exc})") from exc
    try:
        meta_title = (pdf.get_metadata_dict().get("Title") or "").strip()
        docs = []
        for number in range(1, len(pdf) + 1):
            text = _page_text(pdf, number - 1)
            if text.strip():
                docs.append(Document(text=text, source=source, title=meta_title or title, page=number,
                                     metadata={"format": "pdf"}))
    except pypdfium2.PdfiumError as exc:
        raise SkipSource(f"unreadable PDF page ({exc})") from exc
    finally:
        pdf.close()
    if not docs:
        raise SkipSource("no text layer in any page (scanned? run OCR first)")
    return docs


def _page_text(pdf: Any, index: int) -> str:
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            text = textpage.get_text_range()
        finally:
            textpage.close()
    finally:
        page.close()
    for marker in PDFIUM_LINE_END_HYPHENS:
        text = text.replace(marker, "-\n")
    return text
