"""Agent router: run the agent named in the config, or (``query.agent: auto``) let the LLM pick one per question."""

from __future__ import annotations

from typing import Callable, Literal

from pydantic import BaseModel, model_validator

from deepsearcher.agents import chain_of_rag, deep_search, naive_rag, prompts
from deepsearcher.agents.context import QueryContext, ask
from deepsearcher.errors import ConfigError
from deepsearcher.types import Report

AGENTS: dict[str, Callable[[QueryContext], Report]] = {
    deep_search.NAME: deep_search.run,
    chain_of_rag.NAME: chain_of_rag.run,
    naive_rag.NAME: naive_rag.run,
}
AgentName = Literal["deep_search", "chain_of_rag", "naive"]
_ALIASES = {"deepsearch": "deep_search", "chainofrag": "chain_of_rag", "corag": "chain_of_rag",
            "naiverag": "naive", "naive": "naive"}


class AgentChoice(BaseModel):
    """``{"agent": "deep_search" | "chain_of_rag" | "naive"}`` (spelling variants like "Deep Search" accepted)."""

    agent: AgentName

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, str):
            value = {"agent": value}
        if isinstance(value, dict) and isinstance(value.get("agent"), str):
            key = "".join(ch for ch in value["agent"].casefold() if ch.isalnum())
            value = {**value, "agent": _ALIASES.get(key, value["agent"])}
        return value


def choose(ctx: QueryContext, requested: str) -> tuple[str, str]:
    """Resolve ``requested`` ("auto" or an agent name) to ``(agent, chosen_by)``.

    ``chosen_by`` is "config" for a named agent, "llm" when the model picked, "fallback" when its reply stayed
    unusable (then deep_search).

    Raises:
        ConfigError: an unknown agent name.
    """
    if requested != "auto":
        if requested not in AGENTS:
            raise ConfigError(f"unknown agent {requested!r}", hint=f"use one of: auto, {', '.join(AGENTS)}")
        return requested, "config"
    reply = ask(ctx, "agent", prompts.CHOOSE_AGENT.format(question=ctx.question), AgentChoice,
                AgentChoice(agent="deep_search"), "using deep_search")
    return reply.value.agent, "fallback" if reply.fell_back else "llm"


def run(ctx: QueryContext, requested: str) -> Report:
    """Pick the agent (emitting ``query.agent``) and run it."""
    agent, chosen_by = choose(ctx, requested)
    ctx.event("query.agent", agent=agent, chosen_by=chosen_by)
    return AGENTS[agent](ctx)
