"""The four actions of a DeepResearch step: search, read, reflect, answer. Each changes the run's knowledge and state,
writes a diary entry and emits its events; the LLM calls they make (routing, the evaluator) go through
``ctx.model`` like every call, so a spent budget stops them with ``BudgetExhausted``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from deepsearcher.agents.deep_research.evaluator import Verdict, checks_for, evaluate
from deepsearcher.agents.deep_research.knowledge import WEB, KnowledgeItem
from deepsearcher.agents.deep_research.query_guard import query_refusal
from deepsearcher.agents.deep_research.run import Run
from deepsearcher.agents.deep_research.schemas import MAX_ITEMS, MAX_QUERIES, MAX_QUESTIONS
from deepsearcher.agents.deep_research.state import FailedAttempt
from deepsearcher.agents.router import route_and_retrieve
from deepsearcher.agents.steps import chunk_ref, dedup_queries
from deepsearcher.errors import DeepSearcherError, first_line
from deepsearcher.events import (
    QueryAccepted, QueryEvaluation, QueryFallback, QueryGaps, QueryRead, QuerySubQueries, QueryWebSearch,
)
from deepsearcher.types import Chunk, Evaluation, Hit, WebOutcome, WebSearchOutcome

RANKED_PASSAGES = 100
"""Passages of a read page compared with the question at most (the first ones of the page)."""


@dataclass(frozen=True)
class Outcome:
    """What an action did to the current question.

    Attributes:
        solved: the current question was answered and the answer accepted.
        final: the accepted answer to the original question (ends the run), else None.
        rejected: an answer was rejected by the evaluator.
        verdict: the evaluator's verdict (answer actions).
    """

    solved: bool = False
    final: str | None = None
    rejected: bool = False
    verdict: Verdict | None = None


def _numbers(items: Sequence[KnowledgeItem]) -> str:
    return ", ".join(f"[{i.number}]" for i in items)


# --- search --------------------------------------------------------------------------------------------------------
def search(run: Run, queries: Sequence[str]) -> Outcome:
    """Search up to 3 expressions not run before (embedding dedup over every earlier query) in the collections the
    router picks, and on the web when it is on; every new chunk or result becomes a knowledge item."""
    ctx, state, store = run.ctx, run.state, run.store
    fresh = dedup_queries(ctx, list(queries)[:MAX_QUERIES], store.queries)
    ctx.emit(QuerySubQueries(iteration=state.step, sub_queries=fresh.kept, duplicates=fresh.duplicates))
    added: list[KnowledgeItem] = []
    for query in fresh.kept:
        store.queries.append(query)
        hits = route_and_retrieve(ctx, state.step, query)  # routing asks the model: the budget may stop it here
        new = [(hit, item) for hit in hits for item, is_new in [store.add_hit(hit, state.current)] if is_new]
        # every new chunk becomes knowledge (no relevance call: the step prompt shows the most similar items)
        ctx.emit(QueryAccepted(iteration=state.step, sub_query=query, retrieved=len(new), accepted=len(new),
                               chunks=[chunk_ref(hit) for hit, _ in new], fell_back=False))
        added += [item for _, item in new]
        added += _web_search(run, query)
    shown = ", ".join(f'"{q}"' for q in fresh.kept)
    if added:
        state.empty_searches = 0
        run.note(f"searched {shown} and found {len(added)} new items: {_numbers(added)}.")
    else:
        state.empty_searches += 1
        tried = shown or ", ".join(f'"{q}"' for q in fresh.duplicates)
        run.note(f"searched {tried} but found nothing new (queries repeating earlier ones are not run again); "
                 "try another angle.")
    return Outcome()


def _web_search(run: Run, query: str) -> list[KnowledgeItem]:
    """Web results for ``query`` as knowledge; a provider error switches the web off for the run (with a message)."""
    web = run.tools.web
    if web is None:
        return []
    ctx, store, record = run.ctx, run.store, run.state.web_searches
    if not run.web_on:
        record.append(WebSearchOutcome(query, web.name, "not_sent", 0, "web search was off after an earlier failure"))
        ctx.emit(QueryWebSearch(query=query, provider=web.name, results=0, urls=[], new=0, error="",
                                outcome="not_sent"))
        return []
    refusal = _private_query(run, query)
    if refusal:
        record.append(WebSearchOutcome(query[:80], web.name, "not_sent", 0, refusal))
        ctx.emit(QueryWebSearch(query=query[:80], provider=web.name, results=0, urls=[], new=0,
                                error=f"not sent: {refusal}", outcome="not_sent"))
        run.note(f"the web search for \"{query[:80]}\" was not sent: {refusal}. Write short search expressions in "
                 "your own words; collection text never goes to the web.")
        return []
    try:
        results = web.search(query, max_results=run.options.web_results)
    except DeepSearcherError as exc:
        run.web_on = False
        message = str(exc)
        record.append(WebSearchOutcome(query, web.name, "failed", 0, first_line(message)))
        ctx.emit(QueryWebSearch(query=query, provider=web.name, results=0, urls=[], new=0, error=message,
                                outcome="failed"))
        ctx.emit(QueryFallback(step="web_search", error=first_line(message),
                               fallback="searching the collections only for the rest of this query"))
        return []
    degraded = [str(d) for d in getattr(web, "degraded", None) or []]  # engines the provider said did not answer
    outcome: WebOutcome = "degraded" if degraded else "ok" if results else "no_results"
    record.append(WebSearchOutcome(query, web.name, outcome, len(results), "; ".join(degraded)))
    new = [item for item, added in (store.add_web(r, run.state.current) for r in results) if added]
    ctx.emit(QueryWebSearch(query=query, provider=web.name, results=len(results), urls=[r.url for r in results],
                            new=len(new), error="", outcome=outcome, degraded=degraded))
    return new


def _private_query(run: Run, query: str) -> str | None:
    """Why ``query`` may not go to the web search provider (``query_guard``), or None."""
    private = (text for item in run.store if item.kind == "chunk" and item.chunk is not None
               for text in (item.text, item.chunk.title, item.chunk.source))
    return query_refusal(query, private, run.ctx.question, max_chars=run.options.web_query_max_chars,
                         run_words=run.options.web_query_private_words)


# --- read ----------------------------------------------------------------------------------------------------------
def read(run: Run, numbers: Sequence[int]) -> Outcome:
    """Open up to 3 unread items: a chunk with its neighbours in its document, or a web result's page (through the
    crawler; the passages most similar to the question become knowledge). Unknown numbers are ignored; with none
    left, the first unread items are opened."""
    ctx, state, store, tools = run.ctx, run.state, run.store, run.tools
    unread = store.unread(chunks=tools.chunks_around is not None)
    by_number = {item.number: item for item in unread}
    chosen = [by_number[n] for n in dict.fromkeys(numbers) if n in by_number][:MAX_ITEMS] or unread[:MAX_ITEMS]
    added: list[KnowledgeItem] = []
    failed: list[str] = []
    for item in chosen:
        store.opened.add(item.id)
        try:
            added += _open_chunk(run, item) if item.kind == "chunk" else _open_page(run, item)
        except _Unreadable as exc:
            failed.append(f"{item.url or item.where}: {exc}")
    ctx.emit(QueryRead(step=state.step, opened=[i.where for i in chosen], added=len(added), failed=failed))
    what = _numbers(chosen)
    if added:
        run.note(f"read {what} in full and found {len(added)} new items: {_numbers(added)}.")
    else:
        run.note(f"read {what} but found nothing new" + (f" ({'; '.join(failed)})." if failed else "."))
    return Outcome()


class _Unreadable(Exception):
    """An item could not be opened; the message says why."""


def _open_chunk(run: Run, item: KnowledgeItem) -> list[KnowledgeItem]:
    around = run.tools.chunks_around
    if around is None or item.chunk is None:
        raise _Unreadable("the store cannot open chunks")
    try:
        chunks = around(item.collection, item.chunk, run.options.read_window)
    except DeepSearcherError as exc:
        raise _Unreadable(first_line(exc)) from None
    added = []
    for chunk in chunks:
        new, is_new = run.store.add_hit(Hit(chunk, 0.0, item.collection), run.state.current)
        run.store.opened.add(new.id)
        if is_new:
            added.append(new)
    return added


def _open_page(run: Run, item: KnowledgeItem) -> list[KnowledgeItem]:
    pages, url = run.tools.pages, item.url
    if pages is None or url is None:
        raise _Unreadable("web pages cannot be read in this run")
    page = pages.read(url)
    if page.error:
        raise _Unreadable(page.error)
    added = []
    for chunk in _best_passages(run, page.passages):
        new, is_new = run.store.add(f"{page.url}#{chunk.id}", "page", run.state.current, chunk.text, chunk=chunk,
                                    collection=WEB)
        if is_new:
            added.append(new)
    return added


def _best_passages(run: Run, passages: Sequence[Chunk]) -> list[Chunk]:
    """The ``page_passages`` passages most similar to the current question, in page order."""
    pool = list(passages[:RANKED_PASSAGES])
    keep = run.options.page_passages
    if len(pool) <= keep:
        return pool
    q = np.asarray(run.ctx.embed(run.state.current), dtype=np.float32).reshape(-1)
    scores = [float(np.dot(q, np.asarray(run.ctx.embed(c.text), dtype=np.float32).reshape(-1))) for c in pool]
    best = sorted(range(len(pool)), key=lambda i: -scores[i])[:keep]
    return [pool[i] for i in sorted(best)]


# --- reflect -------------------------------------------------------------------------------------------------------
def reflect(run: Run, questions: Sequence[str]) -> Outcome:
    """Queue up to 3 new gap questions (embedding dedup over every question asked) at the head of the queue."""
    ctx, state, options = run.ctx, run.state, run.options
    fresh = dedup_queries(ctx, list(questions)[:MAX_QUESTIONS], state.asked)
    room = max(0, options.max_gaps - len(state.open_gaps()))
    gaps = fresh.kept[:room]
    state.add_gaps(gaps)
    ctx.emit(QueryGaps(iteration=state.step, gaps=gaps, stop=None, tokens=ctx.llm.total_tokens))
    if gaps:
        run.note("reflected on what is missing and queued these questions: " + "; ".join(f'"{g}"' for g in gaps)
                 + ".")
    else:
        run.note("reflected, but every question you proposed had been asked before; think from another angle.")
    return Outcome()


# --- answer --------------------------------------------------------------------------------------------------------
def answer(run: Run, text: str) -> Outcome:
    """Send the answer to the evaluator. A pass on the original question ends the run; a pass on a gap question
    stores the answer as knowledge; a fail stores the critique and plan and counts a bad attempt."""
    ctx, state, store = run.ctx, run.state, run.store
    question = state.current
    original = state.is_original(question)
    verdict = evaluate(run, question, text, checks_for(run, question))
    ctx.emit(QueryEvaluation(step=state.step, question=question, original=original, checks=verdict.checks,
                             passed=verdict.passed, critique=verdict.critique, plan=verdict.plan))
    state.evaluations.append(Evaluation(state.step, question, verdict.passed, dict(verdict.checks),
                                        verdict.critique))
    if verdict.passed:
        if original:
            run.note("answered the original question and the evaluator accepted the answer.")
            return Outcome(solved=True, final=text, verdict=verdict)
        item = store.add_answer(question, text, [i.id for i in store.cited(text)])
        run.note(f'answered the gap question "{question}"; the answer was accepted and kept as knowledge '
                 f"[{item.number}].")
        return Outcome(solved=True, verdict=verdict)
    state.bad_attempts += 1
    state.failed.append(FailedAttempt(state.step, question, text, verdict.critique, verdict.plan,
                                      dict(verdict.checks)))
    run.note(f'answered "{question}" but the evaluator rejected it: {verdict.critique}')
    return Outcome(rejected=True, verdict=verdict)
