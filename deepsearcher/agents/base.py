"""The ``Agent`` protocol, beside the ``QueryContext`` it runs on, and what an agent declares it can do.

An agent is a registry provider of kind ``agent`` (built-ins and plugins alike). Besides ``name`` and ``run(ctx)`` it
may declare ``capabilities`` (an ``AgentCapabilities``, usually a class attribute): whether it uses the web search
tools (``QueryContext.research``) and whether it can research the sections of a long report. The composition root
(``DeepSearcher.query``), long reports and ``deepsearcher eval`` read the declaration through the registry
(``capabilities``), so a plugin agent that declares them gets the same as a built-in; nothing elsewhere decides by an
agent's name.

"auto or a registered agent" (``check_agent_name``) is the one rule for what ``--agent`` / ``query.agent`` accept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from pydantic import BaseModel

from deepsearcher.agents.state import QueryContext
from deepsearcher.errors import ConfigError
from deepsearcher.registry import Registry
from deepsearcher.registry import registry as default_registry
from deepsearcher.types import Report

#: the agent name that lets the agent router pick one per question
AUTO = "auto"

OptionsFn = Callable[[str], "BaseModel | None"]
"""``options(name) -> the agent's validated options`` (``Settings.agent_options``, ``QueryContext.agent_options``)."""


@dataclass(frozen=True)
class AgentCapabilities:
    """What an agent can do besides answering a question over the collections.

    Attributes:
        web_search: it uses ``QueryContext.research`` (web search provider, page reader): the query builds those
            tools for it when ``web_search`` is configured, and ``--web`` / ``--save-to`` are accepted with it.
        sections: it can research the sections of a long report (``--report long --agent NAME``, and ``deepsearcher
            eval --report long --mode NAME``). An agent with a ``research_section`` method (``agents.long_report.
            sections.SectionResearcher``) researches into the report's shared knowledge; any other is run on each
            section's question and its report's sources join the shared knowledge.
    """

    web_search: bool = False
    sections: bool = False


#: what an agent that declares nothing can do
NO_CAPABILITIES = AgentCapabilities()


@runtime_checkable
class Agent(Protocol):
    """A research strategy (an ``agent`` provider): turns a question into a cited ``Report``.

    Attributes:
        name: the registered name (``--agent NAME``).

    Optional: ``capabilities: AgentCapabilities`` (read with ``capabilities_of``; none declared = none).
    """

    name: str

    def run(self, ctx: QueryContext) -> Report:
        """Research ``ctx.question`` with ``ctx``'s model, collections and search, emitting query events.

        Raises:
            ProviderError: the LLM failed (malformed replies are retried and fall back instead).
        """
        ...


@dataclass(frozen=True)
class FunctionAgent:
    """An ``Agent`` made of a name and a ``run(ctx) -> Report`` function (how the simple built-in agents register)."""

    name: str
    run_fn: Callable[[QueryContext], Report]
    capabilities: AgentCapabilities = NO_CAPABILITIES

    def run(self, ctx: QueryContext) -> Report:
        """Answer ``ctx.question`` (see ``Agent``)."""
        return self.run_fn(ctx)


def capabilities_of(agent: object) -> AgentCapabilities:
    """The capabilities ``agent`` declares (``NO_CAPABILITIES`` when it declares none, or something else)."""
    declared = getattr(agent, "capabilities", None)
    return declared if isinstance(declared, AgentCapabilities) else NO_CAPABILITIES


def check_agent_name(registry: Registry, requested: str) -> None:
    """The one rule for an agent name: "auto" or a registered agent.

    Raises:
        ConfigError: anything else (the message lists the registered agents).
    """
    known = registry.names("agent")
    if requested != AUTO and requested not in known:
        raise ConfigError(f"unknown agent {requested!r}", hint=f"use one of: {AUTO}, {', '.join(known)}")


def build_agent(registry: Registry, name: str, options: OptionsFn) -> Agent:
    """The registered agent ``name`` built with its options.

    Raises:
        ConfigError: no agent of that name.
    """
    agent: Agent = registry.get("agent", name).create(options(name))
    return agent


def default_options(registry: Registry) -> OptionsFn:
    """Each agent's default options (its options model with no settings), None for an agent without a model."""

    def options(name: str) -> BaseModel | None:
        model = registry.get("agent", name).options_model()
        return model() if model is not None else None

    return options


def capabilities(registry: Registry, name: str, options: OptionsFn) -> AgentCapabilities:
    """What agent ``name`` declares; for "auto", what any registered agent declares (the router may pick it)."""
    if name != AUTO:
        return capabilities_of(build_agent(registry, name, options))
    every = [capabilities(registry, n, options) for n in registry.names("agent")]
    return AgentCapabilities(web_search=any(c.web_search for c in every), sections=any(c.sections for c in every))


def agents_with(registry: Registry, options: OptionsFn, *, web_search: bool = False,
                sections: bool = False) -> list[str]:
    """The registered agents declaring the asked capabilities, in registration order."""
    found = []
    for name in registry.names("agent"):
        declared = capabilities(registry, name, options)
        if (declared.web_search or not web_search) and (declared.sections or not sections):
            found.append(name)
    return found


def registry_of(ctx: QueryContext) -> Registry:
    """Where ``ctx``'s agents are looked up (the process-wide registry unless the context names one)."""
    return ctx.registry or default_registry
