"""One DeepResearch run: its context, state and knowledge, how its prompts are fitted, and the forced final answer.

The run uses the machinery every agent shares (``agents.steps``, ``agents.report``, ``agents.budget``), with nothing of
its own for windows or budgets:

- **budget**: ``research_context`` gives the run its own ``TokenBudget`` (``agents.deep_research.token_budget``, a
  share of what ``query.token_budget`` leaves when that is lower; per section of a long report), with
  ``final_reserve`` of it kept back for the forced final answer. Every call goes through ``ctx.model(step)``, which
  claims its tokens before the call and raises ``BudgetExhausted`` when a call would eat into the reserve: that is the
  trip into beast mode.
- **window**: every prompt shows knowledge items through ``Run.ask`` (``steps.ask_fitted``) or ``report.write_fitted``,
  which fit it to the model's window: excerpts shortened, then the items least similar to the question left out
  (``KnowledgeStore.ranked`` gives the priority), with ``query.trimmed`` saying so.
- **replies**: structured steps go through ``steps.ask_fitted`` (JSON extraction, one retry showing the error, a
  cut-off reply asked again with more room, the documented fallback); free text through ``report.write_fitted``.

The forced final answer (``final_answer``) is the only call made after the budget tripped, and exactly one: it may
use the reserve, and its prompt is fitted to what the budget leaves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Callable, Sequence, TypeVar

from pydantic import BaseModel

from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.report import budget_too_small, cut_off, empty_answer, nothing_found, write_fitted
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem, KnowledgeStore
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.agents.deep_research.state import ResearchState, StopReason
from deepsearcher.agents.deep_research.tools import ResearchTools
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import ask_fitted
from deepsearcher.events import QueryBeastMode
from deepsearcher.llm.output import Structured

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Render = Callable[[Sequence[KnowledgeItem], "int | None"], str]
"""``render(items, excerpt_chars) -> prompt``: a prompt showing ``items``, each cut at ``excerpt_chars`` (None = the
option's ``excerpt_chars``)."""
BUDGET_SETTING = "agents.deep_research.token_budget"


class BeastMode(Exception):
    """Research must end in the forced final answer (``reason``): the bad attempts or steps are spent, or no action
    is possible. (A spent token budget is ``agents.budget.BudgetExhausted``.)"""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


def research_context(ctx: QueryContext, options: DeepResearchOptions) -> QueryContext:
    """``ctx`` with the run's own token budget: ``options.token_budget`` counted from now, capped by what
    ``ctx.budget`` leaves (``TokenBudget.share``), ``final_reserve`` of it kept for the forced final answer."""
    budget = ctx.budget.share(options.token_budget, BUDGET_SETTING)
    if budget.limit is not None:
        budget.set_reserve(int(budget.limit * options.final_reserve))
    return replace(ctx, budget=budget)


@dataclass
class Run:
    """Everything one research run uses and changes.

    Attributes:
        ctx: the query context with the run's budget (``research_context``); ``ctx.question`` is this run's question.
        options: the agent's options.
        tools: web search, page reader, neighbour query.
        store: the knowledge (shared by the sections of a long report).
        state: queue, diary, failed attempts, counters.
        web_on: web search is configured and has not failed in this run.
    """

    ctx: QueryContext
    options: DeepResearchOptions
    tools: ResearchTools
    store: KnowledgeStore
    state: ResearchState
    web_on: bool = False

    @classmethod
    def start(cls, ctx: QueryContext, options: DeepResearchOptions, tools: ResearchTools,
              store: KnowledgeStore) -> Run:
        return cls(research_context(ctx, options), options, tools, store, ResearchState.start(ctx.question),
                   web_on=tools.web is not None)

    # --- calls ---------------------------------------------------------------------------------------------------
    def ask(self, step: str, render: Render, items: Sequence[KnowledgeItem], priority: Sequence[float] | None,
            schema: type[T], fallback: T, fallback_text: str) -> Structured[T]:
        """One structured step whose prompt shows ``items`` (``steps.ask_fitted``, in the run's context).

        Raises:
            BudgetExhausted: the call would eat into the reserve kept for the final answer.
        """
        reply, _ = ask_fitted(self.ctx, step, self.renderer(render), items, priority, schema,
                              lambda kept: fallback, fallback_text)
        return reply

    def renderer(self, render: Render) -> Callable[[Sequence[KnowledgeItem], int | None], str]:
        """``render`` with the fitting cap applied on top of ``excerpt_chars`` (whichever is shorter)."""
        limit = self.options.excerpt_chars

        def fitted(items: Sequence[KnowledgeItem], cap: int | None) -> str:
            return render(items, limit if cap is None else min(cap, limit))

        return fitted

    # --- knowledge -----------------------------------------------------------------------------------------------
    def shown(self, question: str, limit: int | None = None,
              kinds: Sequence[str] | None = None) -> tuple[list[KnowledgeItem], list[float]]:
        """The knowledge a prompt about ``question`` shows: the ``limit`` (default ``prompt_items``) most similar
        items in number order, with their fitting priority (``KnowledgeStore.ranked``)."""
        embed = self.ctx.embed
        return self.store.ranked(embed(question), embed, self.options.prompt_items if limit is None else limit,
                                 kinds=kinds)

    def note(self, text: str) -> None:
        """Add a diary entry for the running step."""
        self.state.diary.append(f"At step {self.state.step} you {text}")

    @property
    def where(self) -> str:
        """Where a search looks, for the step prompt: the collections, and the web when it is on."""
        cols = "; ".join(f"{c.name} ({c.description or 'no description'})" for c in self.ctx.collections)
        web = f"; the web ({self.tools.web.name})" if self.web_on and self.tools.web is not None else ""
        return (cols or "(no collection)") + web


def final_answer(run: Run, reason: StopReason) -> str:
    """Beast mode: one forced answer from all knowledge (``2 × prompt_items`` items most similar to the question),
    streamed as ``query.answer_token``. Exactly one LLM call (none without knowledge, or when the budget cannot pay
    even for a short prompt): it may use the reserve and its prompt is fitted to the window and to what the budget
    leaves (``report.write_fitted``)."""
    ctx, state = run.ctx, run.state
    ctx.emit(QueryBeastMode(reason=reason, step=state.step, tokens=ctx.llm.total_tokens,
                            bad_attempts=state.bad_attempts))
    if not len(run.store):
        return nothing_found(ctx)
    plans = [f.plan for f in state.failed if f.plan]
    items, priority = run.shown(state.question, 2 * run.options.prompt_items)

    def render(kept: Sequence[KnowledgeItem], cap: int | None) -> str:
        return rprompts.final_prompt(state.question, kept, plans, language=ctx.language, excerpt_chars=cap)

    try:
        reply, _ = write_fitted(ctx, "final_answer", run.renderer(render), items, priority)
    except BudgetExhausted:
        return budget_too_small(ctx, []).answer
    return (reply.text or empty_answer(reply)) + cut_off(ctx, "final_answer", reply)
