"""DeepResearch: a budgeted loop in which the model picks its next action, answers go to an evaluator, and a forced
final answer ends the run when the budget runs out (DESIGN.md "DeepResearch loop", after Jina's node-DeepResearch).

Each step works on the question at the head of the queue (the user's question first; gap questions from ``reflect``
go to the head; an unsolved question goes back to the tail). The model sees that question, the knowledge most
similar to it, the diary, the rejected answers, and only the actions allowed now (``state.allowed_actions``),
and replies with one action as JSON:

==========  ====================================================================  ===================================
action      what it does                                                          switched off
==========  ====================================================================  ===================================
search      ≤3 search expressions, deduplicated against every query run, routed   after ``max_empty_searches``
            to collections (and sent to the web when configured) → knowledge      searches found nothing new
read        opens ≤3 items: a chunk with its neighbours, a web result's page      nothing left to open
reflect     ≤3 new gap questions (deduplicated), queued at the head               twice in a row; ``max_gaps`` open
answer      an answer citing knowledge as [n] → the evaluator (``evaluator``)     no knowledge; after a rejection
==========  ====================================================================  ===================================

An accepted answer to the original question ends the run; to a gap question, it becomes knowledge; a rejected one is
kept with its critique and plan. The run has its own hard token budget (``token_budget``, ``final_reserve`` of it kept
for the final answer; ``run.research_context``), which every call checks before it is made
(``ctx.model(step)``, ``agents.budget``): a call that would eat into the reserve raises ``BudgetExhausted``. Then, or
when ``max_bad_attempts`` answers were rejected, ``max_steps`` steps ran, or no action is allowed, beast mode writes
one forced final answer from all knowledge. An unusable step reply (after one retry) falls back to searching the
current question, else to reading the first unopened items, else to beast mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Sequence

from deepsearcher.agents.base import AgentCapabilities
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.citations import location, verify_citations
from deepsearcher.agents.report_markdown import gaps_note
from deepsearcher.agents.deep_research import actions
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.evaluator import Verdict
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem, KnowledgeStore
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.agents.deep_research.beast import BEST_REJECTED, BeastMode, final_answer
from deepsearcher.agents.deep_research.run import Run
from deepsearcher.agents.deep_research.schemas import StepBase, step_model
from deepsearcher.agents.deep_research.state import Action, StopReason, allowed_actions
from deepsearcher.agents.tools import ResearchTools
from deepsearcher.agents.long_report.outline import Outline, Section
from deepsearcher.agents.long_report.sections import SectionFinding
from deepsearcher.agents.echoes import without_locations
from deepsearcher.agents.report import with_support
from deepsearcher.agents.support import cite_copies
from deepsearcher.agents.short_answer import report_and_short, settled_short
from deepsearcher.agents.state import QueryContext
from deepsearcher.events import QueryBudget, QueryStep
from deepsearcher.types import Evaluation, QuestionStatus, Report, Source, WebSearchOutcome

NAME = "deep_research"


@dataclass(frozen=True)
class Finding:
    """What one research run produced.

    Attributes:
        answer: the final answer, citing knowledge items by their store numbers ``[n]``.
        verdict: the evaluator's verdict on it; None when beast mode forced it.
        beast_mode: why the answer was forced, or None when the evaluator accepted it.
        steps: steps run.
        gaps: gap questions still open.
        queries: the search expressions this run sent.
        researched: the questions a step worked on (search, read or answer).
        answered: the questions whose answer the evaluator accepted.
        asked: every question of the run, the original first.
        evaluations: every verdict of the evaluator.
        web_searches: every web search and how it went.
    """

    answer: str
    verdict: Verdict | None
    beast_mode: StopReason | None
    steps: int
    gaps: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    researched: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    web_searches: list[WebSearchOutcome] = field(default_factory=list)


def research(ctx: QueryContext, options: DeepResearchOptions, tools: ResearchTools,
             store: KnowledgeStore) -> Finding:
    """Run the loop for ``ctx.question`` over ``store`` (shared by a long report's sections) until an answer to the
    question passes the evaluator or beast mode forces one."""
    run = Run.start(ctx, options, tools, store)
    first_query = len(store.queries)
    reason: StopReason
    try:
        while True:
            final, verdict = step(run)
            if final is not None:
                return finding(run, final, verdict, None, store.queries[first_query:])
    except BeastMode as stop:
        reason = stop.reason
    except BudgetExhausted as exc:
        budget = run.ctx.budget
        run.ctx.emit(QueryBudget(step=exc.step, used=exc.used, budget=exc.limit, reserve=budget.reserve))
        reason = "token_budget"
    text = final_answer(run, reason)
    return finding(run, text, None, reason, store.queries[first_query:])


def finding(run: Run, text: str, verdict: Verdict | None, reason: StopReason | None, queries: list[str]) -> Finding:
    """The ``Finding`` of a run that ends with ``text``."""
    state = run.state
    return Finding(text, verdict, reason, state.step, state.open_gaps(), queries, list(state.researched),
                   list(state.answered), list(state.asked), list(state.evaluations), list(state.web_searches))


def question_statuses(finding: Finding, cited: bool) -> list[QuestionStatus]:
    """What became of each question: the original one is "answered" when the final answer cites a source
    (``cited``); a gap question when its answer was accepted; else "nothing_found" when a step worked on it and
    "not_researched" when none did."""
    stopped = f"research stopped ({finding.beast_mode})" if finding.beast_mode else "research ended"
    out: list[QuestionStatus] = []
    for i, question in enumerate(finding.asked):
        if i == 0 and cited:
            detail = "accepted by the evaluator"
            if finding.beast_mode:
                detail = "a rejected answer (beast mode)" if BEST_REJECTED in finding.answer else \
                    "forced answer (beast mode)"
            out.append(QuestionStatus(question, "answered", detail))
        elif i > 0 and question in finding.answered:
            out.append(QuestionStatus(question, "answered", "accepted by the evaluator"))
        elif question in finding.researched:
            out.append(QuestionStatus(question, "nothing_found", "researched; no accepted answer citing a source"))
        else:
            out.append(QuestionStatus(question, "not_researched", f"{stopped} before any search for it"))
    return out


def step(run: Run) -> tuple[str | None, Verdict | None]:
    """One step: pick the head question, let the model choose among the allowed actions, act.

    Returns:
        ``(accepted answer to the original question, its verdict)``, or ``(None, None)`` to go on.

    Raises:
        BeastMode: the bad attempts or the steps are spent, or no action is possible.
        BudgetExhausted: a call of the step would eat into the reserve kept for the final answer.
    """
    state, options = run.state, run.options
    if state.bad_attempts >= options.max_bad_attempts:
        raise BeastMode("bad_attempts")
    if state.step >= options.max_steps:
        raise BeastMode("max_steps")
    question = state.next_question()
    rules = allowed_actions(state, run.store, options, can_open_chunks=run.tools.chunks_around is not None)
    allowed = [action for action, why in rules.items() if not why]
    if not allowed:
        raise BeastMode("no_action")
    try:
        reply, fell_back = decide(run, allowed)
    except BudgetExhausted:
        state.undo_step()  # no action was chosen: the step did not run
        raise
    action: Action = getattr(reply, "action")
    run.ctx.emit(QueryStep(step=state.step, question=question, original=state.is_original(question), action=action,
                           allowed=list(allowed), disabled={a: why for a, why in rules.items() if why},
                           think=reply.think.strip(), fell_back=fell_back, tokens=run.ctx.llm.total_tokens))
    if action == "search":
        outcome = actions.search(run, getattr(reply, "queries"))
    elif action == "read":
        outcome = actions.read(run, getattr(reply, "items"))
    elif action == "reflect":
        outcome = actions.reflect(run, getattr(reply, "questions"))
    else:
        outcome = actions.answer(run, getattr(reply, "answer"))
    state.end_step(action, solved=outcome.solved, rejected=outcome.rejected)
    return outcome.final, outcome.verdict


def decide(run: Run, allowed: list[Action]) -> tuple[StepBase, bool]:
    """Ask the model for the step's action (one call, retried once; see the module for the fallback).

    Returns:
        ``(reply, fell_back)``.
    """
    state, store = run.state, run.store
    schema = step_model(tuple(allowed))
    unread = store.unread(chunks=run.tools.chunks_around is not None)
    items, priority = run.shown(state.current)

    def render(shown: Sequence[KnowledgeItem], cap: int | None) -> str:
        return rprompts.step_prompt(state, allowed, shown, unread=unread, queries=store.queries, where=run.where,
                                    language=run.ctx.language, excerpt_chars=cap)

    usable = True
    if "search" in allowed:
        fallback, text = schema.model_validate({"action": "search", "queries": [state.current]}), \
            "searching the current question"
    elif "read" in allowed:
        fallback, text = schema.model_validate({"action": "read", "items": [i.number for i in unread[:3]]}), \
            "reading the first unopened items"
    else:  # only reflect or answer left, and neither can be made up: the final answer is forced
        usable, fallback, text = False, schema.model_construct(action=allowed[0]), "writing the final answer now"
    reply = run.ask("research_step", render, items, priority, schema, fallback, text)
    if reply.fell_back and not usable:
        raise BeastMode("no_action")
    return reply.value, reply.fell_back


def to_report(ctx: QueryContext, store: KnowledgeStore, finding: Finding) -> Report:
    """The ``Report`` of a short answer: citations of answers expanded to their items, verified and renumbered in
    order of first appearance, each mapped to its chunk or URL; an item's text told again uncited gets its number
    (``support.cite_copies``), and an answer that still cites nothing gets the item sentence holding its words quoted
    under it and cited, as the other agents' reports do (``report.with_support``)."""
    chunks = [item.chunk for item in store]
    text, short = report_and_short(store.expand_answers(finding.answer), chunks, ctx.question)
    text = without_locations(text, [(c.title, location(c)) for c in chunks if c is not None])
    text, _ = cite_copies(text, chunks)  # an item's text told again, uncited: its number
    verified = verify_citations(text, len(store))
    if verified.text and not verified.cited:  # the sentence holding the answer's words, quoted and cited
        verified = with_support(ctx, verified, short, chunks)
    answer = verified.text or "The model returned an empty answer."
    if finding.gaps:
        answer = f"{answer}\n\n{gaps_note(finding.gaps, researched=finding.researched)}"
    checks = dict(finding.verdict.checks) if finding.verdict is not None else {}
    sources = store.sources(verified.cited) if verified.cited else consulted(ctx, store)
    headers = [(s.chunk.title, location(s.chunk)) for s in sources]
    short = settled_short(short, ctx.question, headers)
    return Report(question=ctx.question, answer=answer, sources=sources,
                  sub_queries=finding.queries, iterations=finding.steps, usage=ctx.llm.usage(), agent=NAME,
                  removed_citations=verified.removed, gaps=finding.gaps, checks=checks,
                  beast_mode=finding.beast_mode is not None, short_answer=short if verified.text else "",
                  questions=question_statuses(finding, bool(verified.cited)), evaluations=finding.evaluations,
                  web_searches=finding.web_searches)


def consulted(ctx: QueryContext, store: KnowledgeStore, limit: int = 10) -> list[Source]:
    """The items most similar to the question, as numbered Sources, for an answer that cites none."""
    items = [i for i in store.relevant(ctx.embed(ctx.question), ctx.embed, limit, kinds=("chunk", "web", "page"))]
    return [Source(n, i.chunk, i.collection) for n, i in enumerate(items, start=1) if i.chunk is not None]


@dataclass(frozen=True)
class DeepResearchAgent:
    """The ``deep_research`` agent (an ``Agent``): ``research`` then ``to_report``; it searches the web (when
    configured) and researches the sections of long reports into their shared knowledge."""

    options: DeepResearchOptions
    name: str = NAME
    capabilities: ClassVar[AgentCapabilities] = AgentCapabilities(web_search=True, sections=True)

    def run(self, ctx: QueryContext) -> Report:
        """Answer ``ctx.question`` (see ``deepsearcher.agents.base.Agent``); tools come from ``ctx.research``."""
        store = KnowledgeStore()
        finding = research(ctx, self.options, ctx.research or ResearchTools(), store)
        return to_report(ctx, store, finding)

    def research_section(self, ctx: QueryContext, outline: Outline, section: Section,
                         store: KnowledgeStore) -> SectionFinding:
        """One section of a long report: the loop on the section's question over the report's ``store``
        (``long_report.sections.SectionResearcher``)."""
        finding = research(ctx, self.options, ctx.research or ResearchTools(), store)
        return SectionFinding(finding.answer, finding.gaps, finding.queries, finding.steps, finding.evaluations,
                              finding.web_searches)


def agent(options: DeepResearchOptions | None = None) -> DeepResearchAgent:
    """The ``deep_research`` agent (registry factory)."""
    return DeepResearchAgent(options or DeepResearchOptions())
