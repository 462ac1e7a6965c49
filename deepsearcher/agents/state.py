"""The state of one query run (``QueryContext``) and its stop rules; the steps agents share are in ``steps``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from pydantic import BaseModel

from deepsearcher.agents import prompts
from deepsearcher.events import Event, EventCallback
from deepsearcher.llm.base import MeteredChatModel
from deepsearcher.settings import QuerySettings
from deepsearcher.types import CollectionInfo, Hit, Report

if TYPE_CHECKING:
    from deepsearcher.agents.research.tools import ResearchTools
    from deepsearcher.registry import Registry

SearchFn = Callable[[str, str, int], list[Hit]]
"""``search(query, collection, top_k) -> hits`` best first."""
EmbedFn = Callable[[str], np.ndarray]
"""``embed(text) -> unit vector`` of shape (dim,)."""


def _no_options(name: str) -> BaseModel | None:
    return None


@dataclass(frozen=True)
class QueryContext:
    """Everything one query run uses; built by ``DeepSearcher.query``.

    Attributes:
        question: the user's question.
        llm: the chat model, metered (calls, tokens, seconds, cost of this run).
        collections: the collections in scope, with their descriptions (for routing).
        search: retrieval function (dense or hybrid, as configured).
        embed: query embedder (for near-duplicate detection).
        settings: query settings with any per-call overrides applied (``max_iter``).
        emit: event callback.
        registry: where agents are looked up (the agent router); None = the process-wide registry.
        agent_options: ``name -> options`` of an agent (its ``agents.<name>`` config section), or None.
        research: what DeepResearch can reach besides ``search`` (web search, page reader, a chunk's neighbours);
            None = the collections only.
    """

    question: str
    llm: MeteredChatModel
    collections: list[CollectionInfo]
    search: SearchFn
    embed: EmbedFn
    settings: QuerySettings
    emit: EventCallback = field(default=lambda event: None)
    registry: Registry | None = None
    agent_options: Callable[[str], BaseModel | None] = _no_options
    research: ResearchTools | None = None

    def event(self, event: Event) -> None:
        """Emit ``event`` (the same as ``emit``; kept for readability at call sites)."""
        self.emit(event)

    @property
    def language(self) -> str:
        """The report language: ``query.language``, else the question's."""
        return self.settings.language or prompts.QUESTION_LANGUAGE

    def over_budget(self) -> bool:
        """True when the optional token budget is spent."""
        budget = self.settings.token_budget
        return budget is not None and self.llm.total_tokens >= budget

    def stop_reason(self, proposed: bool, kept: Sequence[str], iteration: int) -> str | None:
        """Why the research loop stops after ``iteration``, or None to go on.

        Args:
            proposed: the model proposed at least one further query.
            kept: those queries left after near-duplicates of searched ones were dropped.
            iteration: rounds run so far.

        Returns:
            "no_gaps", "duplicates", "max_iter", "token_budget" (checked in that order), or None.
        """
        if not proposed:
            return "no_gaps"
        if not kept:
            return "duplicates"
        if iteration >= self.settings.max_iter:
            return "max_iter"
        if self.over_budget():
            return "token_budget"
        return None


@dataclass(frozen=True)
class FunctionAgent:
    """An ``Agent`` made of a name and a ``run(ctx) -> Report`` function (how the built-in agents register)."""

    name: str
    run_fn: Callable[[QueryContext], Report]

    def run(self, ctx: QueryContext) -> Report:
        """Answer ``ctx.question`` (see ``deepsearcher.protocols.Agent``)."""
        return self.run_fn(ctx)
