"""``DeepSearcher``: the one composition root. Builds providers lazily from ``Settings`` through the registry (or
takes ready ones) and exposes the API.

Nothing here prints: progress goes to the ``on_event`` callback, failures are ``DeepSearcherError`` subclasses.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from deepsearcher.errors import CollectionError, ConfigError, DeepSearcherError, without_hint
from deepsearcher.events import EventCallback, LoadDescribe, QueryReport, QueryStart, RetrievalNotice, ignore_event
from deepsearcher.filters import SearchFilter
from deepsearcher.protocols import ChatModel, Crawler, Embedder, Loader, SearchMode, VectorStore
from deepsearcher.registry import Registry
from deepsearcher.registry import registry as default_registry
from deepsearcher.settings import ProviderOptions, QuerySettings, Settings
from deepsearcher.types import CollectionDescription, CollectionInfo, Hit, LoadSummary, Report, SearchPlan
from deepsearcher.vectordb.names import no_such_collection, validate_collection_name

if TYPE_CHECKING:
    from deepsearcher.agents.long_report.outline import Outline
    from deepsearcher.agents.state import QueryContext
    from deepsearcher.ingest.sources import PathAllowed

log = logging.getLogger(__name__)

NO_LLM_HINT = ("remove `llm: null` from the config to answer with the bundled local model (extra `model`), or "
               "add an llm: block, e.g. provider: openai_compatible, model: gpt-4o-mini, api_key_env: "
               "OPENAI_API_KEY; or base_url: http://127.0.0.1:8080/v1 for a local llama.cpp / Ollama / vLLM server. "
               "See docs/llm-providers.md")


@dataclass(frozen=True)
class _QueryPlan:
    """What one ``query`` runs, decided before any provider is built.

    Attributes:
        question: the stripped question.
        agent: "auto" or the requested agent.
        sections_by: the agent that researches a long report's sections, None for a short report.
        settings: the query settings with any per-call overrides (``max_iter``).
        web: the run gets web search tools.
    """

    question: str
    agent: str
    sections_by: str | None
    settings: QuerySettings
    web: bool


class DeepSearcher:
    """Load documents into collections, retrieve from them, and run research queries over them.

    Args:
        settings: validated configuration (see ``load_settings``).
        on_event: default progress callback for long operations (receives ``deepsearcher.events`` events).
        embedder: a ready ``Embedder`` instead of building ``settings.embedding``.
        store: a ready ``VectorStore`` instead of building ``settings.vector_db``.
        llm: a ready ``ChatModel`` instead of building ``settings.llm`` (tests and the HTTP server's tests pass a
            ``ScriptedChatModel``).
        registry: where providers and agents are looked up (default: the process-wide registry).

    Construction is cheap: providers that were not given are built on first use.
    """

    def __init__(self, settings: Settings, on_event: EventCallback = ignore_event, *, embedder: Embedder | None = None,
                 store: VectorStore | None = None, llm: ChatModel | None = None,
                 registry: Registry | None = None) -> None:
        self.settings = settings
        self.on_event = on_event
        self.registry = registry or default_registry
        self._embedder = embedder
        self._store = store
        self._llm = llm
        self._loader: Loader | None = None
        self._llm_checked = llm is not None

    # --- providers -----------------------------------------------------------------------------------------------
    def _build(self, kind: str, options: ProviderOptions) -> Any:
        return self.registry.create(kind, options.resolved(self.settings.resolve_path))

    @property
    def built_providers(self) -> frozenset[str]:
        """The provider kinds built or given so far ("embedding", "vector_db", "llm", "loader")."""
        made = {"embedding": self._embedder, "vector_db": self._store, "llm": self._llm, "loader": self._loader}
        return frozenset(kind for kind, value in made.items() if value is not None)

    @property
    def embedder(self) -> Embedder:
        """The embedding model, built from ``settings.embedding`` on first use."""
        if self._embedder is None:
            self._embedder = self._build("embedding", self.settings.embedding)
        return self._embedder

    @property
    def store(self) -> VectorStore:
        """The vector store, built from ``settings.vector_db`` on first use (relative paths resolved)."""
        if self._store is None:
            self._store = self._build("vector_db", self.settings.vector_db)
        return self._store

    @property
    def loader(self) -> Loader:
        """The file loader, built from ``settings.loader`` on first use."""
        if self._loader is None:
            self._loader = self._build("loader", self.settings.loader)
        return self._loader

    @property
    def llm(self) -> ChatModel:
        """The chat model, built from ``settings.llm`` on first use.

        Raises:
            ConfigError: no ``llm`` section is configured (the message says how to add one).
        """
        if self._llm is None:
            if self.settings.llm is None:
                raise ConfigError("no LLM is configured, so `query` cannot run (`retrieve` works without one)",
                                  hint=NO_LLM_HINT)
            self._llm = self._build("llm", self.settings.llm)
        return self._llm

    @property
    def llm_name(self) -> str | None:
        """The chat model's name (given or configured) without building it; None when there is none."""
        if self._llm is not None:
            return getattr(self._llm, "name", None) or type(self._llm).__name__
        options = self.settings.llm
        if options is None:
            return None
        model = getattr(options, "model", None)
        if model is None and getattr(options, "model_path", None) is not None:
            model = str(getattr(options, "model_path")).replace("\\", "/").rsplit("/", 1)[-1]
        return str(model) if model is not None else options.provider

    def check_llm(self, on_event: EventCallback | None = None) -> None:
        """Fail fast when the LLM is not configured or not reachable (once per instance; no LLM call is made). A
        model with a ``prepare(on_event)`` method (an in-process one, loaded here) reports its progress to
        ``on_event``.

        Raises:
            ConfigError: no LLM configured, or an API key is missing.
            ProviderError: the server is unreachable or rejects the key.
        """
        if not self._llm_checked:
            prepare = getattr(self.llm, "prepare", None)
            check = getattr(self.llm, "check", None)
            if prepare is not None:
                prepare(on_event or self.on_event)
            elif check is not None:
                check()
            self._llm_checked = True

    def close(self) -> None:
        """Release the vector store connection (the Milvus Lite file lock)."""
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> DeepSearcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- ingestion -----------------------------------------------------------------------------------------------
    def load(self, inputs: Sequence[str], collection: str | None = None, description: str | None = None, *,
             force_new: bool = False, batch_size: int | None = None, path_allowed: PathAllowed | None = None,
             allow_private_urls: bool | None = None, on_event: EventCallback | None = None,
             crawler: Crawler | None = None, keep_missing: bool = False,
             only: Sequence[str] | None = None) -> LoadSummary:
        """Load files, folders, glob patterns and URLs into a collection (``ingest.load.load_sources``).

        Args:
            inputs: paths, glob patterns or http(s) URLs.
            collection: target collection (default ``vector_db.default_collection``).
            description: collection description used for routing (only set when the collection is created).
            force_new: drop and rebuild the collection.
            batch_size: chunks per embed/upsert batch (default ``ingest.batch_size``).
            path_allowed: ``path -> bool`` for every file found; a refused one is treated as absent (the server's
                allowed roots).
            allow_private_urls: replaces ``crawler.allow_private_urls`` for this load, unless that is ``false``
                (the server passes its own rule); None = the crawler setting.
            on_event: progress callback (default: the one given to the constructor).
            crawler: a ready crawler for the URLs instead of the configured one.
            keep_missing: keep the chunks of files gone from a loaded folder or no longer loadable (default: removed,
                ``ingest.load.remove_missing``).
            only: a folder watch's changed paths: only the files found at or below them are loaded, the removal
                rule still compares the whole folder (``ingest.load.load_sources``). None = every file.

        Returns:
            A LoadSummary with one FileResult per source; a source that fails on its own is skipped with a reason.

        Raises:
            IngestError: a path does not exist (nothing written), or a URL yielded zero documents.
            CollectionError: invalid name, or the collection uses another embedding model.
        """
        from deepsearcher.ingest.load import load_sources
        from deepsearcher.ingest.ray_stages import WorkerOptions

        s, resolve, emit = self.settings, self.settings.resolve_path, on_event or self.on_event
        workers = WorkerOptions(loader=s.loader.resolved(resolve), embedding=s.embedding.resolved(resolve),
                                vector_db=s.vector_db.resolved(resolve))
        summary = load_sources(inputs, s.vector_db.default_collection if collection is None else collection,
                               description, ingest=s.ingest, loader_options=s.loader,
                               crawler_options=s.crawler.resolved(resolve), store=self.store, embedder=self.embedder,
                               loader=self.loader, registry=self.registry, workers=workers, force_new=force_new,
                               batch_size=batch_size, path_allowed=path_allowed,
                               allow_private_urls=allow_private_urls, on_event=emit, crawler=crawler,
                               keep_missing=keep_missing, only=only)
        if summary.created and description is None or self._needs_description(summary):
            text = None if summary.created else description  # -d on a re-load replaces only the stand-in
            summary = replace(summary, description=self.describe_collection(summary.collection, text,
                                                                            on_event=emit))
        return summary

    def _needs_description(self, summary: LoadSummary) -> bool:
        """The collection still has the stand-in description: the load that created it was stopped before it was
        described (``ingest.load.is_placeholder``)."""
        from deepsearcher.ingest.load import is_placeholder

        if summary.created or not (summary.loaded or summary.unchanged) or not self.store.has_collection(
                summary.collection):
            return False
        return is_placeholder(self.store.describe(summary.collection).description)

    def describe_collection(self, name: str, text: str | None = None, *,
                            on_event: EventCallback | None = None) -> CollectionDescription:
        """Set a collection's description to ``text``, or (None) write one: by the configured LLM from a sample of
        its chunks (one call; when ``ingest.describe_with_llm``), else from file names and titles
        (``agents.describe``). A generated description is stored marked as generated.

        Args:
            name: an existing collection.
            text: the new description (a user's), or None to generate one.
            on_event: receives ``LoadDescribe`` before a description is generated.

        Returns:
            What was stored, with its origin ("given", "llm" or "files") and why the LLM did not write it.

        Raises:
            CollectionError: no such collection.
            ConfigError: ``text`` is blank.
        """
        from deepsearcher.agents.describe import describe_collection

        if not self.store.has_collection(name):
            raise no_such_collection(name, self.store.list_collections())
        if text is not None:
            text = " ".join(text.split())
            if not text:
                raise ConfigError("the description is empty", hint='--set "what these documents are about"')
            self.store.set_description(name, text, generated=False)
            return CollectionDescription(name, text, "given")
        current = self.store.describe(name)
        keep_given = not current.description_generated and bool(current.description.strip())
        llm, why_not = self._describing_llm()
        (on_event or self.on_event)(LoadDescribe(collection=name, by="llm" if llm is not None else "files"))
        return describe_collection(self.store, name, llm, no_llm_note=why_not, keep_given=keep_given)

    def _describing_llm(self) -> tuple[ChatModel | None, str]:
        """The LLM to describe a collection with, or None and why not (never raises: describing must not fail a
        load)."""
        if not self.settings.ingest.describe_with_llm:
            return None, "ingest.describe_with_llm is false"
        if self._llm is None and self.settings.llm is None:
            return None, "no LLM is configured"
        try:
            self.check_llm()
            return self.llm, ""
        except DeepSearcherError as exc:
            log.info("not describing with the LLM: %s", exc)  # the caller says why (load summary, or an error)
            return None, f"the LLM is not usable: {without_hint(exc)}"

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
                 mode: SearchMode | None = None, *, on_event: EventCallback | None = None,
                 where: SearchFilter | None = None) -> list[Hit]:
        """Rank chunks for a query with no LLM.

        Args:
            query: the query text.
            top_k: results wanted (default ``query.top_k``).
            collections: collections to search (default: all).
            mode: "dense", "bm25" or "hybrid" (default from ``query.hybrid``); a collection without full-text search
                runs dense instead, announced by a ``RetrievalNotice``.
            on_event: receives the ``RetrievalNotice`` events (default: the constructor's callback).
            where: only chunks this metadata filter admits (source path globs, file types, dates, front matter).

        Returns:
            Hits across the collections, best first (per-collection lists fused by reciprocal rank when several);
            chunks with identical text take one slot, the other copies listed in ``Hit.also_in``.

        Raises:
            CollectionError: a named collection does not exist, there is none at all, or one was built with
                another embedding model.
        """
        from deepsearcher.vectordb.collapse import collapse_identical
        from deepsearcher.vectordb.fusion import fuse_ranked

        k = top_k or self.settings.query.top_k
        chosen: SearchMode = mode or ("hybrid" if self.settings.query.hybrid else "dense")
        names = self.resolve_collections(collections)
        plans = self.plan_searches(names, chosen, on_event or self.on_event, where, text=query)
        vector = None if all(p.mode == "bm25" for p in plans.values()) else self.embedder.embed_query(query)
        per_collection = [self.search(name, vector, query, k, plans[name].mode, where) for name in names]
        if len(per_collection) == 1:
            return per_collection[0]
        return collapse_identical(fuse_ranked(per_collection, sum(map(len, per_collection))))[:k]

    def search(self, collection: str, vector: Any, query: str, top_k: int, mode: SearchMode,
               where: SearchFilter | None = None) -> list[Hit]:
        """Top-k hits of one collection with identical texts collapsed (``vectordb.collapse.search_distinct``): the
        one search that ``retrieve`` and the agents use.

        Args:
            collection: an existing collection.
            vector: the query embedding, shape (dim,), or None in "bm25" mode.
            query: the query text.
            top_k: distinct texts wanted.
            mode: "dense", "bm25" or "hybrid".
            where: only chunks this filter admits; every hit is checked with ``SearchFilter.admits`` too (the store's
                path condition admits a superset of a glob).
        """
        from deepsearcher.vectordb.collapse import search_distinct

        store = self.store
        if where is None or where.empty:
            return search_distinct(lambda limit: store.search(collection, vector, query, limit, mode=mode), top_k)
        return search_distinct(lambda limit: [hit for hit in store.search(collection, vector, query, limit, mode=mode,
                                                                          where=where) if where.admits(hit.chunk)],
                               top_k)

    def plan_searches(self, names: Sequence[str], mode: SearchMode, on_event: EventCallback,
                      where: SearchFilter | None = None, *, text: str = "") -> dict[str, SearchPlan]:
        """The mode each collection's search runs (``VectorStore.plan_search``, then dense where BM25 cannot read
        ``text``'s language: ``bm25_plan``); one ``RetrievalNotice`` per collection where it is not ``mode``, and one
        where a date filter cannot see chunks loaded without dates."""
        plans = {name: self.bm25_plan(self.store.plan_search(name, mode), text) for name in names}
        for plan in plans.values():
            if plan.notice:
                on_event(RetrievalNotice(collection=plan.collection, requested=plan.requested, mode=plan.mode,
                                         notice=plan.notice))
        if where is not None and where.dated:
            for name, plan in plans.items():
                self._notice_undated(name, plan, on_event)
        return plans

    def bm25_plan(self, plan: SearchPlan, text: str) -> SearchPlan:
        """``plan``, or dense with a notice when it uses BM25 on Chinese or Japanese ``text`` in a collection whose
        analyzer reads a run of such characters as one word (Milvus' standard tokenizer): BM25 would find nothing
        there, and a hybrid search would silently be dense alone."""
        analyzer = getattr(self.store, "text_analyzer", None)
        if plan.mode == "dense" or analyzer is None or not needs_word_segmentation(text):
            return plan
        used = analyzer(plan.collection)
        if used != "standard":
            return plan
        return SearchPlan(plan.collection, plan.requested, "dense", notice=(
            f"BM25 cannot serve this language here: collection {plan.collection!r} splits words with the {used} "
            f"analyzer, which does not segment Chinese or Japanese text; {plan.requested} search ran as dense "
            "(set vector_db.bm25_analyzer: jieba and rebuild the collection for BM25 on such text)"))

    def _notice_undated(self, name: str, plan: SearchPlan, on_event: EventCallback) -> None:
        """A ``RetrievalNotice`` when ``name`` holds chunks without a date (loaded by a deepsearcher that did not store
        dates): a date range never admits them, and without the notice they would just be missing."""
        undated = getattr(self.store, "undated", None)
        count = undated(name) if undated is not None else 0
        if count:
            on_event(RetrievalNotice(
                collection=name, requested=plan.mode, mode=plan.mode,
                notice=f"{count} chunks of collection {name!r} have no document date (loaded before dates were "
                       "stored), so --since/--until never match them; load their files again with "
                       "--force-new-collection to date them"))

    def resolve_collections(self, collections: Sequence[str] | None) -> list[str]:
        """Validate requested collection names (all when None) and their embedding models.

        Raises:
            CollectionError: none exist, a name is unknown, or a model mismatches.
        """
        names = self.collection_names(collections)
        self.check_embeddings(names)
        return names

    def collection_names(self, collections: Sequence[str] | None) -> list[str]:
        """The requested collection names (all when None), checked against the store only: no embedder is loaded,
        so a query reports a misspelt ``-c`` or an empty store before it waits for a local model to load.

        Raises:
            CollectionError: none exist, or a name is unknown.
        """
        available = self.store.list_collections()
        if not available:
            raise CollectionError(f"there are no collections yet in {self.store.uri}",
                                  hint="load documents with `deepsearcher load PATH`, or point vector_db.uri at the "
                                       "store you loaded (a relative path is relative to the config file's folder)")
        names = list(collections) if collections else available
        unknown = [n for n in names if n not in available]
        if unknown:
            raise no_such_collection(unknown, available)
        return names

    def check_embeddings(self, names: Sequence[str]) -> None:
        """Every collection of ``names`` was embedded with the configured model (loads the embedder).

        Raises:
            CollectionError: a collection was built with another embedding model or dimension.
        """
        dim = self.embedder.dimension
        for name in names:
            self.store.check_embedding(name, self.embedder.model_name, dim)

    # --- query ---------------------------------------------------------------------------------------------------
    def query(self, question: str, *, collections: Sequence[str] | None = None, agent: str | None = None,
              max_iter: int | None = None, on_event: EventCallback | None = None, report: str = "short",
              outline: Outline | None = None, web: bool | None = None, save_to: str | None = None,
              allow_private_urls: bool | None = None, where: SearchFilter | None = None) -> Report:
        """Research ``question`` over the collections and return one cited report.

        Args:
            question: the question, in any language (the report uses it unless ``query.language`` is set).
            collections: collections in scope (default: all); routing picks among them per sub-query.
            agent: a registered agent name or "auto" (default ``query.agent``).
            max_iter: search rounds at most (default ``query.max_iter``).
            on_event: progress callback (default: the constructor's); events are listed in docs/events.md and
                end with ``QueryReport``.
            report: "short" (one answer) or "long" (outline, sections researched by an agent that declares
                sections: deep_research, deep_search or a plugin's; an editing pass; ``agents.long_report.agent``).
            outline: the long report's table of contents (default: planned by the model).
            web: search the web too (agents that declare web search, e.g. deep_research): None = when
                ``web_search`` is configured, False = never.
            save_to: store the web pages read into this collection after the run (``QuerySaved`` reports it).
            allow_private_urls: the caller's address rule for the pages the run reads and saves (the HTTP server
                passes its resolved ``server.allow_private_urls``); it replaces ``crawler.allow_private_urls``
                unless that is ``false`` (``ingest.web.crawler_options``). None = the crawler setting.
            where: a metadata filter every search of the run keeps (the agents' ``QueryContext.search``).

        Returns:
            ``Report``: answer with verified ``[n]`` citations, cited sources, sub-queries, iterations, usage.

        Raises:
            ConfigError: no LLM configured, an unknown agent, a bad ``max_iter`` or ``report``, an empty question,
                ``web=True`` or ``save_to`` without a configured web search, ``web=True`` with an agent that does not
                declare web search, or a long report with an agent that does not declare sections
                (``agents.base.AgentCapabilities``).
            QuestionError: the question is longer than ``query.max_question_tokens`` or than the model's context
                window allows (refused before any LLM call).
            CollectionError: no collections, an unknown one, an embedding-model mismatch, or a bad ``save_to`` name.
            ProviderError: the LLM server is unreachable or failed (checked before any work is done).
        """
        from deepsearcher import compose
        from deepsearcher.agents.tools import ResearchTools

        plan = self._plan_query(question, agent, report, max_iter, web, save_to)
        emit = on_event or self.on_event
        _ = self.llm  # built: no LLM configured or a missing key is said before the store opens
        names = self.collection_names(collections)  # before a local model loads: a misspelt -c is said at once
        self.check_llm(emit)  # before the embedder loads: a missing or unreachable LLM is reported in a moment
        self.check_embeddings(names)
        ctx = self._query_context(plan, names, emit, report, allow_private_urls, where)
        tools = ctx.research or ResearchTools()
        try:
            started = datetime.now().astimezone().date()  # the date every prompt of the run carries
            result = self._run_agent(ctx, plan, outline)
            if not result.language:
                from deepsearcher.agents.scaffold import language_code

                result = replace(result, language=language_code(question, ctx.settings.language))
            # one link rule for every agent's answer: only URLs this run retrieved or read stay links
            from deepsearcher.agents.report_markdown import with_checked_links

            read = tools.pages.pages_read if tools.pages is not None else []
            result = with_checked_links(result, read, ctx.settings.report_links)
            # and the run's own date given as a fact that no source or the question holds is said to be one
            from deepsearcher.agents.run_dates import with_checked_dates

            result = with_checked_dates(result, {started, datetime.now().astimezone().date()})
            # and a cited sentence its sources do not hold is listed (agents.cited_support)
            from deepsearcher.agents.cited_support import with_checked_support

            result = with_checked_support(result)
            if save_to is not None:
                compose.save_pages(self.load, tools, save_to, emit)
        finally:
            tools.close()
        emit(QueryReport(report=result))
        return result

    def _query_context(self, plan: _QueryPlan, names: list[str], emit: EventCallback, report: str,
                       allow_private_urls: bool | None, where: SearchFilter | None = None) -> QueryContext:
        """The run's context with its research tools (``compose.research_tools``), after the question is checked
        against the window; emits ``QueryStart`` and the search-mode notices."""
        from deepsearcher import compose

        modes: dict[str, SearchMode] = {}
        ctx = self._context(plan.question, names, plan.settings, emit, modes, where)
        ctx.check_question()
        tools = compose.research_tools(self.settings, self.registry, self.store, self.embedder, web=plan.web,
                                       allow_private_urls=allow_private_urls)
        ctx = replace(ctx, research=tools)
        ctx.emit(QueryStart(question=plan.question, agent=plan.agent, collections=names,
                            max_iter=plan.settings.max_iter, web=tools.web.name if tools.web is not None else None,
                            report=report))  # type: ignore[arg-type]
        searches = self.plan_searches(names, "hybrid" if plan.settings.hybrid else "dense", ctx.emit, where,
                                      text=plan.question)
        modes.update({name: search.mode for name, search in searches.items()})
        return ctx

    def _plan_query(self, question: str, agent: str | None, report: str, max_iter: int | None, web: bool | None,
                    save_to: str | None) -> _QueryPlan:
        """What ``query`` will run, checked before any provider is built (the errors of ``query``)."""
        from deepsearcher.agents.base import check_agent_name
        from deepsearcher.agents.long_report.agent import section_agent

        question = question.strip()
        if not question:
            raise ConfigError("the question is empty", hint='deepsearcher query "your question"')
        if report not in ("short", "long"):
            raise ConfigError(f"unknown report kind {report!r}", hint="use short or long")
        qs = self.settings.query
        requested = agent or qs.agent
        check_agent_name(self.registry, requested)
        sections_by = section_agent(requested, self.registry, self.settings.agent_options) \
            if report == "long" else None
        if max_iter is not None:
            if max_iter < 1:
                raise ConfigError(f"max_iter must be at least 1, got {max_iter}")
            qs = qs.model_copy(update={"max_iter": max_iter})
        use_web = self._uses_web(sections_by or requested, web)
        if save_to is not None:
            validate_collection_name(save_to)
            if not use_web:
                raise ConfigError("--save-to stores the web pages a query reads, but web search is off",
                                  hint="configure web_search (docs/web-search.md) and leave out --no-web")
        return _QueryPlan(question, requested, sections_by, qs, use_web)

    def _uses_web(self, agent: str, web: bool | None) -> bool:
        """Whether the run gets web search tools: ``agent`` declares ``web_search`` (for "auto": some agent does)
        and web search is configured (``web`` None) or asked for (``web`` True).

        Raises:
            ConfigError: ``web`` is True for an agent that does not search the web.
        """
        from deepsearcher.agents.base import agents_with, capabilities

        options = self.settings.agent_options
        searches_web = capabilities(self.registry, agent, options).web_search
        if web and not searches_web:
            able = agents_with(self.registry, options, web_search=True)
            raise ConfigError(f"the {agent} agent does not search the web",
                              hint=f"use --agent {able[0]} to search the web too, or leave out --web" if able else
                              "no installed agent searches the web; leave out --web")
        return searches_web and (self.settings.web_search is not None if web is None else web)

    def _run_agent(self, ctx: QueryContext, plan: _QueryPlan, outline: Outline | None) -> Report:
        """The long report written by the section agent, or the (routed) agent's report."""
        from deepsearcher.agents import agent_router
        from deepsearcher.agents.long_report.agent import write_long_report

        if plan.sections_by is not None:
            return write_long_report(ctx, plan.sections_by, outline)
        return agent_router.run(ctx, plan.agent)

    def plan_outline(self, question: str, *, collections: Sequence[str] | None = None) -> Outline:
        """The table of contents a long report on ``question`` would follow (one LLM call), to edit and pass back
        as ``query(..., report="long", outline=…)``.

        Raises:
            ConfigError, CollectionError, ProviderError: as ``query``.
        """
        from deepsearcher.agents.long_report.outline import plan_outline

        if not question.strip():
            raise ConfigError("the question is empty", hint='deepsearcher query "your question"')
        _ = self.llm
        names = self.collection_names(collections)
        self.check_llm()
        self.check_embeddings(names)
        qs = self.settings.query
        plans = self.plan_searches(names, "hybrid" if qs.hybrid else "dense", ignore_event, text=question)
        ctx = self._context(question.strip(), names, qs, self.on_event,
                            {name: plan.mode for name, plan in plans.items()})
        ctx.check_question()
        outline, _ = plan_outline(ctx)
        return outline

    def _context(self, question: str, names: Sequence[str], qs: QuerySettings, emit: EventCallback,
                 modes: dict[str, SearchMode], where: SearchFilter | None = None) -> QueryContext:
        """The ``QueryContext`` of one run: a metered model, search over ``names`` in the mode ``modes`` names for
        each (filled by the caller from ``plan_searches`` before the first search) and within ``where`` (every
        search an agent makes keeps the filter), a cached query embedder."""
        from functools import lru_cache

        from deepsearcher.agents.state import QueryContext
        from deepsearcher.llm.base import MeteredChatModel

        llm = self.llm
        meter = MeteredChatModel(llm, getattr(llm, "price_per_1m_input", None),
                                 getattr(llm, "price_per_1m_output", None))
        embed = lru_cache(maxsize=512)(self.embedder.embed_query)  # each sub-query is embedded once per run
        store = self.store
        embedder = self.embedder

        @lru_cache(maxsize=512)
        def embed_sees(text: str) -> bool:
            from deepsearcher.agents.dedup_rules import sees

            return sees(embedder.tokenizer(), text)

        def search(text: str, collection: str, top_k: int) -> list[Hit]:
            return self.search(collection, embed(text), text, top_k, modes[collection], where)

        return QueryContext(question=question, llm=meter, collections=[store.describe(n) for n in names],
                            search=search, embed=embed, settings=qs, emit=emit, registry=self.registry,
                            agent_options=self.settings.agent_options, embedding_model=self.embedder.model_name,
                            embed_sees=embed_sees)


def needs_word_segmentation(text: str) -> bool:
    """True when ``text`` holds Chinese or Japanese characters (Han, Hiragana, Katakana), written without spaces
    between words."""
    import regex

    return regex.search(r"[\p{Han}\p{Hiragana}\p{Katakana}]", text) is not None
