"""HTML: the page's main container read whole (html-text), else trafilatura with recall-oriented settings.

Measured on the fidelity suite (docs/benchmarks.md): trafilatura, default or ``favor_recall``, drops a bare ``<div>``
line inside ``<article>`` (adbar/trafilatura #622); its ``html2txt``, justext and markitdown keep navigation, footer
or cookie text. When the page marks its main content (one ``<main>``, one ``role="main"`` element or one
``<article>``), that container is the content by the author's own markup, so all of its text is kept, laid out by
html-text (block elements on their own lines, scripts and styles removed). Pages without such markup go to
trafilatura with ``favor_recall=True`` (tables kept, comments dropped), and so does a page whose marked container
holds under a quarter of the page's text when trafilatura finds more (an ``<article>`` used for one teaser card).
"""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.formats.text import decode
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: A marked main container with less than this share of the page's text is checked against trafilatura.
MIN_CONTAINER_SHARE = 0.25


def extract_html(data: bytes, source: str, *, title: str = "", charset: str | None = None) -> list[Document]:
    """Extract a page's main text as one Document (``metadata["extractor"]`` names the path taken).

    Args:
        data: the page's bytes.
        source: path or URL (a URL also helps trafilatura's metadata).
        title: fallback title when the page has no ``<title>``.
        charset: the HTTP header's charset, if any.

    Raises:
        SkipSource: undecodable, or no text found.
    """
    import lxml.html

    html = decode_html(data, charset)
    try:
        tree = lxml.html.document_fromstring(html)
    except Exception as exc:  # lxml raises ParserError/XMLSyntaxError on empty or odd documents
        raise SkipSource(f"unreadable HTML ({type(exc).__name__}: {exc})") from exc
    page_title = (tree.findtext(".//title") or "").strip()
    text, extractor = "", "trafilatura"
    main = _main_container(tree)
    if main is not None:
        import html_text

        text, extractor = html_text.extract_text(main, guess_layout=True), "main-container"
        if len(text) < MIN_CONTAINER_SHARE * len(html_text.extract_text(tree, guess_layout=True)):
            fallback = _trafilatura(html, source)
            if len(fallback) > len(text):
                text, extractor = fallback, "trafilatura"
    else:
        text = _trafilatura(html, source)
    if not text.strip():
        raise SkipSource("no main text found in HTML")
    return [Document(text=text, source=source, title=page_title or title,
                     metadata={"format": "html", "content_type": "text/html", "extractor": extractor})]


def _main_container(tree: Any) -> Any:
    for xpath in ("//main", "//*[@role='main']", "//article"):
        found = tree.xpath(xpath)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            return None  # several articles: a listing page; let trafilatura choose
    return None


def _trafilatura(html: str, source: str) -> str:
    import trafilatura

    return trafilatura.extract(html, favor_recall=True, include_tables=True, include_comments=False,
                               url=source if source.startswith("http") else None) or ""


def decode_html(data: bytes, charset: str | None = None) -> str:
    """Decode HTML bytes: byte-order mark, then the HTTP header charset, then ``<meta charset>``, then UTF-8, then
    detection (``formats.text.decode``) — the WHATWG order, so UTF-8 served with no charset anywhere is never
    mojibake.

    WHATWG maps the labels iso-8859-1 / us-ascii to windows-1252, which browsers (and pages) actually use.

    Raises:
        SkipSource: no encoding decodes the bytes.
    """
    from bs4.dammit import EncodingDetector

    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return decode(data)[0]
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
    return decode(data)[0]


_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252",
                   "ascii": "cp1252"}
