"""Plain result types shared by every layer: frozen dataclasses, never tuples or loose dicts.

Progress events live in ``deepsearcher.events``; the provider protocols in ``deepsearcher.protocols``. The chat
message types (``Message``, ``ChatResult``, ``TokenCallback``) are here so that the protocols and ``llm.base`` share
them without importing each other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, TypedDict


#: The retrieval modes: cosine on the dense vector, full text (BM25), or both fused.
SearchMode = Literal["dense", "bm25", "hybrid"]


@dataclass(frozen=True)
class Document:
    """One loaded unit of text before splitting: a file, a PDF page, a web page or a JSON record.

    Attributes:
        text: the extracted text (Unicode, never empty when produced by a loader).
        source: file path (absolute, POSIX) or final URL after redirects.
        title: human title (file stem, HTML <title>, JSON title key).
        page: 1-based page number for paged formats (PDF, PPTX slide), else None.
        metadata: small JSON-serialisable extras (content type, record id, ...).
    """

    text: str
    source: str
    title: str = ""
    page: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Extraction(list[Document]):
    """What a loader got from one file: its Documents (this is a list of them) and, for record formats (JSON/JSONL),
    the records it dropped, counted by reason.

    A loader may return a plain ``list[Document]`` as well; the load pipeline reads ``skipped_records`` when present.

    Args:
        documents: the Documents (raw text: the load pipeline normalises it).
        skipped_records: reason -> number of records that gave no Document (e.g. ``{"text is a number": 2}``).
    """

    def __init__(self, documents: Iterable[Document] = (), skipped_records: Mapping[str, int] | None = None) -> None:
        super().__init__(documents)
        self.skipped_records: dict[str, int] = dict(skipped_records or {})

    @property
    def documents(self) -> list[Document]:
        """The Documents as a plain list."""
        return list(self)


#: The most UTF-8 bytes a chunk's text may have: Milvus VARCHAR fields hold at most 65,535 bytes, and the store
#: declares its text field with this length (the splitter cuts longer pieces).
MAX_CHUNK_BYTES = 65_535


@dataclass(frozen=True)
class Chunk:
    """One piece of a Document, sized for the embedder, as stored in the vector DB.

    Attributes:
        id: content-derived primary key (see ``ingest.ids.chunk_id``), 32 hex chars.
        text: chunk text (at most the store's VARCHAR byte limit in UTF-8).
        source, title, page: copied from the Document.
        chunk_index: 0-based position of the chunk within its Document.
        doc_hash: hash of the whole source (all its Documents), used to detect a changed file.
        metadata: copied from the Document.
    """

    id: str
    text: str
    source: str
    title: str
    page: int | None
    chunk_index: int
    doc_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OtherSource:
    """Another place that holds exactly the same text as a hit's chunk ("also in …").

    Attributes:
        source: file path or URL.
        page: page or slide number, or None.
        title: document title.
        collection: collection of that copy.
        chunk_id: id of that copy's chunk.
    """

    source: str
    page: int | None
    title: str
    collection: str
    chunk_id: str


@dataclass(frozen=True)
class Hit:
    """One retrieval result.

    Attributes:
        chunk: the stored chunk.
        score: similarity, higher is better: cosine in [-1, 1] (dense), BM25 score (bm25), the fused score
            (hybrid: ``vectordb.fusion.fuse_hybrid``; several collections: reciprocal rank fusion).
        collection: collection the chunk came from.
        also_in: other sources whose chunk has the same text (they take no retrieval slot of their own;
            ``vectordb.collapse``).
    """

    chunk: Chunk
    score: float
    collection: str
    also_in: tuple[OtherSource, ...] = ()


@dataclass(frozen=True)
class CollectionInfo:
    """What ``deepsearcher collections`` lists.

    Attributes:
        name, description: the collection and what it holds (used for routing).
        chunk_count: chunks stored.
        embedding_model, embedding_dim: the model its vectors come from.
        modes: search modes this collection supports, a subset of ["dense", "bm25", "hybrid"] (a collection made on
            a Milvus server without full-text search is dense-only, whatever the server can do later).
        index_type: its dense index ("FLAT" = exact search, "HNSW", ...), "" when unknown.
    """

    name: str
    description: str
    chunk_count: int
    embedding_model: str
    embedding_dim: int
    #: the description was written by deepsearcher (an LLM, or file names and titles), not given by a user
    description_generated: bool = False
    modes: list[str] = field(default_factory=lambda: ["dense"])
    index_type: str = ""


@dataclass(frozen=True)
class CollectionDescription:
    """A collection's description as just stored (``DeepSearcher.describe_collection``).

    Attributes:
        collection: the collection.
        text: the description.
        origin: "given" (a user's text), "llm" (written by the configured LLM from a sample of the chunks),
            "files" (built from file names and titles) or "placeholder" (the stand-in "Documents loaded from ..." of
            a collection not described yet).
        note: why the LLM did not write it (no LLM configured, it failed, its reply was unusable); "" otherwise.
    """

    collection: str
    text: str
    origin: str
    note: str = ""


@dataclass(frozen=True)
class FileResult:
    """Outcome of loading one file or URL.

    Attributes:
        source: the path or URL as given (or discovered in a folder / crawl).
        status: "loaded", "unchanged" or "skipped" ("removed" in ``LoadSummary.removed``).
        reason: why it was skipped ("" otherwise).
        chunks: chunks written (0 when unchanged or skipped).
        skipped_records: for JSON/JSONL, reason -> records of the file that gave no text (the file itself loaded).
        notice: a loaded source's text the embedding model cannot represent ("" when none; ``ingest.scripts``).
    """

    source: str
    status: str
    reason: str = ""
    chunks: int = 0
    skipped_records: dict[str, int] = field(default_factory=dict)
    notice: str = ""


@dataclass(frozen=True)
class LoadSummary:
    """Result of ``DeepSearcher.load``.

    Attributes:
        collection: target collection name.
        files: one FileResult per input source.
        chunks_written: chunks upserted in this run.
        chunks_deleted: stale chunks removed (changed files).
        seconds: wall time of the whole load.
        embed_seconds: wall time spent inside the embedding model.
        created: this load created the collection.
        description: the description it stored when it created the collection (given with ``-d``, or generated),
            else None.
        engine: the ingestion engine that ran ("local" or "ray").
        notices: one-line advice about the collection after the load (e.g. a Milvus Lite collection grown past the
            size where its search gets slow), [] when none.
        removed: sources whose chunks this load removed, status "removed", with why ("no longer in the folder", or
            "no longer loadable: <reason>") and the rows deleted (``chunks``); see ``ingest.load.remove_missing``.
    """

    collection: str
    files: list[FileResult]
    chunks_written: int
    chunks_deleted: int
    seconds: float
    embed_seconds: float
    created: bool = False
    description: CollectionDescription | None = None
    engine: str = "local"
    notices: list[str] = field(default_factory=list)
    removed: list[FileResult] = field(default_factory=list)

    @property
    def loaded(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "loaded"]

    @property
    def unchanged(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "unchanged"]

    @property
    def skipped(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "skipped"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Usage:
    """LLM usage of one run.

    Attributes:
        llm_calls: number of chat completions requested (retries included).
        prompt_tokens, completion_tokens: as reported by the server (estimated when it reports none).
        seconds: wall time of the run.
        cost: in the currency of the configured prices per 1M tokens; None when no prices are set.
    """

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cost: float | None = None


@dataclass(frozen=True)
class Source:
    """One numbered source of a report: the chunk cited as ``[number]``.

    Attributes:
        number: the 1-based citation number used in the answer text.
        chunk: the retrieved chunk.
        collection: the collection it came from.
        also_in: other sources holding the same text (see ``Hit.also_in``).
    """

    number: int
    chunk: Chunk
    collection: str
    also_in: tuple[OtherSource, ...] = ()


QuestionState = Literal["answered", "nothing_found", "not_researched"]


@dataclass(frozen=True)
class QuestionStatus:
    """What became of one question of a run (the user's, a gap question, a long report's section question).

    Attributes:
        question: the question.
        status: "answered" (an answer citing sources), "nothing_found" (researched, but no cited answer came of it)
            or "not_researched" (research stopped first: budget, steps, bad attempts).
        detail: how it ended, in words ("accepted by the evaluator", "forced answer", "stopped: max_steps").
    """

    question: str
    status: QuestionState
    detail: str = ""


WebOutcome = Literal["ok", "no_results", "degraded", "failed", "not_sent"]


@dataclass(frozen=True)
class WebSearchOutcome:
    """How one web search of a run went.

    Attributes:
        query: the search expression.
        provider: the web search provider.
        outcome: "ok"; "no_results" (the provider answered 0 results); "degraded" (it answered, but said some of
            its engines did not: SearXNG's ``unresponsive_engines``); "failed" (an error: HTTP status, quota,
            timeout); "not_sent" (web search was off after an earlier failure).
        results: results received.
        detail: the engines or the error, in words ("" when ok).
    """

    query: str
    provider: str
    outcome: WebOutcome
    results: int = 0
    detail: str = ""


@dataclass(frozen=True)
class Evaluation:
    """One verdict of DeepResearch's evaluator.

    Attributes:
        step: the step that answered.
        question: the question answered.
        passed: the answer was accepted.
        checks: check -> passed (None: not run).
        critique: why it was rejected ("" when accepted).
    """

    step: int
    question: str
    passed: bool
    checks: dict[str, bool | None]
    critique: str = ""


@dataclass(frozen=True)
class UnsupportedCitation:
    """A sentence of an answer whose cited sources do not hold most of its words (``agents.cited_support``).

    Attributes:
        sentence: the sentence as written, citations included, on one line.
        cited: the source numbers it cites.
        share: the share of its words the cited sources hold together (0–1).
        found_in: other sources of the report holding at least half its words, best first (empty: none does).
    """

    sentence: str
    cited: list[int]
    share: float
    found_in: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Report:
    """The result of ``DeepSearcher.query``.

    Attributes:
        question: the user's question.
        answer: Markdown answer with inline ``[n]`` citations, every one resolving to ``sources``.
        sources: the cited sources, by number.
        sub_queries: every sub-query searched, in order (initial decomposition, then gap queries).
        iterations: reflection rounds run.
        usage: LLM calls, tokens, seconds, cost.
        agent: the agent that produced it ("deep_search", "naive", "chain_of_rag", "deep_research").
        removed_citations: citation numbers in the model's text that resolved to no retrieved chunk (removed).
        gaps: gap queries still open when the loop stopped (empty when reflection found none).
        checks: the evaluator's checks on the final answer, check -> passed (None: not run); empty when the answer
            was not evaluated (agents without an evaluator, a forced final answer, a long report).
        beast_mode: the answer was forced when the budget or the bad-attempt limit ran out (DeepResearch).
        title: the report's title (a long report's outline title; "" = the question).
        sections: the section titles of a long report, in order (empty for a short report).
        short_answer: the answer in one line (a name, date, number, yes/no or one sentence), shown before the report
            and scored by the eval harness; "" when nothing was found to answer from, and for a long report.
        questions: what became of each question researched or left open (``QuestionStatus``; empty for agents
            that do not track questions).
        evaluations: every evaluator verdict of the run, rejections included (DeepResearch).
        web_searches: every web search of the run and how it went (``WebSearchOutcome``; empty without web).
        language: the report language's code ("de", "zh"…; ``agents.scaffold``): the headings and notes the tool
            adds follow it; "" = English.
        pages_read: the web pages this run's read actions opened (their URLs; a link to one stays a link).
        unretrieved_urls: URLs (each once) the answer or the short answer linked to that this run neither
            retrieved nor read: removed from the text (or marked "not retrieved by this run" with
            ``query.report_links: all``), never in ``sources`` (``agents.safe_markdown``).
        unsourced_dates: dates (as written, each once) the answer or the short answer gives that fall on a day of
            the run and that neither the question nor a cited source contains: the date every prompt carries,
            copied as a fact (``agents.run_dates``); the report says so.
        unsupported_citations: the answer's sentences whose cited sources do not hold most of their words
            (``agents.cited_support``: a citation on another chunk's sentence, a claim written from no chunk); the
            text stays and the report says so.
    """

    question: str
    answer: str
    sources: list[Source]
    sub_queries: list[str]
    iterations: int
    usage: Usage
    agent: str
    removed_citations: int = 0
    gaps: list[str] = field(default_factory=list)
    checks: dict[str, bool | None] = field(default_factory=dict)
    beast_mode: bool = False
    title: str = ""
    sections: list[str] = field(default_factory=list)
    short_answer: str = ""
    questions: list[QuestionStatus] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    web_searches: list[WebSearchOutcome] = field(default_factory=list)
    language: str = ""
    pages_read: list[str] = field(default_factory=list)
    unretrieved_urls: list[str] = field(default_factory=list)
    unsourced_dates: list[str] = field(default_factory=list)
    unsupported_citations: list[UnsupportedCitation] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data, the question and the short answer first."""
        data = asdict(self)
        return {"question": data.pop("question"), "short_answer": data.pop("short_answer"), **data}


@dataclass(frozen=True)
class StoreCapabilities:
    """What a vector store can do, reported by ``VectorStore.capabilities``.

    Attributes:
        dense: cosine search on the dense vector.
        bm25: full-text (BM25) search on the chunk text, for collections created now.
        hybrid: dense + BM25 fused (needs both).
        engine: "lite-3", "lite-2", "server", "memory", ... (shown by ``deepsearcher collections``).
        index_type: the dense index new collections get ("FLAT" = exact search, "HNSW", ...).
        version: the engine or server version as it reports it ("v2.3.5-lite", "3.2.2"), "" when unknown.
        file_lock: one process at a time may open the store (Milvus Lite); a second one gets ``StoreInUseError``.
    """

    dense: bool = True
    bm25: bool = False
    hybrid: bool = False
    engine: str = ""
    index_type: str = "FLAT"
    version: str = ""
    file_lock: bool = False

    @property
    def modes(self) -> list[str]:
        """The retrieval modes supported: a subset of ["dense", "bm25", "hybrid"]."""
        return [m for m in ("dense", "bm25", "hybrid") if getattr(self, m)]


@dataclass(frozen=True)
class SearchPlan:
    """The search mode that runs for a request on one collection (``VectorStore.plan_search``).

    Attributes:
        collection: the collection.
        requested: the mode asked for ("dense", "bm25" or "hybrid").
        mode: the mode that runs: ``requested``, or "dense" on a collection without full-text search.
        notice: one line for the user when ``mode != requested`` (why, and what ran instead), else None.
    """

    collection: str
    requested: SearchMode
    mode: SearchMode
    notice: str | None = None

    @property
    def fell_back(self) -> bool:
        return self.mode != self.requested


@dataclass(frozen=True)
class FetchedPage:
    """One page a crawler fetched, or failed to.

    Attributes:
        start_url: the start URL (as the user gave it) whose crawl reached this page.
        url: final URL after redirects; the requested URL when the fetch failed.
        content: the response body (builtin) or the page as UTF-8 Markdown (firecrawl); empty on failure.
        content_type: the Content-Type header value with its parameters, or None when the server sent none.
        charset: the charset parameter of the Content-Type header, or None.
        title: a title known without parsing (Firecrawl metadata), else "".
        error: why the page is not indexed; "" when it was fetched.
        duplicate: the URL redirected to a page this run fetches anyway (it is not loaded twice).
    """

    start_url: str
    url: str
    content: bytes = b""
    content_type: str | None = None
    charset: str | None = None
    title: str = ""
    error: str = ""
    duplicate: bool = False


@dataclass(frozen=True)
class WebResult:
    """One web search result.

    Attributes:
        title: the page title as the search engine gives it.
        url: the page URL (http or https).
        snippet: a plain-text excerpt (HTML removed).
        provider: the web search provider that returned it ("searxng", "brave", ...).
        rank: 1-based position in that provider's results.
        published: publication date as the provider gives it, or None.
    """

    title: str
    url: str
    snippet: str
    provider: str
    rank: int
    published: str | None = None


class Message(TypedDict):
    """One chat message, OpenAI shape (every provider we support speaks it)."""

    role: str
    content: str


TokenCallback = Callable[[str], None]
"""Receives each piece of *content* text as it streams (reasoning deltas are not passed). It may raise
``StopReply`` to end the reply there."""


class StopReply(Exception):
    """Raised by a ``TokenCallback`` to end a streamed reply early: the provider stops the generation (closes the
    stream) and returns the text streamed so far with ``finish_reason`` "stop". The report step raises it when a small
    model starts copying its prompt's sources, which the report drops anyway (``agents.echoes.PasteGuard``)."""


@dataclass(frozen=True)
class ChatResult:
    """One chat completion.

    Attributes:
        text: the content as the model wrote it (may still contain ``<think>`` blocks; see ``llm.output``).
        reasoning: a separate reasoning field (``reasoning_content`` of DeepSeek-R1 / vLLM / llama.cpp), "" if none.
        prompt_tokens, completion_tokens: as reported by the server, or estimated (characters / 4) when it reports
            none.
        attempts: HTTP requests made for this result (1 + transport retries).
        finish_reason: "stop", "length", ... as reported ("" when unknown); "length" means the reply was cut at
            its token limit.
        max_tokens: the completion limit the request was sent with, when the caller set one (None: the provider's
            configured ``max_tokens``).
    """

    text: str
    reasoning: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    finish_reason: str = ""
    max_tokens: int | None = None

    @property
    def cut_off(self) -> bool:
        """True when the reply stopped at its token limit (``finish_reason == "length"``), not at its end."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class PageRead:
    """A web page read at query time (DeepResearch's ``read`` action).

    Attributes:
        url: the final URL (after redirects), what citations show.
        passages: the page's text split as a load would split it (source = ``url``); empty when it failed.
        error: why nothing was read ("" when it was).
    """

    url: str
    passages: list[Chunk] = field(default_factory=list)
    error: str = ""
