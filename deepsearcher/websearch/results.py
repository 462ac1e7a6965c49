"""Provider hits -> cleaned ``WebResult`` list: plain-text snippets, http(s) URLs only, one result per page, capped.

URL identity is the crawler's (``deepsearcher.ingest.web.normalize_url`` and ``url_key``), so a result and the page the
crawler later reads for it are the same page: ``HTTPS://Example.org/a/?utm_source=x#top`` and
``https://example.org/a`` are one result.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import Iterable

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning

from deepsearcher.ingest.web import normalize_url, url_key
from deepsearcher.websearch.base import WebResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    """One result as a provider returned it, before cleaning (fields may hold HTML and entities)."""

    title: str
    url: str
    snippet: str
    published: str | None = None


def clean_text(text: str) -> str:
    """Plain text of an HTML fragment: tags dropped, entities resolved, white space collapsed to single spaces.

    Brave marks query words with ``<strong>``; SearXNG engines pass through ``&amp;`` and the odd ``<b>``. Tags are
    joined without a separator so ``<strong>duck</strong>s`` stays ``ducks``.
    """
    if not text:
        return ""
    if "<" in text or "&" in text:
        with warnings.catch_warnings():  # a snippet that looks like a URL or file name is still just text
            warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
            text = BeautifulSoup(text, "html.parser").get_text()
    return " ".join(text.split())


def finish(hits: Iterable[Hit], provider: str, max_results: int) -> list[WebResult]:
    """Clean, filter and deduplicate ``hits`` in their order; stop at ``max_results``.

    Hits whose URL is not http(s) with a host (``javascript:``, ``ftp:``, relative links, blank) are dropped; of hits
    naming the same page only the first is kept; ranks are 1-based positions in the returned list.
    """
    out: list[WebResult] = []
    seen: set[str] = set()
    for hit in hits:
        try:
            url = normalize_url(hit.url)
        except ValueError:
            log.debug("%s: dropped a result with a non-http(s) URL %r", provider, hit.url)
            continue
        key = url_key(url)
        if key in seen:
            continue
        seen.add(key)
        published = (hit.published or "").strip() or None
        out.append(WebResult(clean_text(hit.title), url, clean_text(hit.snippet), provider, len(out) + 1, published))
        if len(out) >= max_results:
            break
    return out
