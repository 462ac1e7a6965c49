"""``DeepSearcher``: the one composition root. Builds providers lazily from ``Settings`` and exposes the API.

Nothing here prints: progress goes to the ``on_event`` callback, failures are ``DeepSearcherError`` subclasses.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Iterator, Sequence

from deepsearcher import registry
from deepsearcher.errors import CollectionError, ConfigError, IngestError
from deepsearcher.settings import Settings
from deepsearcher.types import CollectionInfo, Event, EventCallback, Hit, LoadSummary, Report, ignore_event

log = logging.getLogger(__name__)


class DeepSearcher:
    """Load documents into Milvus collections, retrieve from them, and run research queries over them.

    Args:
        settings: validated configuration (see ``load_settings``).
        on_event: default progress callback for long operations.
        llm: a ready ``ChatModel`` to use instead of building ``settings.llm`` (tests and the HTTP server pass a
            ``ScriptedChatModel`` here).

    Construction is cheap: the embedder, vector store and LLM are built on first use.
    """

    def __init__(self, settings: Settings, on_event: EventCallback = ignore_event, *, llm: Any = None) -> None:
        self.settings = settings
        self.on_event = on_event
        self._embedder: Any = None
        self._store: Any = None
        self._llm: Any = llm
        self._llm_checked = llm is not None

    # --- providers -----------------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            self._embedder = registry.create("embedding", self.settings.embedding)
        return self._embedder

    @property
    def store(self) -> Any:
        if self._store is None:
            from deepsearcher.vectordb.milvus import MilvusStore

            vdb = self.settings.vector_db
            uri = vdb.uri if "://" in vdb.uri else str(self.settings.resolve_path(vdb.uri))
            token = os.environ.get(vdb.token_env) if vdb.token_env else None
            from deepsearcher.vectordb.schema import HnswParams

            hnsw = HnswParams(m=vdb.hnsw_m, ef_construction=vdb.hnsw_ef_construction, ef=vdb.hnsw_ef)
            self._store = MilvusStore(uri, token=token, db_name=vdb.db_name, hnsw=hnsw,
                                      connect_timeout_s=vdb.connect_timeout_s)
        return self._store

    @property
    def llm(self) -> Any:
        """The chat model (``ChatModel``), built from ``settings.llm`` on first use.

        Raises:
            ConfigError: no ``llm`` section is configured (the message says how to add one).
        """
        if self._llm is None:
            if self.settings.llm is None:
                raise ConfigError("no LLM is configured, so `query` cannot run (`retrieve` works without one)",
                                  hint="add an llm: block to the config, e.g. provider: openai_compatible, model: "
                                       "gpt-4o-mini, api_key_env: OPENAI_API_KEY; or base_url: "
                                       "http://127.0.0.1:8080/v1 for a local llama.cpp / Ollama / vLLM server. "
                                       "See docs/llm-providers.md")
            options = self.settings.llm
            if getattr(options, "model_path", None) is not None:
                options = options.model_copy(update={"model_path": self.settings.resolve_path(options.model_path)})
            self._llm = registry.create("llm", options)
        return self._llm

    def check_llm(self) -> None:
        """Fail fast when the LLM is not configured or not reachable (once per instance; no LLM call is made).

        Raises:
            ConfigError: no LLM configured, or an API key is missing.
            ProviderError: the server is unreachable or rejects the key.
        """
        if not self._llm_checked:
            check = getattr(self.llm, "check", None)
            if check is not None:
                check()
            self._llm_checked = True

    def close(self) -> None:
        """Release the vector store connection (the Milvus Lite file lock)."""
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> "DeepSearcher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- ingestion -----------------------------------------------------------------------------------------------
    def split_signature(self) -> str:
        """Settings that change chunk boundaries; part of every source's version hash."""
        ing, ld = self.settings.ingest, self.settings.loader
        return (f"{ing.chunk_size_tokens}/{ing.chunk_overlap_tokens}/{self.embedder.model_name}/{ld.provider}/"
                f"{ld.json_text_key}/{ld.json_title_key}")

    def splitter(self) -> Any:
        from deepsearcher.ingest.splitter import Splitter

        ing = self.settings.ingest
        return Splitter(ing.chunk_size_tokens, ing.chunk_overlap_tokens, tokenizer=self.embedder.tokenizer(),
                        model_max_tokens=self.embedder.max_tokens)

    def load(self, inputs: Sequence[str], collection: str | None = None, description: str | None = None, *,
             force_new: bool = False, batch_size: int | None = None,
             on_event: EventCallback | None = None) -> LoadSummary:
        """Load files, folders, glob patterns and URLs into a collection.

        Args:
            inputs: paths, glob patterns or http(s) URLs.
            collection: target collection (default ``vector_db.default_collection``).
            description: collection description used for routing (only set when the collection is created).
            force_new: drop and rebuild the collection.
            batch_size: chunks per embed/upsert batch (default ``ingest.batch_size``).
            on_event: progress callback (default: the one given to the constructor).

        Returns:
            A LoadSummary with one FileResult per source.

        Raises:
            IngestError: a path does not exist (nothing written), or a URL yielded zero documents.
            CollectionError: invalid name, or the collection uses another embedding model.
        """
        from deepsearcher.ingest.pipeline import LoadPipeline, expand_paths, file_items, is_url
        from deepsearcher.vectordb.milvus import validate_collection_name

        name = validate_collection_name(self.settings.vector_db.default_collection if collection is None
                                        else collection)
        urls = [i for i in inputs if is_url(i)]
        files = expand_paths([i for i in inputs if not is_url(i)], self.settings.loader)
        if not files and not urls:
            ld = self.settings.loader
            raise IngestError(f"no files to load in {', '.join(inputs)}",
                              hint="the folders are empty or every file was filtered out "
                                   f"(include: {ld.include or 'all'}; exclude: {ld.exclude})")
        if description is None:
            shown = ", ".join(list(inputs)[:3]) + (" …" if len(inputs) > 3 else "")
            description = f"Documents loaded from {shown}"
        signature = self.split_signature()
        items: Iterator[Any] = file_items(files, self.settings.loader, signature)
        emit = on_event or self.on_event
        web = self._url_items(urls, signature, emit) if urls else None  # validates before any write
        if web is not None:
            items = _chain(items, web)
        pipeline = LoadPipeline(self.store, self.embedder, self.splitter(),
                                batch_size or self.settings.ingest.batch_size, emit)
        summary = pipeline.run(items, name, description=description, force_new=force_new,
                               total=len(files) if not urls else None)
        if web is not None:
            web.check(summary)  # a URL that gave 0 documents is an error (the collection is only made on a write)
        return summary

    def _url_items(self, urls: Sequence[str], signature: str, on_event: EventCallback) -> Any:
        from deepsearcher.ingest.web import url_items

        return url_items(urls, self.settings, signature, on_event)

    # --- collections ---------------------------------------------------------------------------------------------
    def collections(self) -> list[CollectionInfo]:
        """Every collection in the store, sorted by name."""
        store = self.store
        return [store.describe(name) for name in store.list_collections()]

    def drop_collection(self, name: str) -> None:
        """Delete a collection and its chunks.

        Raises:
            CollectionError: no such collection.
        """
        self.store.drop_collection(name)

    # --- retrieval -----------------------------------------------------------------------------------------------
    def retrieve(self, query: str, top_k: int | None = None, collections: Sequence[str] | None = None,
                 mode: str | None = None) -> list[Hit]:
        """Rank chunks for a query with no LLM.

        Args:
            query: the query text.
            top_k: results wanted (default ``query.top_k``).
            collections: collections to search (default: all).
            mode: "dense", "bm25" or "hybrid" (default from ``query.hybrid``).

        Returns:
            Hits across the collections, best first (per-collection lists fused by reciprocal rank when several).

        Raises:
            CollectionError: a named collection does not exist, there is none at all, or one was built with
                another embedding model.
        """
        k = top_k or self.settings.query.top_k
        mode = mode or ("hybrid" if self.settings.query.hybrid else "dense")
        names = self.resolve_collections(collections)
        # a bm25 request on a dense-only collection (a server without full-text search) runs dense
        runs = {self.store.plan_search(name, mode).mode for name in names}
        vector = None if runs == {"bm25"} else self.embedder.embed_query(query)
        per_collection = [self.store.search(name, vector, query, k, mode=mode) for name in names]
        if len(per_collection) == 1:
            return per_collection[0]
        return fuse_ranked(per_collection, k)

    def resolve_collections(self, collections: Sequence[str] | None) -> list[str]:
        """Validate requested collection names (all when None) and their embedding models.

        Raises:
            CollectionError: none exist, a name is unknown, or a model mismatches.
        """
        available = self.store.list_collections()
        if not available:
            raise CollectionError("there are no collections yet", hint="load documents with `deepsearcher load PATH`")
        names = list(collections) if collections else available
        unknown = [n for n in names if n not in available]
        if unknown:
            raise CollectionError(f"no collection named {', '.join(map(repr, unknown))}",
                                  hint=f"available: {', '.join(available)}")
        dim = self.embedder.dimension
        for name in names:
            self.store.check_embedding(name, self.embedder.model_name, dim)
        return names

    # --- query ---------------------------------------------------------------------------------------------------
    def query(self, question: str, *, collections: Sequence[str] | None = None, agent: str | None = None,
              max_iter: int | None = None, on_event: EventCallback | None = None) -> Report:
        """Research ``question`` over the collections and return one cited report.

        Args:
            question: the question, in any language (the report uses it unless ``query.language`` is set).
            collections: collections in scope (default: all); routing picks among them per sub-query.
            agent: "deep_search", "chain_of_rag", "naive" or "auto" (default ``query.agent``).
            max_iter: search rounds at most (default ``query.max_iter``).
            on_event: progress callback (default: the constructor's); event kinds are documented in
                ``deepsearcher.agents`` and end with ``query.report``.

        Returns:
            ``Report``: answer with verified ``[n]`` citations, cited sources, sub-queries, iterations, usage.

        Raises:
            ConfigError: no LLM configured, an unknown agent, a bad ``max_iter`` or an empty question.
            CollectionError: no collections, an unknown one, or an embedding-model mismatch.
            ProviderError: the LLM server is unreachable or failed (checked before any work is done).
        """
        from functools import lru_cache

        from deepsearcher.agents import agent_router
        from deepsearcher.agents.context import QueryContext
        from deepsearcher.llm.base import MeteredChatModel

        question = question.strip()
        if not question:
            raise ConfigError("the question is empty", hint='deepsearcher query "your question"')
        qs = self.settings.query
        requested = agent or qs.agent
        if requested != "auto" and requested not in agent_router.AGENTS:
            raise ConfigError(f"unknown agent {requested!r}",
                              hint=f"use one of: auto, {', '.join(agent_router.AGENTS)}")
        if max_iter is not None:
            if max_iter < 1:
                raise ConfigError(f"max_iter must be at least 1, got {max_iter}")
            qs = qs.model_copy(update={"max_iter": max_iter})
        self.check_llm()  # before the embedder loads: a missing or unreachable LLM is reported in a moment
        names = self.resolve_collections(collections)
        llm = self.llm
        meter = MeteredChatModel(llm, getattr(llm, "price_per_1m_input", None),
                                 getattr(llm, "price_per_1m_output", None))
        embed = lru_cache(maxsize=512)(self.embedder.embed_query)  # each sub-query is embedded once per run
        mode = "hybrid" if qs.hybrid else "dense"

        def search(text: str, collection: str, top_k: int) -> list[Hit]:
            return self.store.search(collection, embed(text), text, top_k, mode=mode)

        emit = on_event or self.on_event
        ctx = QueryContext(question=question, llm=meter, collections=[self.store.describe(n) for n in names],
                           search=search, embed=embed, settings=qs, emit=emit)
        ctx.event("query.start", question=question, agent=requested, collections=names, max_iter=qs.max_iter)
        report = agent_router.run(ctx, requested)
        emit(Event("query.report", report.to_dict()))
        return report


def fuse_ranked(rankings: Sequence[Sequence[Hit]], top_k: int, k: int = 60) -> list[Hit]:
    """Reciprocal rank fusion of ranked Hit lists (Cormack, Clarke & Büttcher, SIGIR 2009).

    Each hit scores sum(1 / (k + rank)) over the lists it appears in (rank from 1); returns the ``top_k`` best, with
    ``score`` replaced by the fused score.
    """
    from dataclasses import replace

    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            key = f"{hit.collection}/{hit.chunk.id}"
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            first.setdefault(key, hit)
    best = sorted(scores, key=lambda key: scores[key], reverse=True)[:top_k]
    return [replace(first[key], score=scores[key]) for key in best]


def _chain(*iterables: Any) -> Iterator[Any]:
    for it in iterables:
        yield from it
