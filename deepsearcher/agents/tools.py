"""What a research run can reach besides ``QueryContext.search``: a web search provider, a page reader and the
store's neighbour query, as plain protocol objects and callables.

The composition root (``deepsearcher.compose.research_tools``, called by ``DeepSearcher.query``) builds them from the
config; agents only receive them (``QueryContext.research``), so nothing in ``agents/`` builds a provider or imports
``ingest/``. Without tools an agent works on the collections alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from deepsearcher.protocols import Crawler, WebSearch
from deepsearcher.types import Chunk, PageRead

ChunksAround = Callable[[str, Chunk, int], list[Chunk]]
"""``chunks_around(collection, chunk, window) -> chunks`` (``VectorStore.chunks_around``)."""


@runtime_checkable
class Pages(Crawler, Protocol):
    """Reads web pages at query time, each URL once per run (``ingest.page_reader.PageReader``); also a ``Crawler``
    replaying the pages it fetched, so ``--save-to`` stores them without fetching them again."""

    def read(self, url: str) -> PageRead:
        """The page at ``url`` split into passages; never raises for a page problem (``PageRead.error``)."""
        ...

    @property
    def pages_read(self) -> list[str]:
        """URLs (as requested) whose page was read with text, in order."""
        ...


@dataclass(frozen=True)
class ResearchTools:
    """The reach of one research run beyond ``QueryContext.search``.

    Attributes:
        web: the web search provider, or None (web search off: nothing is sent to a search engine).
        pages: reads URLs of web results, or None (then web results cannot be opened).
        chunks_around: the store's neighbour query, or None (a store without it: chunks cannot be opened).
    """

    web: WebSearch | None = None
    pages: Pages | None = None
    chunks_around: ChunksAround | None = None

    def close(self) -> None:
        """Release the web search provider's connections (providers with a ``close`` method)."""
        close = getattr(self.web, "close", None)
        if callable(close):
            close()
