"""HTML: trafilatura with recall-oriented settings, on the page with bare text made into paragraphs.

Measured on the fidelity suite (docs/benchmarks.md): trafilatura, default or ``favor_recall``, keeps the content
and drops the page's chrome best, but it drops text that sits directly in a ``<div>`` or ``<section>`` instead of a
``<p>``: a bare ``<div>`` line inside ``<article>`` (adbar/trafilatura #622), a line between a heading and a
paragraph. So before trafilatura runs, such text becomes a paragraph (``bare_text_to_paragraphs``): a ``<div>``
holding only text and inline elements becomes a ``<p>``, and text between block elements of a ``div``, ``section``,
``article`` or ``main`` is wrapped in a ``<p>``. Reading the page's ``<main>`` or ``<article>`` whole instead (with
html-text) kept those lines but also stored MediaWiki's page tools, language list and categories, which sit inside
``<main>`` (html/wiki_like.html; on data/html/Duck.html 27 kB of text instead of 23 kB, 136 language names among
it). html2txt, justext, readability-lxml and markitdown keep navigation or drop paragraphs. Tables are kept, comments
dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.formats.text import decode
from deepsearcher.ingest.sections import HEADINGS
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: Elements that start a block: text next to them is not part of an inline run.
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "details", "dialog", "dd", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "li",
    "main", "nav", "ol", "p", "pre", "section", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})
#: Containers whose bare text (between block children) is wrapped in paragraphs.
CONTAINER_TAGS = ("div", "section", "article", "main")


def extract_html(data: bytes, source: str, *, title: str = "", charset: str | None = None) -> list[Document]:
    """Extract a page's main text as one Document.

    Args:
        data: the page's bytes.
        source: path or URL (a URL also helps trafilatura's metadata).
        title: fallback title when the page has no ``<title>``.
        charset: the HTTP header's charset, if any.

    Raises:
        SkipSource: undecodable, or no text found.
    """
    import lxml.html
    import trafilatura

    try:
        tree = lxml.html.document_fromstring(decode_html(data, charset))
    except Exception as exc:  # lxml raises ParserError/XMLSyntaxError on empty or odd documents
        raise SkipSource(f"unreadable HTML ({type(exc).__name__}: {exc})") from exc
    page_title = " ".join((tree.findtext(".//title") or "").split())
    headings = [[int(h.tag[1]), " ".join(h.text_content().split())] for h in tree.iter("h1", "h2", "h3", "h4", "h5",
                                                                                       "h6")]
    headings = [h for h in headings if h[1]]
    bare_text_to_paragraphs(tree)
    text = trafilatura.extract(tree, favor_recall=True, include_tables=True, include_comments=False,
                               url=source if source.startswith("http") else None) or ""
    if not text.strip():
        raise SkipSource("no main text found in HTML")
    return [Document(text=text, source=source, title=page_title or title,
                     metadata={"format": "html", "content_type": "text/html",
                               **({HEADINGS: headings} if headings else {})})]


def bare_text_to_paragraphs(tree: Any) -> None:
    """Make text that sits directly in a container a paragraph, in place (see the module docstring)."""
    from lxml import etree

    for container in list(tree.iter(*CONTAINER_TAGS)):
        children = [c for c in container if isinstance(c.tag, str)]
        if not any(c.tag in BLOCK_TAGS for c in children):
            if container.tag == "div" and container.text_content().strip():
                container.tag = "p"  # text and inline elements only: a paragraph by another name
            continue
        if container.text and container.text.strip():
            para = etree.Element("p")
            para.text, container.text = container.text, None
            container.insert(0, para)
        for child in children:
            if child.tag in BLOCK_TAGS and child.tail and child.tail.strip():
                para = etree.Element("p")
                para.text, child.tail = child.tail, None
                child.addnext(para)


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
