"""Query agents: DeepSearch (decompose → route → retrieve → filter → reflect → repeat → synthesise), NaiveRAG,
ChainOfRAG, DeepResearch (a budgeted loop of model-chosen actions with an answer evaluator; ``deep_research/``), the
agent router, and long reports (``long_report/``: outline → sections → coherence pass). ``DeepSearcher.query`` is
the entry point; docs/agents.md compares them.

Agents are registry providers of kind ``agent`` (``deepsearcher.builtins`` registers the built-ins; plugins add more),
implementing ``base.Agent`` and declaring what they can do (``base.AgentCapabilities``: web search, long-report
sections). An agent receives a ``QueryContext`` (``state``: the question, the metered model, its context window, the token
budget and the research tools), uses the shared steps (``steps``: structured asks fitted to the window with cut-off
handling and fallbacks, retrieval, fused rank, dedup, concurrent jobs; ``report``: the report step; ``budget``: the
hard token budget) and reports progress as typed query events (``deepsearcher.events``, listed in docs/events.md);
the run ends with a ``QueryReport``.
"""

from deepsearcher.events import kinds

QUERY_EVENT_KINDS = tuple(kinds("query"))

__all__ = ["QUERY_EVENT_KINDS"]
