"""Building the research tools of one query (web search provider, page reader over the configured crawler, the
store's neighbour query) and saving the pages a query read: composition that ``DeepSearcher.query`` (the one
composition root, ``deepsearcher.app``) does, kept beside it so ``app`` stays short. Used only by ``app``.

Agents receive what is built here as ``QueryContext.research`` (``agents.tools.ResearchTools``) and build nothing
themselves; nothing is sent to a search engine unless ``web_search`` is configured and not switched off.
"""

from __future__ import annotations

from typing import Callable

from deepsearcher.agents.tools import ChunksAround, ResearchTools
from deepsearcher.errors import ConfigError, DeepSearcherError, first_line
from deepsearcher.events import EventCallback, QuerySaved, ignore_event
from deepsearcher.ingest.load import make_splitter
from deepsearcher.ingest.page_reader import PageReader
from deepsearcher.ingest.web import crawler_options
from deepsearcher.protocols import Crawler, Embedder, VectorStore, WebSearch
from deepsearcher.registry import Registry
from deepsearcher.settings import Settings
from deepsearcher.types import LoadSummary


def research_tools(settings: Settings, registry: Registry, store: VectorStore, embedder: Embedder, *,
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
    reader = PageReader(crawler, settings.loader, make_splitter(settings.ingest, embedder))
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
        emit(QuerySaved(collection=collection, pages=0, chunks=0, error=first_line(exc)))
        return
    emit(QuerySaved(collection=collection, pages=len(summary.loaded) + len(summary.unchanged),
                    chunks=summary.chunks_written, error=""))
