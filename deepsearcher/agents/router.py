"""Collection routing: which collections a sub-query should search, chosen by the LLM from their descriptions.

After the reference design's ``CollectionRouter``, with its rough edges fixed: skipped (no LLM call) when only one
collection is in scope; names the model invents are dropped (and reported); an empty or unusable answer means all
collections.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, model_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import ask


class RouteReply(BaseModel):
    """``{"collections": [name, ...]}`` (a bare list is accepted)."""

    collections: list[str]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: object) -> object:
        if isinstance(value, list):
            return {"collections": value}
        if isinstance(value, str):
            return {"collections": [value]}
        return value


@dataclass(frozen=True)
class Route:
    """Where one sub-query goes.

    Attributes:
        collections: collection names to search (never empty).
        dropped: names the model gave that are not in scope.
        fell_back: True when every collection was chosen because the reply was unusable or empty.
        llm_called: False when routing was skipped (one collection).
    """

    collections: list[str]
    dropped: list[str]
    fell_back: bool
    llm_called: bool


def route(ctx: QueryContext, query: str) -> Route:
    """Pick the collections for ``query``.

    Returns:
        A ``Route``; with one collection in scope, that collection and no LLM call.
    """
    names = [c.name for c in ctx.collections]
    if len(names) <= 1:
        return Route(names, [], False, False)
    listing = "\n".join(f"- {c.name}: {c.description or '(no description)'}" for c in ctx.collections)
    reply = ask(ctx, "route", prompts.ROUTE.format(collections=listing, query=query), RouteReply, RouteReply(collections=[]),
                "searching all collections")
    known = {n.casefold(): n for n in names}
    chosen: list[str] = []
    dropped: list[str] = []
    for raw in reply.value.collections:
        name = known.get(str(raw).strip().strip("`'\"").casefold())
        if name is None:
            dropped.append(str(raw))
        elif name not in chosen:
            chosen.append(name)
    if not chosen:
        return Route(names, dropped, True, True)
    return Route(chosen, dropped, reply.fell_back, True)
