"""The steps every agent shares: structured asks fitted to the window (with reasoning, cut-off and fallback events),
retrieval per collection, near-duplicate sub-query detection, and running the sub-queries of a round concurrently.
The report step is in ``report``; the fused rank that decides which chunks a short prompt keeps is
``vectordb.fusion`` (``fused_priority``, ``top_ranked``)."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Generic, Sequence, TypeVar

import numpy as np
from pydantic import BaseModel

from deepsearcher.agents.dedup_rules import lexically_distinct, same_text
from deepsearcher.agents.state import QueryContext
from deepsearcher.errors import ContextWindowError
from deepsearcher.events import ChunkRef, Event, QueryCutOff, QueryFallback, QueryReasoning, QueryTrimmed
from deepsearcher.llm.base import Message
from deepsearcher.llm.output import Structured, ask_structured
from deepsearcher.llm.window import Fit
from deepsearcher.types import Hit
from deepsearcher.vectordb.fusion import fused_priority, hit_key

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Item = TypeVar("Item")  # an item of a fitted prompt (a chunk, a line)
R = TypeVar("R")

#: times a prompt is fitted again after the server refused it as too long (each time to the smaller window learned)
REFIT_ATTEMPTS = 2

PromptFn = Callable[[Sequence[Item], "int | None"], str]
"""``render(items, excerpt_chars) -> prompt``: the user prompt holding ``items``, excerpts cut at ``excerpt_chars``."""


def ask(ctx: QueryContext, step: str, prompt: str, schema: type[T], fallback: T, fallback_text: str) -> Structured[T]:
    """Run one structured step with a fixed prompt: ask, handle a cut-off or bad reply, else fall back (see
    ``ask_fitted``, of which this is the case without items)."""
    reply, _ = ask_fitted(ctx, step, lambda items, cap: prompt, [], None, schema, lambda kept: fallback,
                          fallback_text)
    return reply


def ask_fitted(ctx: QueryContext, step: str, render: PromptFn[Item], items: Sequence[Item],
               priority: Sequence[float] | None, schema: type[T], fallback: Callable[[list[Item]], T],
               fallback_text: str, unit: str = "chunks") -> tuple[Structured[T], list[Item]]:
    """Run one structured step whose prompt holds ``items`` (chunks, lines): fit it to the window, ask, retry once
    on a cut-off or unusable reply, else fall back; emit trimmed / reasoning / cut-off / fallback events.

    Args:
        ctx: the run.
        step: the step name in events.
        render: builds the prompt from the kept items and an excerpt cap.
        items: the candidates, in prompt order.
        priority: per item, lower = keep first (``vectordb.fusion.fused_priority``); None = the given order.
        schema: the reply model.
        fallback: the fallback value for the items kept.
        fallback_text: what the fallback does, for the event.
        unit: what the items are, for the trimming event ("chunks").

    Returns:
        ``(reply, kept items)``; numbers in the reply refer to the kept items (1-based).

    Raises:
        BudgetExhausted: the token budget cannot pay for the call (the agent stops researching).
        ContextWindowError: the prompt cannot fit even without items, or the server kept refusing it.
        ProviderError: the server failed.
    """
    gate = ctx.model(step)

    def refused(fit: Fit[Item]) -> None:
        log.info("%s: the server refused %d prompt tokens; fitting again to %s", step, fit.tokens,
                 ctx.window.describe())

    result, fit = call_fitted(ctx, lambda: fit_prompt(ctx, step, render, items, priority, unit=unit),
                              lambda fit: ask_structured(gate, fit.messages, schema, fallback(fit.items)), refused)
    report_reply(ctx, step, result, fallback_text)
    return result, fit.items


def call_fitted(ctx: QueryContext, fit: Callable[[], Fit[Item]], call: Callable[[Fit[Item]], R],
                refused: Callable[[Fit[Item]], None]) -> tuple[R, Fit[Item]]:
    """The fit → ask → refit loop of every prompt fitted to the window (``ask_fitted``, ``report.write_fitted``):
    ``fit()`` the prompt and ``call`` the model with it; when the server refuses it as too long and the window is
    now smaller (``refit``), say so (``refused``) and fit again, at most ``REFIT_ATTEMPTS`` times.

    Returns:
        ``(what call returned, the fit it was called with)``.

    Raises:
        ContextWindowError: the server kept refusing the prompt, or refused it without a smaller window to fit to.
    """
    attempt = 0
    while True:
        size = ctx.window.size
        fitted = fit()
        try:
            return call(fitted), fitted
        except ContextWindowError as exc:
            if attempt == REFIT_ATTEMPTS or not refit(ctx, exc, fitted.tokens, size):
                raise
            attempt += 1
            refused(fitted)


def refit(ctx: QueryContext, error: ContextWindowError, prompt_tokens: int, size: int) -> bool:
    """After ``error`` for a prompt of ``prompt_tokens`` fitted to a ``size``-token window: True when the window is
    now smaller (learned from the error, or by another thread meanwhile), so fitting again may succeed."""
    return ctx.window.learn(error, prompt_tokens) or ctx.window.size < size


def fit_prompt(ctx: QueryContext, step: str, render: PromptFn[Item], items: Sequence[Item],
               priority: Sequence[float] | None, room: int | None = None, unit: str = "chunks") -> Fit[Item]:
    """Fit ``render(items)`` to the window (``Window.fit``), emitting ``QueryTrimmed`` (which counts ``unit``) when
    it had to shorten it."""

    def messages(kept: Sequence[Item], cap: int | None) -> list[Message]:
        return ctx.messages(render(kept, cap))

    fit = ctx.window.fit(messages, items, priority, room)
    if fit.trimmed:
        ctx.emit(QueryTrimmed(step=step, kept=len(fit.items), dropped=fit.dropped, excerpt_chars=fit.excerpt_chars,
                              prompt_tokens=fit.tokens, window=ctx.window.size, unit=unit))
    return fit


def report_reply(ctx: QueryContext, step: str, result: Structured[T], fallback_text: str) -> None:
    """Emit what a structured reply brought besides its value: reasoning, a cut-off, a fallback."""
    if result.reasoning:
        ctx.emit(QueryReasoning(step=step, text=result.reasoning))
    if result.cut_off:
        ctx.emit(QueryCutOff(step=step, max_tokens=result.max_tokens,
                             action=result.cut_action or f"fell back: {fallback_text}"))
    if result.fell_back:
        error = f"unusable reply after a retry: {result.error}"
        log.info("%s: %s; %s", step, error, fallback_text)
        ctx.emit(QueryFallback(step=step, error=error, fallback=fallback_text))


# --- retrieval and ranking -----------------------------------------------------------------------------------------
def retrieve(ctx: QueryContext, query: str, collections: Sequence[str]) -> list[Hit]:
    """Top-k hits per collection for ``query``, concatenated collection by collection (each list best first),
    without repeated chunks; a text found in several collections is one hit (``vectordb.collapse``)."""
    from deepsearcher.vectordb.collapse import collapse_identical

    seen: set[str] = set()
    hits: list[Hit] = []
    for name in collections:
        for hit in ctx.search(query, name, ctx.settings.top_k):
            key = hit_key(hit)
            if key not in seen:
                seen.add(key)
                hits.append(hit)
    return collapse_identical(hits)


def chunk_ref(hit: Hit) -> ChunkRef:
    """How events name a chunk."""
    c = hit.chunk
    return ChunkRef(id=c.id, collection=hit.collection, source=c.source, page=c.page, title=c.title)


def by_collection(hits: Sequence[Hit]) -> list[list[Hit]]:
    """Split one ``retrieve`` result back into its per-collection rankings."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.collection, []).append(hit)
    return list(groups.values())


def question_floor(ctx: QueryContext, query: str, shown: Sequence[Hit], marked: Sequence[Hit],
                   keep: int | None = None) -> list[Hit]:
    """The hits kept whatever the relevance reply says: for the question itself, when the model ``marked`` any, its
    ``keep`` (default ``query.relevance_keep_top``) best ``shown`` in the collections the model marked a hit of, by
    fused rank over each
    collection's list (ties in retrieval order); none for any other query, or when nothing was marked ("nothing
    relevant" is the model's to say: ``report.nothing_relevant``). Only hits the model saw: a chunk the window left
    out counts as not kept, and a collection it judged wholly unhelpful adds nothing.

    Measured (docs/benchmarks.md "The bundled model side by side"): with the 1.5B model deep_search's filter dropped
    a gold passage the question's own search ranked first on 5 of 20 MuSiQue questions. Used by deep_search's
    relevance step and chain_of_rag's intermediate step (whose reply lists the chunks its answer relied on; its own
    ``agents.chain_of_rag.question_floor`` gives ``keep``, and the chunks any step listed are ``marked``).
    """
    keep = ctx.settings.relevance_keep_top if keep is None else keep
    if not keep or not marked or fold_query(query) != fold_query(ctx.question):
        return []
    helped = {h.collection for h in marked}
    candidates = [h for h in shown if h.collection in helped]
    priority = fused_priority(candidates, by_collection(candidates))
    best = sorted(range(len(candidates)), key=lambda i: (priority[i], i))[:keep]
    return [candidates[i] for i in sorted(best)]


def kept_with_floor(ctx: QueryContext, query: str, hits: Sequence[Hit], shown: Sequence[Hit],
                    chosen: set[int], floor_keep: int | None = None) -> tuple[list[Hit], int]:
    """The hits a reply keeps: the ``shown`` ones it names by number (``chosen``, 1-based) and the question's floor
    (``question_floor``, ``floor_keep`` of them), in retrieval order (``hits``); with how many of them the floor
    added."""
    marked = [h for i, h in enumerate(shown, start=1) if i in chosen]
    keep = {hit_key(h) for h in marked}
    floor = {hit_key(h) for h in question_floor(ctx, query, shown, marked, floor_keep)} - keep
    return [h for h in hits if hit_key(h) in keep | floor], len(floor)


# --- near-duplicate sub-queries ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deduped:
    """Result of ``dedup_queries``: the queries to keep and the ones dropped as duplicates."""

    kept: list[str]
    duplicates: list[str]


def dedup_queries(ctx: QueryContext, candidates: Sequence[str], earlier: Sequence[str]) -> Deduped:
    """Drop candidates that repeat an earlier query or an earlier candidate.

    Two queries are duplicates when they are equal after case/whitespace folding, or when no number, year, name,
    negation or extreme tells them apart (``dedup_rules.lexically_distinct``) and the cosine of their embeddings
    reaches ``ctx.dedup_threshold`` (``query.dedup_threshold``, else the one calibrated for the embedding model;
    docs/benchmarks.md "Sub-query dedup calibration"). Embeddings are unit vectors, so cosine = dot product.
    A pair with a word the embedder cannot see (``ctx.embed_sees``: ``[UNK]`` for its tokenizer) is compared as
    text only (``dedup_rules.same_text``). Empty candidates are dropped silently.
    """
    kept: list[str] = []
    duplicates: list[str] = []
    threshold = ctx.dedup_threshold
    seen = [(q, _embedding(ctx, q)) for q in earlier]
    folded = {fold_query(q) for q in earlier}
    for query in candidates:
        query = query.strip()
        if not query:
            continue
        if fold_query(query) in folded:
            duplicates.append(query)
            continue
        vec = _embedding(ctx, query)
        if any(_duplicate(ctx, query, vec, q, v, threshold) for q, v in seen):
            duplicates.append(query)
            continue
        kept.append(query)
        seen.append((query, vec))
        folded.add(fold_query(query))
    return Deduped(kept, duplicates)


def _duplicate(ctx: QueryContext, a: str, va: np.ndarray, b: str, vb: np.ndarray, threshold: float) -> bool:
    if not (ctx.embed_sees(a) and ctx.embed_sees(b)):
        return same_text(a, b)  # "[UNK] Milvus" embeds like every other "[UNK] Milvus"
    return float(np.dot(va, vb)) >= threshold and not lexically_distinct(a, b)


def fold_query(text: str) -> str:
    """A query for exact comparison: case-folded, whitespace collapsed, final punctuation removed."""
    return " ".join(text.casefold().split()).rstrip("?.!。？！ ")


def _embedding(ctx: QueryContext, text: str) -> np.ndarray:
    return np.asarray(ctx.embed(text), dtype=np.float32).reshape(-1)


# --- concurrency ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome(Generic[R]):
    """What one concurrent job gave: its ``value``, or the ``error`` it raised, or neither (``ran`` False: it was
    not started because an earlier job failed)."""

    value: R | None = None
    error: Exception | None = None
    ran: bool = True


def in_parallel(ctx: QueryContext, jobs: Sequence[Callable[[QueryContext], R]]) -> list[Outcome[R]]:
    """Run ``jobs`` on up to ``query.concurrency`` threads, each with a context whose events are held back and
    emitted in job order (job i's events once jobs 0..i are done), so the event stream reads as if the jobs ran one
    after the other. After a job fails, jobs not yet started are skipped.

    One job, or ``query.concurrency`` 1, runs in the calling thread, in order.
    """
    workers = min(ctx.settings.concurrency, len(jobs))
    if workers <= 1:
        outcomes: list[Outcome[R]] = []
        for job in jobs:
            if any(o.error for o in outcomes):
                outcomes.append(Outcome(ran=False))
                continue
            try:
                outcomes.append(Outcome(job(ctx)))
            except Exception as exc:  # returned to the caller, which decides (budget stop, or re-raise)
                outcomes.append(Outcome(error=exc))
        return outcomes
    failed = threading.Event()
    buffers: list[list[Event]] = [[] for _ in jobs]

    def run(index: int) -> Outcome[R]:
        if failed.is_set():
            return Outcome(ran=False)
        try:
            return Outcome(jobs[index](replace(ctx, emit=buffers[index].append)))
        except Exception as exc:
            failed.set()
            return Outcome(error=exc)

    results: list[Outcome[R]] = []
    with ThreadPoolExecutor(workers, thread_name_prefix="deepsearcher-query") as pool:
        for index, future in enumerate([pool.submit(run, i) for i in range(len(jobs))]):
            results.append(future.result())
            for event in buffers[index]:
                ctx.emit(event)
    return results
