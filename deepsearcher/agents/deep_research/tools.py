"""What DeepResearch can reach besides the collections: a web search provider, a page reader (the configured crawler,
one page at a time, cached per run) and the store's ``chunks_around`` to open a chunk in its document.

``DeepSearcher.query`` builds a ``ResearchTools`` per query (``QueryContext.research``); without one the agent works
on the collections alone. Nothing is sent to a search engine unless ``web_search`` is configured and not switched off.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from deepsearcher.errors import ConfigError, DeepSearcherError, SkipSource
from deepsearcher.events import EventCallback, QuerySaved, ignore_event
from deepsearcher.ingest.ids import bytes_hash
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.ingest.web import normalize_url, page_documents, url_key
from deepsearcher.protocols import Crawler, Embedder, VectorStore, WebSearch
from deepsearcher.registry import Registry
from deepsearcher.settings import LoaderSettings, Settings
from deepsearcher.types import Chunk, FetchedPage, LoadSummary

log = logging.getLogger(__name__)

ChunksAround = Callable[[str, Chunk, int], list[Chunk]]
"""``chunks_around(collection, chunk, window) -> chunks`` (``VectorStore.chunks_around``)."""
MAX_PASSAGES = 400
"""Passages of one page considered at most (a page of ~100k tokens)."""


@dataclass(frozen=True)
class PageRead:
    """A page read at query time.

    Attributes:
        url: the final URL (after redirects), what citations show.
        passages: the page's text split as a load would split it (source = ``url``); empty when it failed.
        error: why nothing was read ("" when it was).
    """

    url: str
    passages: list[Chunk] = field(default_factory=list)
    error: str = ""


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

    def __init__(self, crawler: Crawler, loader: LoaderSettings, splitter: Splitter) -> None:
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
            return PageRead(url, error=str(exc).split("\n")[0])
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


@dataclass(frozen=True)
class ResearchTools:
    """The reach of one research run beyond ``QueryContext.search``.

    Attributes:
        web: the web search provider, or None (web search off: nothing is sent to a search engine).
        pages: reads URLs of web results, or None (then web results cannot be opened).
        chunks_around: the store's neighbour query, or None (a store without it: chunks cannot be opened).
    """

    web: WebSearch | None = None
    pages: PageReader | None = None
    chunks_around: ChunksAround | None = None

    def close(self) -> None:
        """Release the web search provider's connections (providers with a ``close`` method)."""
        close = getattr(self.web, "close", None)
        if callable(close):
            close()


def build_tools(settings: Settings, registry: Registry, store: VectorStore, embedder: Embedder, *,
                web: bool, allow_private_urls: bool | None = None) -> ResearchTools:
    """The tools of one query: the store's ``chunks_around`` (when it has one); with ``web``, the configured web
    search provider and a page reader over the configured crawler (depth 0, one page; its rules apply unchanged).

    The pages read are URLs a search engine chose (or the redirects they lead to), so they may reach loopback,
    private or link-local addresses only with ``query.read_private_result_urls: true``; then ``allow_private_urls``
    is the caller's address rule (and so for ``--save-to``, which stores what the reader fetched): the HTTP server
    passes its resolved ``server.allow_private_urls``, applied to the crawler's options as for the server's loads
    (``ingest.web.crawler_options``: ``crawler.allow_private_urls: false`` always wins). None = the crawler
    setting.

    Raises:
        ConfigError: ``web`` is asked for but no ``web_search`` provider is configured, or a provider is unknown.
        ProviderError: a provider's optional dependency is missing.
    """
    from deepsearcher.ingest.load import make_splitter
    from deepsearcher.ingest.web import crawler_options

    around: ChunksAround | None = getattr(store, "chunks_around", None)
    if not web:
        return ResearchTools(chunks_around=around)
    if settings.web_search is None:
        raise ConfigError("web search is not configured, so --web cannot search the web",
                          hint="add a web_search: section to the config (docs/web-search.md), or drop --web")
    provider: WebSearch = registry.create("web_search", settings.web_search.resolved(settings.resolve_path))
    # a search engine chose these URLs: private addresses only when the operator opted in (query.read_private_
    # result_urls), and then only as far as the caller's rule allows
    private = allow_private_urls if settings.query.read_private_result_urls else False
    one_page = crawler_options(settings.crawler, private).model_copy(update={"max_depth": 0, "max_pages": 1})
    crawler: Crawler = registry.create("crawler", one_page.resolved(settings.resolve_path))
    reader = PageReader(crawler, settings.loader, make_splitter(settings, embedder))
    return ResearchTools(web=provider, pages=reader, chunks_around=around)


def save_pages(load: Callable[..., LoadSummary], tools: ResearchTools, collection: str, emit: EventCallback) -> None:
    """Store the pages a query read into ``collection`` through the one ingestion entry point (``load`` is
    ``DeepSearcher.load``), replayed by the page reader so nothing is fetched again; the outcome is a ``QuerySaved``
    event, never an exception."""
    pages = tools.pages.pages_read if tools.pages is not None else []
    if not pages:
        emit(QuerySaved(collection=collection, pages=0, chunks=0, error="no web page was read in this query"))
        return
    try:
        summary = load(pages, collection, f"Web pages read by deepsearcher queries ({pages[0]} …)",
                       on_event=ignore_event, crawler=tools.pages)
    except DeepSearcherError as exc:
        emit(QuerySaved(collection=collection, pages=0, chunks=0, error=str(exc).split("\n")[0]))
        return
    emit(QuerySaved(collection=collection, pages=len(summary.loaded) + len(summary.unchanged),
                    chunks=summary.chunks_written, error=""))
