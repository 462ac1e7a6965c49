"""The provider protocols, in one module: what an embedder, chat model, vector store, loader, crawler, web search
provider must implement (the ``Agent`` protocol sits beside the ``QueryContext`` it runs on, in
``deepsearcher.agents.base``).

Built-ins and plugins implement the same protocols and register the same way (``deepsearcher.registry``);
``DeepSearcher(settings, embedder=…, store=…, llm=…)`` accepts any object that satisfies them.
``deepsearcher.testing`` has a fake of each (hash embedder, in-memory store, scripted chat model) and the
``VectorStore`` conformance suite every store must pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np
from pydantic import BaseModel

from deepsearcher.events import EventCallback
from deepsearcher.filters import SearchFilter
from deepsearcher.types import (
    ChatResult, Chunk, CollectionInfo, Document, FetchedPage, Hit, Message, SearchMode, SearchPlan, StoreCapabilities,
    TokenCallback, WebResult,
)

__all__ = ["ChatModel", "ChatResult", "Crawler", "Embedder", "Loader", "Message", "SearchMode",
           "TokenCallback", "VectorStore", "WebSearch"]

@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (collections use the COSINE metric).

    Attributes:
        model_name: identifier recorded in each collection's properties; a collection refuses another one.
    """

    model_name: str

    @property
    def dimension(self) -> int:
        """Vector length d."""
        ...

    @property
    def max_tokens(self) -> int | None:
        """Longest input (in the model's tokens) embedded without truncation, or None when unknown."""
        ...

    def tokenizer(self) -> Any | None:
        """A Hugging Face or Rust ``tokenizers`` tokenizer matching the model, or None (the splitter then counts
        characters / 4)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed chunks: float32 array of shape (len(texts), dimension), rows L2-normalised.

        Raises:
            ProviderError: the model cannot be loaded or the embedding service failed.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query: float32 array of shape (dimension,), L2-normalised.

        Raises:
            ProviderError: as ``embed_documents``.
        """
        ...


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion model.

    Attributes:
        name: model identifier shown in logs and usage ("gpt-4o-mini", "scripted", ...).

    Optional members, read with ``getattr`` by ``deepsearcher.llm.window.resolve_window`` (every built-in provider has
    them; a model without them gets the documented defaults):

    - ``max_tokens: int``: the configured completion limit per call;
    - ``context_window() -> int | tuple[int, str] | None``: the window in tokens (prompt + reply), optionally with
      where it was read, None when unknown;
    - ``count_tokens(text) -> int | None``: tokens of ``text`` by the model's tokenizer, None when it has none.
    """

    name: str

    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Complete ``messages``.

        Args:
            messages: the conversation, OpenAI shape.
            schema: pydantic model the reply should follow; providers ask the server for JSON-schema output where it
                supports it. The reply is still parsed and validated by the caller.
            on_token: when given, the reply is streamed and each content delta is passed here as it arrives. When
                it raises ``StopReply``, stop generating (close the stream) and return the text so far, finish
                reason "stop" (a model that does not catch it ends the call with it: ``ask_text`` then keeps the
                text it streamed).
            max_tokens: the completion limit of this call (None: the configured one); the agents lower it to fit the
                window and the token budget, and raise it once for a structured reply that was cut off.

        Returns:
            The reply; ``finish_reason == "length"`` when it was cut at the limit.

        Raises:
            ContextWindowError: the prompt does not fit the model's context window (``limit`` set when known).
            ProviderError: the server is unreachable, refused the request, or kept failing after the retries.
        """
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Chunk storage with dense (and, where ``capabilities`` says so, BM25 and hybrid) search.

    Collections hold chunks of one embedding model; their description routes sub-queries. Chunk ids are content
    hashes, so ``upsert`` of an unchanged chunk is a no-op. The conformance suite in ``deepsearcher.testing.conformance`` states
    the expected behaviour of every method.

    Attributes:
        uri: where the store lives (a file path, a server URI, ``memory://``), shown to users.
    """

    uri: str

    @property
    def capabilities(self) -> StoreCapabilities:
        """What this store (and its server) can do."""
        ...

    def list_collections(self) -> list[str]:
        """Collection names, sorted."""
        ...

    def has_collection(self, name: str) -> bool:
        """Raises CollectionError for an invalid name."""
        ...

    def create_collection(self, name: str, *, description: str, model_name: str, dim: int) -> None:
        """Create an empty collection recording its description and embedding model.

        Raises:
            CollectionError: invalid name.
        """
        ...

    def drop_collection(self, name: str) -> None:
        """Delete a collection and its chunks. Raises CollectionError when there is none of that name."""
        ...

    def describe(self, name: str) -> CollectionInfo:
        """Name, description (and whether it was generated), chunk count, embedding model, search modes and
        dense index. Raises CollectionError when missing."""
        ...

    def set_description(self, name: str, description: str, *, generated: bool = False) -> None:
        """Replace a collection's description (routing reads it); ``generated`` marks one written by deepsearcher
        (an LLM, or file names and titles) rather than by a user. Raises CollectionError when missing."""
        ...

    def sample(self, name: str, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks that open a Document (``chunk_index == 0``: a file's, page's or record's first
        chunk), in any order: titles and opening text to describe the collection from. Raises CollectionError when
        missing."""
        ...

    def check_embedding(self, name: str, model_name: str, dim: int) -> None:
        """Raise CollectionError when the collection is missing or was built with another model or dimension."""
        ...

    def count(self, name: str, filter_expr: str = "") -> int:
        """Chunks in the collection (matching a store-specific filter expression when given)."""
        ...

    def is_complete(self, name: str, source: str, doc_hash: str) -> bool:
        """True when every chunk of ``source`` at version ``doc_hash`` is stored."""
        ...

    def upsert(self, name: str, chunks: Sequence[Chunk], vectors: np.ndarray, doc_chunks: dict[str, int]) -> int:
        """Insert or replace chunks with their vectors (shape (len(chunks), dim)); ``doc_chunks`` maps each source
        to its total chunk count. Returns rows written."""
        ...

    def delete_stale(self, name: str, source: str, doc_hash: str) -> int:
        """Delete the chunks of ``source`` of any version other than ``doc_hash``; returns rows deleted."""
        ...

    def sources(self, name: str) -> list[str]:
        """The distinct sources with chunks in the collection, sorted (a folder re-load removes those no longer
        in the folder)."""
        ...

    def delete_source(self, name: str, source: str) -> int:
        """Delete every chunk of ``source`` (any version); returns rows deleted."""
        ...

    def seal(self, name: str) -> None:
        """Make written chunks durable and fast to search (called at the end of a load)."""
        ...

    def plan_search(self, name: str, mode: SearchMode) -> SearchPlan:
        """The mode a search on collection ``name`` runs: ``mode`` when ``describe(name).modes`` has it, else "dense"
        with a one-line ``notice`` saying why (callers show it; ``search`` falls back the same way).

        Raises:
            CollectionError: no such collection.
            ValueError: an unknown mode.
        """
        ...

    def search(self, name: str, query_vector: np.ndarray | None, query_text: str, top_k: int,
               mode: SearchMode = "hybrid", *, where: SearchFilter | None = None) -> list[Hit]:
        """Top-k chunks, best first. ``query_vector`` (shape (dim,)) is unused in "bm25" mode. ``where`` limits the
        search to the chunks it admits (``SearchFilter.admits`` says which; the caller checks every hit with it too).

        Raises:
            ValueError: a mode not in ``capabilities.modes`` when the store cannot fall back.
        """
        ...

    def chunks_around(self, name: str, chunk: Chunk, window: int) -> list[Chunk]:
        """The chunks of ``chunk``'s document around it: same ``source``, ``page`` and ``doc_hash``, ``chunk_index``
        within ``window`` of its own (the chunk itself included), ordered by ``chunk_index``.

        Used by the DeepResearch ``read`` action to open a retrieved chunk in its context. Returns [] when the
        chunk's document is no longer stored (re-loaded in another version).

        Raises:
            CollectionError: no such collection.
            ValueError: ``window`` < 0.
        """
        ...

    def close(self) -> None:
        """Release connections and file locks."""
        ...


@runtime_checkable
class Loader(Protocol):
    """Turns one file into Documents (a ``loader`` provider)."""

    def load(self, path: Path) -> list[Document]:
        """Documents of one existing file, with ``source`` = the absolute POSIX path.

        The text may be raw: the load pipeline normalises every loader's output (``ingest.normalize``) before
        splitting. A loader of record formats may return a ``types.Extraction`` (a list of Documents that also
        counts the records it dropped, by reason), shown in the load summary.

        Raises:
            SkipSource: empty, binary, unsupported, undecodable or unreadable (the reason is shown; the load goes
                on with the other files).
            ProviderError: the loader as a whole cannot run (e.g. a missing optional package).
        """
        ...


@runtime_checkable
class Crawler(Protocol):
    """Fetches web pages from start URLs (a ``crawler`` provider)."""

    def crawl(self, start_urls: Sequence[str], on_event: EventCallback) -> Iterator[FetchedPage]:
        """Yield every page fetched (or failed) from the start URLs, emitting crawl events.

        Raises:
            ProviderError: the provider as a whole is unusable (e.g. its API refuses the key); per-page problems are
                yielded as pages with ``error`` set instead.
        """
        ...


@runtime_checkable
class WebSearch(Protocol):
    """Searches the web at query time (a ``web_search`` provider).

    Attributes:
        name: the provider name shown to users ("searxng", "brave", ...).
    """

    name: str

    def search(self, query: str, *, max_results: int = 10) -> list[WebResult]:
        """Results for ``query``, best first, at most ``max_results``.

        Raises:
            ProviderError: the service refused the key, rate-limited, timed out or answered malformed JSON.
        """
        ...
