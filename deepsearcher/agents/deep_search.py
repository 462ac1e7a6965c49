"""DeepSearch: decompose → route → retrieve → filter → reflect → repeat → synthesise (DESIGN.md "Query flow").

``research`` reads like the description in DESIGN.md; each step is a small typed function with a documented
fallback when the model's reply stays unusable after one retry (reply schemas in ``replies``):

==============  ==========================================  =====================================
step            reply schema                                 fallback
==============  ==========================================  =====================================
decompose       ``{"sub_queries": [str]}``                   the original question
route           ``{"collections": [str], "query": str}``     all collections, the sub-query as is
relevance       ``{"relevant": [int]}``                      keep all chunks
reflect         ``{"gap_queries": [str]}``                   no gaps (stop)
==============  ==========================================  =====================================

Unlike the reference system: the original question is searched in round 1 next to its sub-queries; relevance is
**one batched call per sub-query** over the chunks no earlier sub-query brought, not one call per chunk; the
sub-queries of a round are routed, retrieved and judged **concurrently** (``query.concurrency`` threads; events keep
the sub-queries' order); routing is skipped with one collection; near-duplicate sub-queries are dropped (embedding
similarity with a lexical guard); reflection sees the round's new evidence in full, a compact line per passage found
so far and the queries that found nothing; every prompt is fitted to the model's window; the token budget is hard
(checked before every call, with room kept for the report); gaps still open at the end are listed in the report.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import ClassVar, Sequence

from deepsearcher.agents import prompts
from deepsearcher.agents.base import AgentCapabilities
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.citations import location
from deepsearcher.agents.deep_research.knowledge import KnowledgeStore
from deepsearcher.agents.echoes import without_locations
from deepsearcher.agents.long_report.outline import Outline, Section
from deepsearcher.agents.long_report.sections import SectionFinding, write_section
from deepsearcher.agents.relevance_check import (
    check_passage, check_position, names_none_shown, numbers_past_check, with_check,
)
from deepsearcher.agents.replies import Decomposition, Reflection, Relevance, no_placeholders
from deepsearcher.agents.report import Evidence, report_reserve, write_report
from deepsearcher.agents.report_markdown import gaps_note
from deepsearcher.agents.router import route_and_retrieve
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import (
    ask, ask_fitted, by_collection, chunk_ref, dedup_queries, fold_query, in_parallel, kept_with_floor,
)
from deepsearcher.events import QueryAccepted, QueryBudget, QueryFallback, QueryGaps, QuerySubQueries
from deepsearcher.types import Hit, Report
from deepsearcher.vectordb.fusion import fused_priority, hit_key

__all__ = ["Decomposition", "Judged", "Reflection", "Relevance", "agent", "decompose", "filter_relevant",
           "no_placeholders", "reflect", "research", "run"]

NAME = "deep_search"
MAX_GAPS = 3
#: what reflect's prompt items are: this round's chunks in full, then a line for every chunk found (a helper read
#: "left out 3 of 42 chunks" of a run that had found 21)
REFLECT_ITEMS = "items (new chunks in full, one line per chunk found)"


def decompose(ctx: QueryContext) -> list[str]:
    """Split the question into at most ``query.max_sub_queries`` sub-queries (fallback: the question itself)."""
    limit = ctx.settings.max_sub_queries
    reply = ask(ctx, "decompose", prompts.DECOMPOSE.format(max_sub_queries=limit, question=ctx.question),
                Decomposition, Decomposition(sub_queries=[ctx.question]), "searching the original question")
    return reply.value.sub_queries[:limit] or [ctx.question]


@dataclass(frozen=True)
class Judged:
    """One relevance call's outcome: the hits kept (retrieval order), whether the step fell back to keeping them
    all, and how many of them were kept by rank, not marked by the model (``question_floor``)."""

    kept: list[Hit]
    fell_back: bool
    by_rank: int = 0


def filter_relevant(ctx: QueryContext, query: str, hits: Sequence[Hit]) -> Judged:
    """Keep the hits the model marks as helpful: one call for all of them (fallback: keep all).

    The prompt is fitted to the window: when the chunks do not all fit, excerpts are shortened, then the chunks of
    worst rank in their collection's list are left out (and count as not kept). With ``query.relevance_check`` the
    prompt also shows a check passage unrelated to the question (``relevance_check``): a reply that marks it was not
    judged, so that call keeps every chunk; after ``query.relevance_check_strikes`` such replies every later call of
    the run keeps every chunk without asking.
    For the question itself (searched first in round 1), when the reply keeps any chunk, the question's
    best-ranked chunks shown in the collections it kept from are kept too (``question_floor``).

    Returns:
        ``Judged``: kept hits in retrieval order, fell_back, by_rank; no call and nothing kept for no hits.
    """
    if not hits:
        return Judged([], False)
    checking = ctx.settings.relevance_check
    if checking and ctx.relevance_check.failed:
        return Judged(list(hits), True)
    passage = check_passage(ctx.question, query) if checking else None

    def render(shown: Sequence[Hit], cap: int | None) -> str:
        chunks = [h.chunk for h in shown]
        if passage is not None:
            chunks = with_check(chunks, passage, check_position(query, len(shown)))
        return prompts.RELEVANCE.format(question=ctx.question, query=query, count=len(chunks),
                                        chunks=prompts.chunk_list(chunks, cap))

    reply, shown = ask_fitted(ctx, "relevance", render, hits, fused_priority(hits, by_collection(hits)), Relevance,
                              lambda kept: Relevance(relevant=list(range(1, len(kept) + 1))),
                              "keeping every retrieved chunk")
    if reply.fell_back:
        return Judged(list(hits), True)  # every retrieved chunk, those the window left out too
    chosen = set(reply.value.relevant)
    if names_none_shown(ctx.emit, chosen, len(shown) + (passage is not None), step="relevance"):
        return Judged(list(hits), True)
    if passage is not None:
        past = numbers_past_check(ctx.relevance_check, ctx.emit, chosen, check_position(query, len(shown)), passage,
                                  step="relevance",
                                  picked="marked {check} as helpful, so this reply did not judge the chunks")
        if past is None:
            return Judged(list(hits), True)
        chosen = past
    kept, by_rank = kept_with_floor(ctx, query, hits, shown, chosen)
    return Judged(kept, False, by_rank)


@dataclass
class Found:
    """What the research loop has gathered so far (mutable state of one run, not a result)."""

    searched: list[str] = field(default_factory=list)
    accepted: dict[str, Hit] = field(default_factory=dict)
    rankings: list[list[Hit]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unjudged: dict[str, Hit] = field(default_factory=dict)
    rejected: dict[str, tuple[int, str, Hit]] = field(default_factory=dict)  # key -> (iteration, query, hit)


def reflect(ctx: QueryContext, found: Found, new: Sequence[Hit]) -> list[str]:
    """Propose at most 3 gap queries for what is still missing ([] = enough; fallback: [], i.e. stop); a source
    location copied from a passage's header is taken out of a query.

    The prompt shows this round's newly accepted chunks in full first, then one compact line per chunk accepted so
    far, then the queries that found nothing useful; fitted to the window (whole lines of older chunks go before
    the new chunks' excerpts are shortened).
    """
    fresh = {hit_key(h) for h in new}
    older = [h for h in found.accepted.values() if hit_key(h) not in fresh]
    items = [("new", h) for h in new] + [("line", h) for h in older] + [("line", h) for h in new]
    rank = fused_priority([h for _, h in items], found.rankings)
    tier = [0 if kind == "new" else 1 if hit_key(h) not in fresh else 2 for kind, h in items]
    priority = [t * 1e6 + r for t, r in zip(tier, rank)]  # a rank is minus a sum of 1/(60 + r): tiers never mix

    def render(kept: Sequence[tuple[str, Hit]], cap: int | None) -> str:
        full = [h.chunk for kind, h in kept if kind == "new"]
        lines = [prompts.found_line(h.chunk) for kind, h in kept if kind == "line"]
        return prompts.REFLECT.format(question=ctx.question, queries=prompts.bullet_list(found.searched),
                                      failed=prompts.bullet_list(found.failed),
                                      new_chunks=prompts.chunk_list(full, cap), found="\n".join(lines) or "(nothing)",
                                      max_gaps=MAX_GAPS)

    reply, _ = ask_fitted(ctx, "reflect", render, items, priority, Reflection, lambda kept: Reflection(gap_queries=[]),
                          "stopping the research here", unit=REFLECT_ITEMS)
    # a passage's header copied as a query ("Amri language (/data/corpus.json)", the 0.5B model): its title is searched
    shown = [(h.chunk.title, location(h.chunk)) for _, h in items]
    queries = (" ".join(without_locations(q, shown).split()) for q in reply.value.gap_queries)
    return [q for q in queries if q][:MAX_GAPS]


def _judge(ctx: QueryContext, iteration: int, query: str, new: list[Hit]) -> Judged:
    judged = filter_relevant(ctx, query, new)
    ctx.emit(QueryAccepted(iteration=iteration, sub_query=query, retrieved=len(new), accepted=len(judged.kept),
                           chunks=[chunk_ref(h) for h in judged.kept], fell_back=judged.fell_back,
                           by_rank=judged.by_rank))
    return judged


def search_round(ctx: QueryContext, iteration: int, queries: Sequence[str], found: Found) -> list[Hit]:
    """Route and retrieve every query of one round, then judge each query's new chunks, both concurrently.

    A chunk retrieved by several queries of the round is judged once, with the first of them. Accepted chunks go
    into ``found`` (as do the rankings, the queries that kept nothing, and chunks left unjudged by a budget stop).

    Returns:
        The chunks accepted in this round.

    Raises:
        BudgetExhausted: the budget stopped a call; what the round finished before is recorded in ``found``.
    """
    retrieved = in_parallel(ctx, [functools.partial(route_and_retrieve, iteration=iteration, query=q)
                                  for q in queries])
    assigned: dict[str, list[Hit]] = {}
    taken = set(found.accepted)
    for query, outcome in zip(queries, retrieved):
        ranking = outcome.value or []
        if outcome.value is not None:
            found.rankings.append(ranking)
        assigned[query] = [h for h in ranking if hit_key(h) not in taken]
        taken.update(hit_key(h) for h in assigned[query])
    routing_errors = [o.error for o in retrieved if o.error is not None]
    if routing_errors:
        for hits in assigned.values():
            found.unjudged.update((hit_key(h), h) for h in hits)
        raise routing_errors[0]
    judged = in_parallel(ctx, [functools.partial(_judge, iteration=iteration, query=q, new=assigned[q])
                               for q in queries])
    new: list[Hit] = []
    for query, verdict in zip(queries, judged):
        if verdict.value is None:
            found.unjudged.update((hit_key(h), h) for h in assigned[query])
            continue
        kept = verdict.value.kept
        new += kept
        found.accepted.update((hit_key(h), h) for h in kept)
        chosen = {hit_key(h) for h in kept}
        found.rejected.update((hit_key(h), (iteration, query, h)) for h in assigned[query] if hit_key(h) not in chosen)
    new += readmit(ctx, found)
    for query, outcome in zip(queries, retrieved):  # a query whose results were all judged unhelpful
        if not any(hit_key(h) in found.accepted or hit_key(h) in found.unjudged for h in outcome.value or []):
            found.failed.append(query)
    errors = [o.error for o in judged if o.error is not None]
    if errors:
        raise errors[0]
    return new


def readmit(ctx: QueryContext, found: Found) -> list[Hit]:
    """Once the model failed the relevance check (``relevance_check``: ``query.relevance_check_strikes`` replies
    marked the check passage), the chunks its earlier replies of the run did not keep are accepted too — those left
    out by the reply and those the window fitter kept out of the prompt, as a call after the failure keeps every
    retrieved chunk: a ``query.fallback`` event says how many, and one more ``query.accepted`` event per sub-query
    lists them (``fell_back`` set).

    Returns:
        The chunks accepted now (none while the model passes the check).
    """
    if not (ctx.settings.relevance_check and ctx.relevance_check.failed and found.rejected):
        return []
    groups: dict[tuple[int, str], list[Hit]] = {}
    for key, (iteration, query, hit) in found.rejected.items():
        if key not in found.accepted:
            groups.setdefault((iteration, query), []).append(hit)
    found.rejected.clear()
    back = [h for hits in groups.values() for h in hits]
    if not back:
        return []
    found.accepted.update((hit_key(h), h) for h in back)
    ctx.emit(QueryFallback(step="relevance", error="earlier relevance replies of this run came from the model "
                                                   "that picked the check passage",
                           fallback=f"accepted the {len(back)} chunk(s) they did not keep"))
    for (iteration, query), hits in groups.items():
        ctx.emit(QueryAccepted(iteration=iteration, sub_query=query, retrieved=len(hits), accepted=len(hits),
                               chunks=[chunk_ref(h) for h in hits], fell_back=True))
    return back


@dataclass(frozen=True)
class Research:
    """What the loop gathered: every query searched, iterations run, accepted hits, each retrieval's ranking, gap
    queries still open, whether it stopped on the token budget, and chunks it retrieved but could not judge."""

    searched: list[str]
    iterations: int
    accepted: list[Hit]
    rankings: list[list[Hit]]
    open_gaps: list[str]
    stopped_on_budget: bool = False
    unjudged: list[Hit] = field(default_factory=list)


def _budget_stop(ctx: QueryContext, exc: BudgetExhausted, iteration: int) -> None:
    ctx.emit(QueryBudget(step=exc.step, used=exc.used, budget=exc.limit, reserve=ctx.budget.reserve))
    if iteration:
        ctx.emit(QueryGaps(iteration=iteration, gaps=[], stop="token_budget", tokens=ctx.llm.total_tokens))


def research(ctx: QueryContext) -> Research:
    """Steps 1-6: decompose, then search rounds while gaps remain, iterations < max_iter and the budget holds."""
    found = Found()
    ctx.budget.set_reserve(report_reserve(ctx, [], [ctx.question]))
    iteration, open_gaps, stop = 0, [], None
    try:
        planned = [q for q in decompose(ctx) if fold_query(q) != fold_query(ctx.question)]  # the question: below
        first = dedup_queries(ctx, [ctx.question, *planned], [])
        pending, duplicates = first.kept, first.duplicates
        while pending:
            iteration += 1
            ctx.emit(QuerySubQueries(iteration=iteration, sub_queries=pending, duplicates=duplicates))
            found.searched += pending
            new = search_round(ctx, iteration, pending, found)
            ctx.budget.set_reserve(report_reserve(ctx, list(found.accepted.values()), found.searched))
            proposed = reflect(ctx, found, new)
            gaps = dedup_queries(ctx, proposed, found.searched)
            stop = ctx.stop_reason(bool(proposed), gaps.kept, iteration)
            ctx.emit(QueryGaps(iteration=iteration, gaps=gaps.kept, stop=stop,  # type: ignore[arg-type]
                               tokens=ctx.llm.total_tokens))
            if stop is not None:
                open_gaps = gaps.kept
                break
            pending, duplicates = gaps.kept, gaps.duplicates
    except BudgetExhausted as exc:
        _budget_stop(ctx, exc, iteration)
        stop = "token_budget"
    return Research(found.searched, iteration, list(found.accepted.values()), found.rankings, open_gaps,
                    stop == "token_budget", list(found.unjudged.values()))


def run(ctx: QueryContext) -> Report:
    """Answer ``ctx.question`` with a cited report (step 7 after ``research``)."""
    found = research(ctx)
    written = write_report(ctx, Evidence(found.accepted, found.rankings, found.searched,
                                         stopped_on_budget=found.stopped_on_budget, unjudged=found.unjudged))
    answer = written.answer
    if found.open_gaps:
        answer = f"{answer}\n\n{gaps_note(found.open_gaps)}"
    return Report(question=ctx.question, answer=answer, sources=written.sources, sub_queries=found.searched,
                  iterations=found.iterations, usage=ctx.llm.usage(), agent=NAME,
                  removed_citations=written.removed_citations, gaps=found.open_gaps,
                  short_answer=written.short_answer)


@dataclass(frozen=True)
class DeepSearchAgent:
    """The ``deep_search`` agent (an ``Agent``): ``run``; it also researches the sections of long reports (its
    accepted chunks join the report's knowledge, then one section-writing call)."""

    name: str = NAME
    capabilities: ClassVar[AgentCapabilities] = AgentCapabilities(sections=True)

    def run(self, ctx: QueryContext) -> Report:
        """Answer ``ctx.question`` (see ``deepsearcher.agents.base.Agent``)."""
        return run(ctx)

    def research_section(self, ctx: QueryContext, outline: Outline, section: Section,
                         store: KnowledgeStore) -> SectionFinding:
        """One section of a long report, on a share of ``query.token_budget`` whose reserve is its own
        (``long_report.sections.SectionResearcher``)."""
        sub = replace(ctx, budget=ctx.budget.share(None, ctx.budget.setting))
        found = research(sub)
        text = write_section(sub, outline, section, store,
                             Evidence(found.accepted, found.rankings, found.searched,
                                      stopped_on_budget=found.stopped_on_budget, unjudged=found.unjudged))
        return SectionFinding(text, found.open_gaps, found.searched, found.iterations)


def agent(options: object = None) -> DeepSearchAgent:
    """The ``deep_search`` agent (registry factory; no options)."""
    return DeepSearchAgent()
