"""Query agents: DeepSearch (decompose → route → retrieve → filter → reflect → repeat → synthesise),
NaiveRAG, ChainOfRAG, and the agent router. ``DeepSearcher.query`` is the entry point.

Query events
------------
Every run reports progress through ``Event(kind, data)`` passed to the ``on_event`` callback. The kinds and their
``data`` keys are a stable contract (the CLI, the HTTP/SSE server and the web page render them); every ``data`` is a
JSON-serialisable dict. Keys may be added; none are removed or renamed.

``query.start``        ``{"question": str, "agent": str (as requested: "auto", "deep_search", …), "collections":
                        [str] (in scope), "max_iter": int}`` — once, first.
``query.agent``        ``{"agent": str (the one that runs), "chosen_by": "config" | "llm" | "fallback"}`` — once.
``query.sub_queries``  ``{"iteration": int (1-based), "sub_queries": [str] (to search in this iteration),
                        "duplicates": [str] (dropped as near-duplicates of earlier ones)}`` — once per iteration
                        (ChainOfRAG: one follow-up question per iteration).
``query.routed``       ``{"iteration": int, "sub_query": str, "collections": [str], "dropped": [str] (unknown names
                        the model gave), "fell_back": bool}`` — once per sub-query.
``query.accepted``     ``{"iteration": int, "sub_query": str, "retrieved": int (new chunks seen), "accepted": int,
                        "chunks": [{"id", "collection", "source", "page", "title"}] (the accepted ones),
                        "fell_back": bool}`` — once per sub-query.
``query.intermediate`` ``{"iteration": int, "sub_query": str, "answer": str}`` — ChainOfRAG only.
``query.gaps``         ``{"iteration": int, "gaps": [str] (new gap queries; [] = none), "stop": null | "no_gaps" |
                        "max_iter" | "token_budget" | "duplicates", "tokens": int (LLM tokens so far)}``
                        — once per iteration (DeepSearch, ChainOfRAG; NaiveRAG has none); ``stop`` is set on the
                        last one.
``query.reasoning``    ``{"step": str, "text": str}`` — model reasoning removed from a reply (shown by ``--verbose``).
``query.fallback``     ``{"step": str, "error": str, "fallback": str}`` — a reply stayed unusable after one retry and
                        the step's documented fallback was used (also step "relevance" when no retrieved chunk was
                        judged relevant and the report is written from the top-ranked ones).
``query.answer_token`` ``{"text": str}`` — a piece of the answer as it streams (reasoning filtered out). The final
                        answer may differ: unknown citations are removed and citations renumbered.
``query.report``       ``Report.to_dict()`` — once, last.

Step names (``query.reasoning`` / ``query.fallback``): ``agent``, ``decompose``, ``route``, ``relevance``,
``reflect``, ``follow_up``, ``intermediate``, ``synthesise``.
"""

from deepsearcher.agents.context import QueryContext

QUERY_EVENT_KINDS = (
    "query.start", "query.agent", "query.sub_queries", "query.routed", "query.accepted", "query.intermediate",
    "query.gaps", "query.reasoning", "query.fallback", "query.answer_token", "query.report",
)

__all__ = ["QueryContext", "QUERY_EVENT_KINDS"]
