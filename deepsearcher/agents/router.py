"""Collection routing: which collections a sub-query should search, chosen by the LLM from their descriptions.

After the reference design's ``CollectionRouter``, with its rough edges fixed: skipped (no LLM call) when only one
collection is in scope; the model sees the original question with the sub-query (a sub-query alone can be
ambiguous) and may rewrite the sub-query for the chosen collections, as the reference router does; names the model
invents are dropped (and reported); an empty or unusable answer means all collections and the sub-query as is.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepsearcher.agents import prompts
from deepsearcher.agents.replies import RouteReply
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import ask, retrieve
from deepsearcher.events import QueryRouted
from deepsearcher.types import Hit

__all__ = ["Route", "RouteReply", "route", "route_and_retrieve"]


@dataclass(frozen=True)
class Route:
    """Where one sub-query goes.

    Attributes:
        collections: collection names to search (never empty).
        dropped: names the model gave that are not in scope.
        fell_back: True when every collection was chosen because the reply was unusable or empty.
        llm_called: False when routing was skipped (one collection).
        query: the text to search: the model's rewrite of the sub-query, else the sub-query.
    """

    collections: list[str]
    dropped: list[str]
    fell_back: bool
    llm_called: bool
    query: str = ""


def route(ctx: QueryContext, query: str) -> Route:
    """Pick the collections for ``query`` (and the text to search there).

    Returns:
        A ``Route``; with one collection in scope, that collection and no LLM call.
    """
    names = [c.name for c in ctx.collections]
    if len(names) <= 1:
        return Route(names, [], False, False, query)
    listing = "\n".join(f"- {c.name}: {c.description or '(no description)'}" for c in ctx.collections)
    reply = ask(ctx, "route", prompts.ROUTE.format(collections=listing, question=ctx.question, query=query),
                RouteReply, RouteReply(collections=[]), "searching all collections")
    known = {n.casefold(): n for n in names}
    chosen: list[str] = []
    dropped: list[str] = []
    for raw in reply.value.collections:
        if prompts.is_placeholder(str(raw)):
            continue  # the example's "<name>" copied: not a collection the model named
        name = known.get(str(raw).strip().strip("`'\"").casefold())
        if name is None:
            dropped.append(str(raw))
        elif name not in chosen:
            chosen.append(name)
    text = reply.value.query or query
    if not chosen:
        return Route(names, dropped, True, True, text)
    return Route(chosen, dropped, reply.fell_back, True, text)


def route_and_retrieve(ctx: QueryContext, iteration: int, query: str) -> list[Hit]:
    """Route ``query`` (emitting ``QueryRouted``) and retrieve its hits from the chosen collections (``steps.retrieve``;
    the router's rewrite is what is searched)."""
    where = route(ctx, query)
    ctx.emit(QueryRouted(iteration=iteration, sub_query=query, collections=where.collections, dropped=where.dropped,
                         fell_back=where.fell_back, query=where.query))
    return retrieve(ctx, where.query, where.collections)
