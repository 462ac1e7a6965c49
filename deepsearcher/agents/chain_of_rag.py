"""ChainOfRAG: iterative follow-up questions with intermediate answers, for multi-hop factual questions.

After Wang et al. 2025, "Chain-of-Retrieval Augmented Generation" (CoRAG): the model writes the next follow-up
question from the chain of (follow-up, intermediate answer) pairs so far, that question is retrieved for, answered
briefly from its chunks, and the chain grows until the model judges it sufficient, ``max_iter`` is reached or the
token budget is spent. The final report is written from the chunks the intermediate answers relied on and the
question's best-ranked chunk (``steps.question_floor``), with the chain as notes; when no answer listed a chunk,
from those of the question's own search one relevance call keeps (``judged_when_nothing_listed``). The reference
implementation makes four LLM calls per step (follow-up, answer, supporting docs, sufficiency check). By default
(``agents.chain_of_rag.one_call``) we make one: the answer's reply lists its supporting chunks and decides the next
step (``prompts.INTERMEDIATE_NEXT``); a reply without a usable decision — none, or an answer or follow-up the check
passage caught — gets the separate follow-up call. With ``one_call: false``, two calls per step
(answer, then follow-up with the sufficiency check folded in). Measured with the bundled 1.5B model on HotpotQA
(docs/benchmarks.md): 3.35 calls per question vs 5.9, one question fewer answered of 20. With
``agents.chain_of_rag.decompose`` (off by default) one call before the first search breaks the question into its first
simple follow-up (``prompts.FIRST_FOLLOW_UP``); the first step searches it beside the question and answers it.

==============  ================================================================  ===================================
step            reply schema                                                      fallback
==============  ================================================================  ===================================
intermediate    ``{"answer": str, "supporting": [int], "enough": bool,``          no answer; keep every retrieved
                ``"follow_up": str}`` (``one_call: false``: answer, supporting)   chunk; the follow-up call decides
follow_up       ``{"enough": bool, "follow_up": str}`` (when the reply above      stop (the first step is the
                did not decide)                                                   question: no call)
first follow-up ``{"follow_up": str}`` (``decompose`` only, before the first      answer the question as asked
                search)
relevance       ``{"relevant": [int]}`` (deep_search's; only when no step         keep every chunk shown
                listed a chunk: ``judged_when_nothing_listed``)
route           ``{"collections": [str]}`` (router.py)                            all collections
==============  ================================================================  ===================================

The intermediate prompt shows a check passage (``relevance_check``): a step whose reply lists it as supporting
keeps every retrieved chunk, and after ``query.relevance_check_strikes`` such replies so does every later step of
the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Sequence

from pydantic import Field

from deepsearcher.agents import prompts
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.deep_search import filter_relevant
from deepsearcher.agents.replies import FirstFollowUp, FollowUp, Intermediate, IntermediateNext
from deepsearcher.agents.report import Evidence, per_collection, report_reserve, write_report
from deepsearcher.agents.report_markdown import gaps_note
from deepsearcher.agents.router import route
from deepsearcher.agents.base import FunctionAgent
from deepsearcher.agents.relevance_check import (
    SUPPORTING_EXAMPLE_NUMBERS, check_passage, check_position, drawn_from_check, names_none_shown, numbers_past_check,
    with_check,
)
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import (
    ask, ask_fitted, by_collection, chunk_ref, dedup_queries, kept_with_floor, question_floor, retrieve,
)
from deepsearcher.options import AgentOptions
from deepsearcher.events import (
    QueryAccepted, QueryBudget, QueryFallback, QueryGaps, QueryIntermediate, QueryRouted, QuerySubQueries,
)
from deepsearcher.types import Chunk, Hit, Report
from deepsearcher.vectordb.fusion import fused_priority, hit_key, top_ranked

__all__ = ["Answered", "ChainOfRAGOptions", "FollowUp", "Intermediate", "agent", "answer_step", "next_follow_up",
           "run"]

NAME = "chain_of_rag"
#: what a one-call reply's unusable decision gets instead (``query.fallback``)
ASKED_APART = "asking for the next follow-up in a call of its own"


class ChainOfRAGOptions(AgentOptions):
    """The ``agents.chain_of_rag`` section of config.yaml."""

    one_call: bool = Field(True, description=(
        "One LLM call per step: the intermediate answer's reply also says whether the chain is enough and writes "
        "the next follow-up question (a reply without that decision gets the separate follow-up call). False: two "
        "calls per step, answer then follow-up, each prompt with one task: with the bundled 1.5B model, 1.8x the "
        "calls and tighter short answers (docs/benchmarks.md measures both)."))
    question_floor: int = Field(2, ge=0, description=(
        "When any step's answer lists a supporting chunk, the question's own search keeps this many of its "
        "best-ranked chunks for the report too (in the collections a step listed from), whatever its first answer "
        "listed: a step lists the chunk that answers its follow-up, not every relevant one, and a comparison "
        "question's two subjects rank first and second (measured on 2WikiMultiHopQA with the bundled 1.5B model, "
        "docs/benchmarks.md). 0 = only what the answers list."))
    decompose: bool = Field(False, description=(
        "Before the first search, one call breaks the question into its first simple follow-up question (\"Who is "
        "the performer of the song 'Changed It'?\" for \"What is the place of birth of the performer of song Changed "
        "It?\"), as the reference's first call does; the first step then searches that and the question itself and "
        "answers the follow-up. Off by default. With the bundled 1.5B model, cover-EM on 2WikiMultiHopQA (n = 32) "
        "0.344 vs 0.312, on HotpotQA (n = 20) 0.45 both, on MuSiQue (n = 20) 0.30 vs 0.25, at 0.1 to 0.8 more calls "
        "per question: within run-to-run noise (docs/benchmarks.md)."))


def chain_text(steps: Sequence[tuple[str, str]], cap: int | None = None) -> str:
    """The chain as numbered ``follow-up → answer`` lines, each answer cut at ``cap`` characters."""
    return "\n".join(f"{i}. {q} → {prompts.excerpt(a, cap) or '(no answer found)'}"
                     for i, (q, a) in enumerate(steps, start=1)) or prompts.NO_STEPS


def first_hop(ctx: QueryContext) -> str:
    """The question's first simple follow-up (``prompts.FIRST_FOLLOW_UP``), "" when the reply gives none or gives
    the question again (``steps.dedup_queries``)."""
    reply = ask(ctx, "follow_up", prompts.FIRST_FOLLOW_UP.format(question=ctx.question), FirstFollowUp,
                FirstFollowUp(follow_up=""), "answering the question as asked")
    broken = reply.value.follow_up
    return next(iter(dedup_queries(ctx, [broken], [ctx.question]).kept), "") if broken else ""


def next_follow_up(ctx: QueryContext, steps: Sequence[tuple[str, str]]) -> FollowUp:
    """Ask for the next follow-up question (fallback: the question itself on the first step, else stop).

    The chain is fitted to the window: when it does not fit, the oldest steps are left out first."""
    first = not steps
    fallback = FollowUp(enough=False, follow_up=ctx.question) if first else FollowUp(enough=True)
    numbered = list(enumerate(steps, start=1))

    def render(kept: Sequence[tuple[int, tuple[str, str]]], cap: int | None) -> str:
        lines = [f"{i}. {q} → {prompts.excerpt(a, cap) or '(no answer found)'}" for i, (q, a) in kept]
        return prompts.FOLLOW_UP.format(question=ctx.question, steps="\n".join(lines) or prompts.NO_STEPS)

    reply, _ = ask_fitted(ctx, "follow_up", render, numbered, [-i for i, _ in numbered], FollowUp,
                          lambda kept: fallback, "searching the original question" if first else
                          "stopping the chain here")
    value = reply.value
    if first and not value.follow_up.strip():
        return FollowUp(enough=False, follow_up=ctx.question)
    return FollowUp(enough=value.enough and not first, follow_up=value.follow_up.strip())


@dataclass(frozen=True)
class Answered:
    """One intermediate step's outcome: its ``answer`` ("" for none), the hits it keeps for the report (retrieval
    order), whether it fell back to keeping every hit, and how many kept hits are the question's best-ranked rather
    than listed by the model (``steps.question_floor``); the hits its prompt showed (none when it fell back)."""

    answer: str
    supporting: list[Hit]
    fell_back: bool
    by_rank: int = 0
    decision: FollowUp | None = None
    shown: list[Hit] = field(default_factory=list)


def answer_step(ctx: QueryContext, query: str, hits: Sequence[Hit],
                steps: Sequence[tuple[str, str]] | None = None, floor: int | None = None,
                with_question: bool = False) -> Answered:
    """Answer one follow-up from its hits (fallback: no answer, keep every hit).

    With ``steps`` (the chain before this step; ``agents.chain_of_rag.one_call``) the same reply also decides the
    chain's next move (``prompts.INTERMEDIATE_NEXT``), returned as ``decision``: None when the reply did not decide,
    fell back, or its answer was not read from the chunks (the check passage caught it), so the agent asks for the
    follow-up separately rather than trust it.

    With ``query.relevance_check`` the prompt also shows a check passage unrelated to the question, numbered as in
    the prompt's example reply (``relevance_check``): a reply that lists it as supporting was not reading the chunks,
    so this step keeps every retrieved chunk (its answer is kept), and after ``query.relevance_check_strikes`` such
    replies every later step of the run does too. Measured with
    Qwen2.5-Coder-0.5B on HotpotQA: without it, the report of a chain saw 0–2 chunks, those the model listed.
    For the question itself (the first step), when the reply lists any chunk, the question's ``floor`` (default
    ``query.relevance_keep_top``) best-ranked chunks shown in the collections it listed from are kept too
    (``steps.question_floor``): with the 1.5B model the chain kept 2.0 chunks per HotpotQA question, those its
    answers listed, and its report saw fewer gold passages than naive's five (docs/benchmarks.md).

    With ``with_question`` the hits are the question's own search followed by the follow-up's (the first step of
    ``agents.chain_of_rag.decompose``): the prompt shows the question above the follow-up, and the question's floor
    is kept as for the question itself.

    Returns:
        ``Answered``; no answer and nothing kept, with no call, for no hits.
    """
    if not hits:
        return Answered("", [], False)
    checking = ctx.settings.relevance_check
    failed_before = checking and ctx.relevance_check.failed
    passage = check_passage(ctx.question, query) if checking and not failed_before else None

    def numbered(shown: Sequence[Hit]) -> list[Chunk]:
        chunks = [h.chunk for h in shown]
        if passage is None:
            return chunks
        return with_check(chunks, passage, check_position(query, len(shown), SUPPORTING_EXAMPLE_NUMBERS))

    def render(shown: Sequence[Hit], cap: int | None) -> str:
        chunks = prompts.chunk_list(numbered(shown), cap)
        if steps is None:
            return prompts.INTERMEDIATE.format(query=query, chunks=chunks)
        context = prompts.CHAIN_CONTEXT.format(question=ctx.question, steps=chain_text(steps, cap)) \
            if steps or with_question else ""
        return prompts.INTERMEDIATE_NEXT.format(context=context, query=query, chunks=chunks)

    schema: type[Intermediate] = Intermediate if steps is None else IntermediateNext
    reply, shown = ask_fitted(ctx, "intermediate", render, hits, fused_priority(hits, by_collection(hits)),
                              schema, lambda kept: schema(answer="", supporting=[]), "keeping every retrieved chunk")
    value = reply.value
    answer = value.answer.strip()
    decision = FollowUp(enough=value.enough, follow_up=value.follow_up) \
        if isinstance(value, IntermediateNext) and value.decided() and not reply.fell_back else None

    def from_check(what: str, text: str, fallback: str) -> bool:
        """``text`` (the reply's ``what``) uses words only the check passage has; a ``query.fallback`` says so."""
        if passage is None or not text or not drawn_from_check(text, passage, [h.chunk for h in shown],
                                                               ctx.question):
            return False
        ctx.emit(QueryFallback(step="intermediate", error=f"the {what} “{text[:80]}” is taken from the check passage "
                                                          f"(“{passage.title}”, unrelated to the question)",
                               fallback=fallback))
        return True

    if from_check("intermediate answer", answer, "no intermediate answer for this step"):
        answer, decision = "", None  # never carried into the next follow-up or the report's notes
    if decision is not None and from_check("next follow-up", decision.follow_up, ASKED_APART):
        decision = None  # the answer read the chunks; the question after it did not
    if reply.fell_back or failed_before:
        # every retrieved chunk, those the window left out too
        return Answered(answer, list(hits), True, decision=decision)
    chosen = set(reply.value.supporting)
    if names_none_shown(ctx.emit, chosen, len(shown) + (passage is not None), step="intermediate"):
        return Answered(answer, list(hits), True, decision=decision)
    if passage is not None:
        past = numbers_past_check(ctx.relevance_check, ctx.emit, chosen,
                                  check_position(query, len(shown), SUPPORTING_EXAMPLE_NUMBERS), passage,
                                  step="intermediate",
                                  picked="listed {check} as supporting its answer, so this reply did not read the "
                                         "chunks")
        if past is None:
            return Answered(answer, list(hits), True)  # the reply did not read the chunks: nor its decision
        chosen = past
    kept, by_rank = kept_with_floor(ctx, ctx.question if with_question else query, hits, shown, chosen, floor)
    return Answered(answer, kept, False, by_rank, decision, list(shown))


def run(ctx: QueryContext, options: ChainOfRAGOptions | None = None) -> Report:
    """Grow the chain of follow-ups until sufficient / ``max_iter`` / budget, then write the cited report."""
    options = options or ChainOfRAGOptions()
    one_call = options.one_call
    first: Answered | None = None  # the question's own step
    decided: FollowUp | None = None  # the last step's own decision (one_call)
    steps: list[tuple[str, str]] = []
    searched: list[str] = []
    accepted: dict[str, Hit] = {}
    rankings: list[list[Hit]] = []
    unjudged: list[Hit] = []
    open_gaps: list[str] = []
    iteration = 0
    stopped_on_budget = False
    answering: str | None = None  # the follow-up searched and not yet answered
    ctx.budget.set_reserve(report_reserve(ctx, [], [ctx.question]))
    try:
        while True:
            # the first step searches the question itself, without a call: asked for a first follow-up with no
            # steps yet, the bundled 1.5B model wrote "What is the current version of Milvus?" for "What
            # consistency levels does Milvus offer?", kept nothing and the run answered nothing (deep_search
            # searches the question itself in round 1 for the same reason)
            if not steps:
                decision = FollowUp(enough=False, follow_up=ctx.question)
            elif decided is not None:
                # the answer's reply decided; a follow-up it names that was searched already stops the chain as a
                # repeated follow-up does in two-call mode (query.gaps, stop "duplicates"): asking again apart made
                # 1.4 more calls per HotpotQA question and answered none more (docs/benchmarks.md)
                decision = decided
            else:
                # no decision in the answer's reply: ask for it apart, with the chain
                decision = next_follow_up(ctx, steps)
            fresh = dedup_queries(ctx, [decision.follow_up], searched) if decision.follow_up else None
            proposed = not decision.enough and fresh is not None
            stop = ctx.stop_reason(proposed, fresh.kept if fresh is not None else [], iteration)
            if iteration:
                ctx.emit(QueryGaps(iteration=iteration, gaps=fresh.kept if fresh and not decision.enough else [],
                                   stop=stop, tokens=ctx.llm.total_tokens))  # type: ignore[arg-type]
            if stop is not None:
                if stop in ("max_iter", "token_budget") and fresh is not None:
                    open_gaps = fresh.kept
                stopped_on_budget = stop == "token_budget"
                break
            iteration += 1
            # the first step also searches the question's first simple follow-up, when it has one, and answers
            # that (agents.chain_of_rag.decompose)
            broken = first_hop(ctx) if options.decompose and not steps else ""
            asked = [fresh.kept[0], broken] if broken else fresh.kept[:1]  # type: ignore[union-attr]
            query = asked[-1]
            ctx.emit(QuerySubQueries(iteration=iteration, sub_queries=asked, duplicates=[]))
            hits: list[Hit] = []
            for each in asked:
                searched.append(each)
                where = route(ctx, each)
                ctx.emit(QueryRouted(iteration=iteration, sub_query=each, collections=where.collections,
                                     dropped=where.dropped, fell_back=where.fell_back, query=where.query))
                found = retrieve(ctx, where.query, where.collections)
                rankings.append(found)
                have = {hit_key(h) for h in hits}
                hits += [h for h in found if hit_key(h) not in have]
            unjudged = hits
            answering = query
            step = answer_step(ctx, query, hits, list(steps) if one_call else None, options.question_floor,
                               with_question=bool(broken))
            answering = None
            if first is None:
                first = step
            decided = step.decision
            unjudged = []
            new = [h for h in step.supporting if hit_key(h) not in accepted]
            for hit in new:
                accepted[hit_key(hit)] = hit
            ctx.emit(QueryAccepted(iteration=iteration, sub_query=query, retrieved=len(hits), accepted=len(new),
                                   chunks=[chunk_ref(h) for h in new], fell_back=step.fell_back,
                                   by_rank=step.by_rank))
            ctx.emit(QueryIntermediate(iteration=iteration, sub_query=query, answer=step.answer))
            steps.append((query, step.answer))
            ctx.budget.set_reserve(report_reserve(ctx, list(accepted.values()), searched))
    except BudgetExhausted as exc:
        stopped_on_budget = True
        if answering is not None and answering != ctx.question:
            open_gaps = [answering]  # searched, its answer never asked: the report says it is open
        ctx.emit(QueryBudget(step=exc.step, used=exc.used, budget=exc.limit, reserve=ctx.budget.reserve))
        if iteration:
            ctx.emit(QueryGaps(iteration=iteration, gaps=[], stop="token_budget", tokens=ctx.llm.total_tokens))
    # a chain whose every step found nothing is no finding: shown "→ No relevant information" the bundled 1.5B model
    # wrote that as its report's answer although the question's chunks it was given held it (a helper's run on data/)
    notes = prompts.CHAIN_NOTES.format(steps=chain_text(steps)) \
        if any(not prompts.found_nothing(answer) for _, answer in steps) else ""
    late = late_floor(ctx, first, list(accepted.values()), options.question_floor)
    if late:
        for hit in late:
            accepted[hit_key(hit)] = hit
        ctx.emit(QueryAccepted(iteration=1, sub_query=ctx.question, retrieved=len(rankings[0]), accepted=len(late),
                               chunks=[chunk_ref(h) for h in late], fell_back=False, by_rank=len(late)))
    kept = list(accepted.values())
    if not kept and not unjudged:  # a budget too small for the call is caught below
        try:
            kept = judged_when_nothing_listed(ctx, rankings, iteration)
        except BudgetExhausted as exc:
            stopped_on_budget, unjudged = True, _candidates(ctx, rankings)
            ctx.emit(QueryBudget(step=exc.step, used=exc.used, budget=exc.limit, reserve=ctx.budget.reserve))
    written = write_report(ctx, Evidence(kept, rankings, searched, stopped_on_budget=stopped_on_budget,
                                         unjudged=unjudged), notes)
    answer = written.answer
    if open_gaps:
        answer = f"{answer}\n\n{gaps_note(open_gaps, researched=searched)}"
    return Report(question=ctx.question, answer=answer, sources=written.sources, sub_queries=searched,
                  iterations=iteration, usage=ctx.llm.usage(), agent=NAME,
                  removed_citations=written.removed_citations, gaps=open_gaps, short_answer=written.short_answer)


def late_floor(ctx: QueryContext, first: Answered | None, kept: Sequence[Hit], keep: int) -> list[Hit]:
    """The question's floor (``steps.question_floor``) when its own step listed nothing and a later step listed a
    chunk: the question's ``keep`` best-ranked chunks its prompt showed, in the collections the chain kept from,
    those not kept already. A first answer of "no relevant information" says no single chunk answers the whole
    question (it has two hops, or two subjects); a later step's listing says the collections hold what it needs.
    The bundled 1.5B model on "Do both directors of films Wrong Turn 5: Bloodlines and Dark River (2017 Film) have
    the same nationality?" (2WikiMultiHopQA) listed nothing for the question, whose search ranked both films' pages
    1st and 4th, and the director's page for its follow-up: the report saw the director's page alone."""
    if first is None or first.fell_back or first.supporting or not kept:
        return []
    have = {hit_key(h) for h in kept}
    return [h for h in question_floor(ctx, ctx.question, first.shown, kept, keep) if hit_key(h) not in have]


def _candidates(ctx: QueryContext, rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """The question's own search (the chain's first step; every collection's hits), else, when it found nothing,
    the ``query.top_k`` best of the follow-ups' searches by fused rank."""
    if rankings and rankings[0]:
        return list(rankings[0])
    return top_ranked(per_collection(rankings), ctx.settings.top_k)


def judged_when_nothing_listed(ctx: QueryContext, rankings: Sequence[Sequence[Hit]], iteration: int) -> list[Hit]:
    """When no intermediate answer listed a chunk: one relevance call (``deep_search.filter_relevant``, check passage
    and question floor included) over the question's own search (``_candidates``), so that "nothing relevant" is
    said only when it was judged; a ``query.fallback`` and a ``query.accepted`` event say what happened.

    A step's supporting list names the chunks that answer its follow-up, not which chunks are relevant: a question
    about two things ("Are Christopher Nolan and Sathish Kalathil both film directors?") is answered by no single
    chunk. With the bundled 1.5B model, one call a step, every step of three HotpotQA yes/no questions of 20 replied
    "No relevant information" with both gold passages shown, and the run refused, "hold nothing relevant"
    (docs/benchmarks.md). Writing from the best-ranked chunks unjudged instead would also answer questions the
    collections cannot ("What is the capital of Mongolia?" over product manuals) from unrelated passages."""
    candidates = _candidates(ctx, rankings)
    if not candidates:
        return []
    ctx.emit(QueryFallback(step="intermediate", error="no intermediate answer listed a chunk it relied on",
                           fallback=f"asking which of the question's {len(candidates)} retrieved chunks are relevant"))
    judged = filter_relevant(ctx, ctx.question, candidates)
    ctx.emit(QueryAccepted(iteration=max(iteration, 1), sub_query=ctx.question, retrieved=len(candidates),
                           accepted=len(judged.kept), chunks=[chunk_ref(h) for h in judged.kept],
                           fell_back=judged.fell_back, by_rank=judged.by_rank))
    return judged.kept


def agent(options: ChainOfRAGOptions | None = None) -> FunctionAgent:
    """The ``chain_of_rag`` agent (registry factory)."""
    return FunctionAgent(NAME, partial(run, options=options))
