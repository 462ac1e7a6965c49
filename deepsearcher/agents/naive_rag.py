"""NaiveRAG: one retrieval over every collection in scope, then one cited answer (a single LLM call).

The baseline the agentic flow is measured against, and the cheapest choice for simple look-up questions.
"""

from __future__ import annotations

from deepsearcher.agents.report import Evidence, write_report
from deepsearcher.agents.base import FunctionAgent
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import by_collection, chunk_ref, retrieve
from deepsearcher.events import QueryAccepted, QueryRouted, QuerySubQueries
from deepsearcher.types import Report

NAME = "naive"


def run(ctx: QueryContext) -> Report:
    """Retrieve top-k per collection for the question itself and answer from those chunks."""
    names = [c.name for c in ctx.collections]
    ctx.emit(QuerySubQueries(iteration=1, sub_queries=[ctx.question], duplicates=[]))
    ctx.emit(QueryRouted(iteration=1, sub_query=ctx.question, collections=names, dropped=[], fell_back=False,
                         query=ctx.question))
    hits = retrieve(ctx, ctx.question, names)
    ctx.emit(QueryAccepted(iteration=1, sub_query=ctx.question, retrieved=len(hits), accepted=len(hits),
                           chunks=[chunk_ref(h) for h in hits], fell_back=False))
    written = write_report(ctx, Evidence(hits, by_collection(hits), [ctx.question], judged=False))
    return Report(question=ctx.question, answer=written.answer, sources=written.sources, sub_queries=[ctx.question],
                  iterations=1, usage=ctx.llm.usage(), agent=NAME, removed_citations=written.removed_citations,
                  short_answer=written.short_answer)


def agent(options: object = None) -> FunctionAgent:
    """The ``naive`` agent (registry factory; no options)."""
    return FunctionAgent(NAME, run)
