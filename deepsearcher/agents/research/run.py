"""One DeepResearch run: its context, state and knowledge, and the one door every LLM call of the loop goes through.

``Run.ask`` checks the budget (``state.over_budget``) before every structured call and raises ``BeastMode`` when it is
spent, then asks through ``steps.ask`` (retry once, documented fallback). The forced final answer (``final_answer``)
is the only call made after the budget tripped, and exactly one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, TypeVar

from pydantic import BaseModel

from deepsearcher.agents.research import prompts as rprompts
from deepsearcher.agents.research.knowledge import KnowledgeItem, KnowledgeStore
from deepsearcher.agents.research.options import DeepResearchOptions
from deepsearcher.agents.research.state import ResearchState, StopReason, over_budget
from deepsearcher.agents.research.tools import ResearchTools
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import NOTHING_FOUND, ask, write_text
from deepsearcher.errors import ContextWindowError
from deepsearcher.events import QueryBeastMode, QueryFallback
from deepsearcher.llm.output import Structured

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
PromptBuilder = Callable[[int], str]
"""``build(limit) -> prompt``: renders a prompt showing at most ``limit`` knowledge items."""


def fit_window(ctx: QueryContext, step: str, build: PromptBuilder, call: Callable[[str], R], limit: int) -> R:
    """``call(build(limit))``; when the server refuses the prompt as longer than the model's window, build it again
    with half the knowledge items (down to none) before giving up. The one place DeepResearch and long reports fit a
    prompt to the window (counting tokens before the call can replace this retry).

    Raises:
        ContextWindowError: even the prompt without knowledge does not fit.
    """
    while True:
        try:
            return call(build(limit))
        except ContextWindowError:
            if limit <= 0:
                raise
            limit //= 2
            ctx.emit(QueryFallback(step=step, error="the prompt exceeds the model's context window",
                                   fallback=f"showing {limit} knowledge items"))


class BeastMode(Exception):
    """Raised before an LLM call when the budget or the bad-attempt limit is spent (``reason``)."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


@dataclass
class Run:
    """Everything one research run uses and changes.

    Attributes:
        ctx: the query context (model, search, events); ``ctx.question`` is this run's question.
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
        state = ResearchState.start(ctx.question, start_tokens=ctx.llm.total_tokens)
        return cls(ctx, options, tools, store, state, web_on=tools.web is not None)

    # --- budget and calls ----------------------------------------------------------------------------------------
    def guard(self) -> None:
        """Raise ``BeastMode`` when the next LLM call must not be made (checked before every call)."""
        reason = over_budget(self.state, self.ctx.llm.total_tokens, self.options, self.ctx.settings.token_budget)
        if reason is not None:
            raise BeastMode(reason)

    def ask(self, step: str, build: PromptBuilder, schema: type[T], fallback: T, fallback_text: str,
            limit: int | None = None) -> Structured[T]:
        """Check the budget, then ask ``build(limit)``; a prompt over the model's window is rebuilt with half the
        knowledge items (down to none) before the error is raised."""
        def call(prompt: str) -> Structured[T]:
            self.guard()
            return ask(self.ctx, step, prompt, schema, fallback, fallback_text)

        return self.fit(step, build, call, self.options.prompt_items if limit is None else limit)

    def fit(self, step: str, build: PromptBuilder, call: Callable[[str], R], limit: int) -> R:
        """``fit_window`` in this run's context."""
        return fit_window(self.ctx, step, build, call, limit)

    # --- knowledge -----------------------------------------------------------------------------------------------
    def shown(self, question: str, limit: int | None = None) -> list[KnowledgeItem]:
        """The knowledge items a prompt shows for ``question``: the ``limit`` most similar ones, in number order."""
        embed = self.ctx.embed
        return self.store.relevant(embed(question), embed, self.options.prompt_items if limit is None else limit)

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
    """Beast mode: one forced answer from all knowledge (no budget check; exactly one LLM call, or none without
    knowledge, unless the server refuses the prompt as too long for its window). Streams the answer as
    ``query.answer_token``."""
    ctx, state = run.ctx, run.state
    ctx.emit(QueryBeastMode(reason=reason, step=state.step, tokens=ctx.llm.total_tokens,
                            bad_attempts=state.bad_attempts))
    if not len(run.store):
        return NOTHING_FOUND
    plans = [f.plan for f in state.failed if f.plan]

    def build(limit: int) -> str:
        return rprompts.final_prompt(state.question, run.shown(state.question, limit), plans, language=ctx.language,
                                     excerpt_chars=run.options.excerpt_chars)

    reply = run.fit("final_answer", build, lambda prompt: write_text(ctx, "final_answer", prompt),
                    2 * run.options.prompt_items)
    return reply.text or "The model returned an empty answer."
