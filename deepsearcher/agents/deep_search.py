"""DeepSearch: decompose → route → retrieve → filter → reflect → repeat → synthesise (DESIGN.md "Query flow").

``run`` reads like the description in DESIGN.md ("Query flow"); each step is a small typed function with a documented
fallback when the model's reply stays unusable after one retry:

==============  ==========================================  =====================================
step            reply schema                                 fallback
==============  ==========================================  =====================================
decompose       ``{"sub_queries": [str]}``                   the original question
route           ``{"collections": [str]}`` (router.py)       all collections
relevance       ``{"relevant": [int]}``                      keep all chunks
reflect         ``{"gap_queries": [str]}``                   no gaps (stop)
==============  ==========================================  =====================================

Unlike the reference system, relevance is **one batched call per sub-query** over all its new chunks, not one call
per chunk; routing is skipped with one collection; near-duplicate sub-queries are dropped by embedding similarity;
the loop also stops on the optional token budget; gaps still open at the end are listed in the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from pydantic import BaseModel, Field, field_validator, model_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.citations import gaps_note
from deepsearcher.agents.router import route
from deepsearcher.agents.state import FunctionAgent, QueryContext
from deepsearcher.agents.steps import answer_hits, ask, chunk_ref, dedup_queries, hit_key, retrieve, synthesise
from deepsearcher.events import QueryAccepted, QueryGaps, QueryRouted, QuerySubQueries
from deepsearcher.types import Hit, Report

NAME = "deep_search"
MAX_GAPS = 3
REFLECT_EXCERPT_CHARS = 300
REFLECT_MAX_CHUNKS = 30


def _wrap(key: str):  # noqa: ANN202 - a pydantic validator descriptor
    """A ``mode="before"`` validator accepting a bare list (or one string) for the single list field ``key``.

    The list field itself stays required: JSON that names another key is a wrong reply (retried), not an empty one.
    """

    def wrap(cls: type, value: object) -> object:
        if isinstance(value, list):
            return {key: value}
        if isinstance(value, str):
            return {key: [value] if value.strip() else []}
        return value

    return model_validator(mode="before")(classmethod(wrap))  # type: ignore[arg-type]


def no_placeholders(values: list[str]) -> list[str]:
    """Strip items; reject a list made only of copied template placeholders (``<query 1>``); drop empty items."""
    kept = [v.strip() for v in values if not prompts.is_placeholder(v)]
    if values and not kept and any(v.strip() for v in values):
        raise ValueError("the reply repeats the example placeholders instead of real queries")
    return kept


class Decomposition(BaseModel):
    """``{"sub_queries": [str]}`` (at least one real query)."""

    sub_queries: list[str] = Field(min_length=1)
    _bare = _wrap("sub_queries")

    @field_validator("sub_queries")
    @classmethod
    def _real(cls, values: list[str]) -> list[str]:
        kept = no_placeholders(values)
        if not kept:
            raise ValueError("no sub-queries given")
        return kept


class Relevance(BaseModel):
    """``{"relevant": [int]}``: 1-based numbers of helpful chunks (a list of one true/false flag per chunk, or
    numbers written as strings such as ``"[2]"``, are accepted too)."""

    relevant: list[int]
    _bare = _wrap("relevant")

    @field_validator("relevant", mode="before")
    @classmethod
    def _flags_and_strings(cls, value: object) -> object:
        if not isinstance(value, list):
            return value
        if value and all(isinstance(v, bool) for v in value):
            return [i for i, flag in enumerate(value, start=1) if flag]
        out: list[object] = []
        for v in value:
            if isinstance(v, str):
                digits = re.search(r"\d+", v)
                if digits:
                    out.append(int(digits.group()))
            elif not isinstance(v, bool):
                out.append(v)
        return out


class Reflection(BaseModel):
    """``{"gap_queries": [str]}``: empty when the information is sufficient."""

    gap_queries: list[str]
    _bare = _wrap("gap_queries")

    @field_validator("gap_queries")
    @classmethod
    def _real(cls, values: list[str]) -> list[str]:
        return no_placeholders(values)


def decompose(ctx: QueryContext) -> list[str]:
    """Split the question into at most ``query.max_sub_queries`` sub-queries (fallback: the question itself)."""
    limit = ctx.settings.max_sub_queries
    reply = ask(ctx, "decompose", prompts.DECOMPOSE.format(max_sub_queries=limit, question=ctx.question),
                Decomposition, Decomposition(sub_queries=[ctx.question]), "searching the original question")
    return reply.value.sub_queries[:limit] or [ctx.question]


def filter_relevant(ctx: QueryContext, query: str, hits: Sequence[Hit]) -> tuple[list[Hit], bool]:
    """Keep the hits the model marks as helpful: one call for all of them (fallback: keep all).

    Returns:
        ``(kept hits in retrieval order, fell_back)``; no call and ``([], False)`` for no hits.
    """
    if not hits:
        return [], False
    prompt = prompts.RELEVANCE.format(question=ctx.question, query=query, count=len(hits),
                                      chunks=prompts.chunk_list([h.chunk for h in hits]))
    reply = ask(ctx, "relevance", prompt, Relevance, Relevance(relevant=list(range(1, len(hits) + 1))),
                "keeping every retrieved chunk")
    chosen = set(reply.value.relevant)
    return [h for i, h in enumerate(hits, start=1) if i in chosen], reply.fell_back


def reflect(ctx: QueryContext, searched: Sequence[str], accepted: Sequence[Hit]) -> list[str]:
    """Propose at most 3 gap queries for what is still missing ([] = enough; fallback: [], i.e. stop)."""
    shown = [h.chunk for h in accepted[:REFLECT_MAX_CHUNKS]]
    prompt = prompts.REFLECT.format(question=ctx.question, queries=prompts.bullet_list(searched),
                                    chunks=prompts.chunk_list(shown, REFLECT_EXCERPT_CHARS), max_gaps=MAX_GAPS)
    reply = ask(ctx, "reflect", prompt, Reflection, Reflection(gap_queries=[]), "stopping the research here")
    return reply.value.gap_queries[:MAX_GAPS]


def search_round(ctx: QueryContext, iteration: int, queries: Sequence[str], accepted: dict[str, Hit],
                 rankings: list[list[Hit]]) -> None:
    """Route, retrieve and filter every query of one iteration; accepted hits go into ``accepted`` and each query's
    ranking into ``rankings`` (both in place)."""
    for query in queries:
        where = route(ctx, query)
        ctx.emit(QueryRouted(iteration=iteration, sub_query=query, collections=where.collections,
                             dropped=where.dropped, fell_back=where.fell_back))
        ranking = retrieve(ctx, query, where.collections)
        rankings.append(ranking)
        new = [h for h in ranking if hit_key(h) not in accepted]
        kept, fell_back = filter_relevant(ctx, query, new)
        for hit in kept:
            accepted[hit_key(hit)] = hit
        ctx.emit(QueryAccepted(iteration=iteration, sub_query=query, retrieved=len(new), accepted=len(kept),
                               chunks=[chunk_ref(h) for h in kept], fell_back=fell_back))


@dataclass(frozen=True)
class Research:
    """What the loop gathered: every query searched, iterations run, accepted hits, each query's retrieved ranking,
    gap queries still open."""

    searched: list[str]
    iterations: int
    accepted: list[Hit]
    rankings: list[list[Hit]]
    open_gaps: list[str]


def research(ctx: QueryContext) -> Research:
    """Steps 1-6: decompose, then search rounds while gaps remain, iterations < max_iter and the budget holds."""
    first = dedup_queries(ctx, decompose(ctx), [])
    pending, duplicates = first.kept, first.duplicates
    searched: list[str] = []
    accepted: dict[str, Hit] = {}
    rankings: list[list[Hit]] = []
    iteration = 0
    open_gaps: list[str] = []
    while pending:
        iteration += 1
        ctx.emit(QuerySubQueries(iteration=iteration, sub_queries=pending, duplicates=duplicates))
        search_round(ctx, iteration, pending, accepted, rankings)
        searched += pending
        proposed = reflect(ctx, searched, list(accepted.values()))
        gaps = dedup_queries(ctx, proposed, searched)
        stop = ctx.stop_reason(bool(proposed), gaps.kept, iteration)
        ctx.emit(QueryGaps(iteration=iteration, gaps=gaps.kept, stop=stop,  # type: ignore[arg-type]
                           tokens=ctx.llm.total_tokens))
        if stop is not None:
            open_gaps = gaps.kept
            break
        pending, duplicates = gaps.kept, gaps.duplicates
    return Research(searched, iteration, list(accepted.values()), rankings, open_gaps)


def run(ctx: QueryContext) -> Report:
    """Answer ``ctx.question`` with a cited report (step 7 after ``research``)."""
    found = research(ctx)
    answer, sources, removed = synthesise(ctx, answer_hits(ctx, found.accepted, found.rankings))
    if found.open_gaps:
        answer = f"{answer}\n\n{gaps_note(found.open_gaps)}"
    return Report(question=ctx.question, answer=answer, sources=sources, sub_queries=found.searched,
                  iterations=found.iterations, usage=ctx.llm.usage(), agent=NAME, removed_citations=removed,
                  gaps=found.open_gaps)


def agent(options: object = None) -> FunctionAgent:
    """The ``deep_search`` agent (registry factory; no options)."""
    return FunctionAgent(NAME, run)
