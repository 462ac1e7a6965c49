"""Agent router: run the agent named in the config, or (``query.agent: auto``) let the LLM pick one per question.

The agents are the registry's (built-ins and plugins alike); the model chooses among them by their registered
descriptions.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, create_model, model_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.base import AUTO, build_agent, check_agent_name, registry_of
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import ask
from deepsearcher.events import QueryAgent
from deepsearcher.types import Report

DEFAULT_AGENT = "deep_search"
_ALIASES = {"deepsearch": "deep_search", "chainofrag": "chain_of_rag", "corag": "chain_of_rag",
            "naiverag": "naive", "naive": "naive"}


class AgentChoiceBase(BaseModel):
    """``{"agent": name}`` (spelling variants like "Deep Search" accepted); subclassed per set of agent names."""

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, str):
            value = {"agent": value}
        if isinstance(value, dict) and isinstance(value.get("agent"), str):
            key = "".join(ch for ch in value["agent"].casefold() if ch.isalnum())
            names = {"".join(ch for ch in n.casefold() if ch.isalnum()): n for n in _names_of(cls)}
            value = {**value, "agent": _ALIASES.get(key) or names.get(key, value["agent"])}
        return value


def _names_of(model: type[BaseModel]) -> tuple[str, ...]:
    annotation: Any = model.model_fields["agent"].annotation
    return tuple(getattr(annotation, "__args__", ()))


@functools.lru_cache(maxsize=16)
def choice_model(names: tuple[str, ...]) -> type[AgentChoiceBase]:
    """The reply schema for choosing among ``names``: ``{"agent": one of names}``."""
    agent_type: Any = Literal[names]
    return create_model("AgentChoice", __base__=AgentChoiceBase, agent=(agent_type, ...))


def choose(ctx: QueryContext, requested: str) -> tuple[str, str]:
    """Resolve ``requested`` ("auto" or an agent name) to ``(agent, chosen_by)``.

    ``chosen_by`` is "config" for a named agent, "llm" when the model picked, "fallback" when its reply stayed
    unusable or the token budget allowed no call (then deep_search).

    Raises:
        ConfigError: an unknown agent name.
    """
    registry = registry_of(ctx)
    check_agent_name(registry, requested)
    if requested != AUTO:
        return requested, "config"
    names = tuple(registry.names("agent"))
    strategies = prompts.agent_strategies(registry.providers("agent"))
    schema = choice_model(names)
    try:
        reply = ask(ctx, "agent", prompts.CHOOSE_AGENT.format(strategies=strategies, question=ctx.question), schema,
                    schema.model_validate({"agent": DEFAULT_AGENT}), f"using {DEFAULT_AGENT}")
    except BudgetExhausted:  # the chosen agent meets the budget too, and says so in its report
        return DEFAULT_AGENT, "fallback"
    return str(getattr(reply.value, "agent")), "fallback" if reply.fell_back else "llm"


def run(ctx: QueryContext, requested: str) -> Report:
    """Pick the agent (emitting ``QueryAgent``), build it from the registry with its options, and run it."""
    name, chosen_by = choose(ctx, requested)
    ctx.emit(QueryAgent(agent=name, chosen_by=chosen_by))  # type: ignore[arg-type]
    return build_agent(registry_of(ctx), name, ctx.agent_options).run(ctx)
