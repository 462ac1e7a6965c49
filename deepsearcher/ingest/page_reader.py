"""Reading single web pages at query time: the configured crawler (depth 0, one page) and the load splitter, so a
page read by DeepResearch's ``read`` action is split exactly as a load would store it.

Built by the composition root (``deepsearcher.compose.research_tools``) and handed to agents as
``agents.tools.ResearchTools.pages``.
"""

from __future__ import annotations

import logging
from typing import Iterator, Sequence

from deepsearcher.errors import DeepSearcherError, SkipSource, first_line
from deepsearcher.events import EventCallback, ignore_event
from deepsearcher.ingest.ids import bytes_hash
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.ingest.web import normalize_url, page_documents, url_key
from deepsearcher.protocols import Crawler
from deepsearcher.ingest.options import LoaderOptions
from deepsearcher.types import FetchedPage, PageRead

log = logging.getLogger(__name__)

MAX_PASSAGES = 400
"""Passages of one page considered at most (a page of ~100k tokens)."""


class PageReader:
    """Read web pages through the configured crawler (depth 0, one page), each URL once per run.

    The crawler's own rules apply unchanged: robots.txt, size caps, content types, timeouts and (with the hardened
    crawler) the private-address rule. The reader is also a ``Crawler`` that replays the pages it fetched, which is
    how ``--save-to`` stores them through the one ingestion entry point without fetching them again.

    Args:
        crawler: the crawler provider, built with ``max_depth: 0`` and ``max_pages: 1``.
        loader: format-loader settings (HTML, PDF, … of the fetched bytes).
        splitter: the load splitter (so passages are the chunks a load of the page would store).
    """

    def __init__(self, crawler: Crawler, loader: LoaderOptions, splitter: Splitter) -> None:
        self.crawler = crawler
        self.loader = loader
        self.splitter = splitter
        self._fetched: dict[str, FetchedPage] = {}
        self._read: dict[str, PageRead] = {}

    def read(self, url: str) -> PageRead:
        """The page at ``url`` (from the cache when read before in this run); never raises for a page problem."""
        try:
            key = url_key(normalize_url(url))
        except ValueError:
            return PageRead(url, error="not an http(s) URL")
        if key not in self._read:
            self._read[key] = self._fetch(url, key)
        return self._read[key]

    def _fetch(self, url: str, key: str) -> PageRead:
        page: FetchedPage | None = None
        try:
            for got in self.crawler.crawl([url], ignore_event):
                if not got.duplicate:
                    page = got
                    break
        except DeepSearcherError as exc:  # the crawler provider as a whole failed (e.g. a refused Firecrawl key)
            return PageRead(url, error=first_line(exc))
        if page is None:
            return PageRead(url, error="the crawler returned no page")
        self._fetched[key] = page
        if page.error:
            return PageRead(page.url, error=page.error)
        try:
            passages = self.splitter.split(page_documents(page, self.loader), bytes_hash(page.content))
        except SkipSource as exc:
            return PageRead(page.url, error=str(exc))
        except (ValueError, UnicodeError, RuntimeError, KeyError) as exc:  # as the load pipeline treats a loader
            log.debug("reading %s failed", page.url, exc_info=True)
            return PageRead(page.url, error=f"{type(exc).__name__}: {exc}")
        if not passages:
            return PageRead(page.url, error="no text extracted")
        return PageRead(page.url, passages[:MAX_PASSAGES])

    @property
    def pages_read(self) -> list[str]:
        """URLs (as requested) whose page was read with text, in order."""
        return [read.url for read in self._read.values() if not read.error]

    def crawl(self, start_urls: Sequence[str], on_event: EventCallback) -> Iterator[FetchedPage]:
        """Replay the fetched pages of ``start_urls`` (the ``Crawler`` protocol); URLs never fetched are fetched."""
        for url in start_urls:
            try:
                key = url_key(normalize_url(url))
            except ValueError:
                yield FetchedPage(url, url, error="not an http(s) URL")
                continue
            if key not in self._fetched:
                self.read(url)
            page = self._fetched.get(key)
            yield FetchedPage(url, url, error="the crawler returned no page") if page is None else \
                FetchedPage(url, page.url, page.content, page.content_type, page.charset, page.title, page.error)
