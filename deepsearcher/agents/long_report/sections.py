"""How a section of a long report is researched: by the agent that researches the sections, into the report's one
shared knowledge store, so a source has one number in the whole report.

An agent that declares ``AgentCapabilities(sections=True)`` either has a ``research_section`` method
(``SectionResearcher``: the built-ins ``deep_research`` and ``deep_search``, which research into the store directly)
or is simply run on the section's question, and the sources of its report join the store (``from_report``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

from deepsearcher.agents.base import Agent
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.citations import Marker, replace_citations
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem, KnowledgeStore
from deepsearcher.agents.long_report.outline import Outline, Section
from deepsearcher.agents.report import Evidence, budget_too_small, choose_evidence, cut_off, empty_answer, write_fitted
from deepsearcher.agents.reply_guard import loops_only
from deepsearcher.agents.state import QueryContext
from deepsearcher.vectordb.fusion import fused_priority
from deepsearcher.types import Evaluation, Hit, Report, WebSearchOutcome


@dataclass(frozen=True)
class SectionFinding:
    """What the research of one section produced.

    Attributes:
        text: the section's text, citing the shared store's items as ``[n]``.
        gaps: questions left open.
        queries: the search expressions sent.
        steps: rounds or steps run.
        evaluations: the evaluator's verdicts (DeepResearch sections).
        web_searches: the web searches and how they went (DeepResearch sections).
    """

    text: str
    gaps: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    steps: int = 0
    evaluations: list[Evaluation] = field(default_factory=list)
    web_searches: list[WebSearchOutcome] = field(default_factory=list)


@runtime_checkable
class SectionResearcher(Protocol):
    """An agent that researches a section into the report's shared knowledge store."""

    def research_section(self, ctx: QueryContext, outline: Outline, section: Section,
                         store: KnowledgeStore) -> SectionFinding:
        """Research ``section`` (``ctx.question`` is its question) and write its text citing ``store``'s items."""
        ...


def research_section(agent: Agent, ctx: QueryContext, outline: Outline, section: Section,
                     store: KnowledgeStore) -> SectionFinding:
    """One section researched by ``agent``: its ``research_section`` when it has one, else its report on the
    section's question with the sources added to ``store`` (``from_report``)."""
    if isinstance(agent, SectionResearcher):
        return agent.research_section(ctx, outline, section, store)
    return from_report(agent.run(ctx), store, section.question)


def from_report(report: Report, store: KnowledgeStore, question: str) -> SectionFinding:
    """A section from an agent's ``Report``: its sources added to ``store`` (a source already there keeps its
    number) and its ``[n]`` citations rewritten to the store's numbers (a number with no source becomes ``[0]``,
    which verification removes)."""
    numbers = {s.number: store.add_hit(Hit(s.chunk, 0.0, s.collection), question)[0].number for s in report.sources}

    def renumber(marker: Marker) -> str:
        return "".join(f"[{numbers.get(n, 0)}]" for n in marker.numbers)

    return SectionFinding(replace_citations(report.answer, renumber), list(report.gaps), list(report.sub_queries),
                          report.iterations, list(report.evaluations), list(report.web_searches))


def write_section(ctx: QueryContext, outline: Outline, section: Section, store: KnowledgeStore,
                  evidence: Evidence) -> str:
    """Write one section from DeepSearch's evidence (the chunks ``report.choose_evidence`` picks), added to the
    store and shown with their store numbers; the prompt is fitted to the window and the budget
    (``report.write_fitted``; the chunks of worst fused rank are left out first)."""
    chosen = choose_evidence(ctx, evidence)
    if chosen.answer is not None:
        return chosen.answer
    rank = fused_priority(chosen.hits, evidence.rankings)
    best: dict[str, tuple[KnowledgeItem, float]] = {}
    for hit, priority in zip(chosen.hits, rank):
        item = store.add_hit(hit, section.question)[0]
        if item.id not in best or priority < best[item.id][1]:
            best[item.id] = (item, priority)
    ordered = sorted(best.values(), key=lambda pair: pair[0].number)

    def render(items: Sequence[KnowledgeItem], cap: int | None) -> str:
        return rprompts.section_prompt(outline.title or ctx.question, section.title, section.question, items,
                                       language=ctx.language, excerpt_chars=cap)

    try:
        reply, _ = write_fitted(ctx, "section", render, [i for i, _ in ordered], [p for _, p in ordered],
                                guard=loops_only)
    except BudgetExhausted:
        return budget_too_small(ctx, []).answer
    text = (reply.text or empty_answer(reply)) + cut_off(ctx, "section", reply)
    return f"{chosen.warning}\n\n{text}" if chosen.warning else text
