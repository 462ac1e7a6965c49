"""ChainOfRAG: iterative follow-up questions with intermediate answers, for multi-hop factual questions.

After Wang et al. 2025, "Chain-of-Retrieval Augmented Generation" (CoRAG): the model writes the next follow-up
question from the chain of (follow-up, intermediate answer) pairs so far, that question is retrieved for, answered
briefly from its chunks, and the chain grows until the model judges it sufficient, ``max_iter`` is reached or the
token budget is spent. The final report is written from the chunks the intermediate answers relied on, with the chain
as notes. Two LLM calls per step (the reference implementation uses four: follow-up, answer, supporting docs,
sufficiency check); we fold the sufficiency check into the follow-up call and the supporting chunks into the answer.

==============  ==============================================  =========================================
step            reply schema                                    fallback
==============  ==============================================  =========================================
follow_up       ``{"enough": bool, "follow_up": str}``          first step: the question; later: stop
route           ``{"collections": [str]}`` (router.py)          all collections
intermediate    ``{"answer": str, "supporting": [int]}``        no answer; keep every retrieved chunk
==============  ==============================================  =========================================
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field, field_validator, model_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.citations import gaps_note
from deepsearcher.agents.router import route
from deepsearcher.agents.state import FunctionAgent, QueryContext
from deepsearcher.agents.steps import answer_hits, ask, chunk_ref, dedup_queries, hit_key, retrieve, synthesise
from deepsearcher.events import QueryAccepted, QueryGaps, QueryIntermediate, QueryRouted, QuerySubQueries
from deepsearcher.types import Hit, Report

NAME = "chain_of_rag"


class FollowUp(BaseModel):
    """``{"enough": bool, "follow_up": str}`` (a bare string is taken as the follow-up question)."""

    enough: bool = False
    follow_up: str = ""

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: object) -> object:
        if isinstance(value, str):
            return {"follow_up": value}
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return {"follow_up": value[0]}
        return value

    @field_validator("follow_up")
    @classmethod
    def _real(cls, value: str) -> str:
        if value.strip() and prompts.is_placeholder(value):
            raise ValueError("the reply repeats the example placeholder instead of a real question")
        return value.strip()


class Intermediate(BaseModel):
    """``{"answer": str, "supporting": [int]}``: a short answer and the 1-based chunks it relies on."""

    answer: str
    supporting: list[int] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: object) -> object:
        return {"answer": value} if isinstance(value, str) else value

    @field_validator("answer")
    @classmethod
    def _real(cls, value: str) -> str:
        if value.strip() and prompts.is_placeholder(value):
            raise ValueError("the reply repeats the example placeholder instead of an answer")
        return value.strip()


def chain_text(steps: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"{i}. {q} → {a or '(no answer found)'}" for i, (q, a) in enumerate(steps, start=1)) \
        or prompts.NO_STEPS


def next_follow_up(ctx: QueryContext, steps: Sequence[tuple[str, str]]) -> FollowUp:
    """Ask for the next follow-up question (fallback: the question itself on the first step, else stop)."""
    first = not steps
    fallback = FollowUp(enough=False, follow_up=ctx.question) if first else FollowUp(enough=True)
    reply = ask(ctx, "follow_up", prompts.FOLLOW_UP.format(question=ctx.question, steps=chain_text(steps)), FollowUp,
                fallback, "searching the original question" if first else "stopping the chain here")
    value = reply.value
    if first and not value.follow_up.strip():
        return FollowUp(enough=False, follow_up=ctx.question)
    return FollowUp(enough=value.enough and not first, follow_up=value.follow_up.strip())


def answer_step(ctx: QueryContext, query: str, hits: Sequence[Hit]) -> tuple[str, list[Hit], bool]:
    """Answer one follow-up from its hits (fallback: no answer, keep all hits).

    Returns:
        ``(intermediate answer, supporting hits, fell_back)``; ``("", [], False)`` with no call for no hits.
    """
    if not hits:
        return "", [], False
    prompt = prompts.INTERMEDIATE.format(query=query, chunks=prompts.chunk_list([h.chunk for h in hits]))
    reply = ask(ctx, "intermediate", prompt, Intermediate, Intermediate(answer="", supporting=list(
        range(1, len(hits) + 1))), "keeping every retrieved chunk")
    chosen = set(reply.value.supporting)
    return reply.value.answer.strip(), [h for i, h in enumerate(hits, start=1) if i in chosen], reply.fell_back


def run(ctx: QueryContext) -> Report:
    """Grow the chain of follow-ups until sufficient / ``max_iter`` / budget, then write the cited report."""
    steps: list[tuple[str, str]] = []
    searched: list[str] = []
    accepted: dict[str, Hit] = {}
    rankings: list[list[Hit]] = []
    open_gaps: list[str] = []
    iteration = 0
    while True:
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
            break
        iteration += 1
        query = fresh.kept[0]  # type: ignore[union-attr]
        ctx.emit(QuerySubQueries(iteration=iteration, sub_queries=[query], duplicates=[]))
        where = route(ctx, query)
        ctx.emit(QueryRouted(iteration=iteration, sub_query=query, collections=where.collections,
                             dropped=where.dropped, fell_back=where.fell_back))
        hits = retrieve(ctx, query, where.collections)
        rankings.append(hits)
        answer, supporting, fell_back = answer_step(ctx, query, hits)
        new = [h for h in supporting if hit_key(h) not in accepted]
        for hit in new:
            accepted[hit_key(hit)] = hit
        ctx.emit(QueryAccepted(iteration=iteration, sub_query=query, retrieved=len(hits), accepted=len(new),
                               chunks=[chunk_ref(h) for h in new], fell_back=fell_back))
        ctx.emit(QueryIntermediate(iteration=iteration, sub_query=query, answer=answer))
        steps.append((query, answer))
        searched.append(query)
    notes = prompts.CHAIN_NOTES.format(steps=chain_text(steps)) if steps else ""
    answer, sources, removed = synthesise(ctx, answer_hits(ctx, list(accepted.values()), rankings), notes)
    if open_gaps:
        answer = f"{answer}\n\n{gaps_note(open_gaps)}"
    return Report(question=ctx.question, answer=answer, sources=sources, sub_queries=searched, iterations=iteration,
                  usage=ctx.llm.usage(), agent=NAME, removed_citations=removed, gaps=open_gaps)


def agent(options: object = None) -> FunctionAgent:
    """The ``chain_of_rag`` agent (registry factory; no options)."""
    return FunctionAgent(NAME, run)
