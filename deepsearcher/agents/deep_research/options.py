"""Options of the ``deep_research`` agent: the ``agents.deep_research`` section of config.yaml."""

from __future__ import annotations

from pydantic import Field

from deepsearcher.options import AgentOptions


class DeepResearchOptions(AgentOptions):
    """The DeepResearch loop: budget, limits and how much knowledge each prompt shows."""

    token_budget: int = Field(200_000, gt=0, description=(
        "Hard budget of LLM tokens (prompt + completion) per research run (per section of a long report), checked "
        "before every call like query.token_budget: a call that would eat into final_reserve is not made, and one "
        "forced final answer is written from all knowledge instead (beast mode). What query.token_budget leaves, "
        "when less, wins."))
    final_reserve: float = Field(0.15, ge=0, le=0.5, description=(
        "Share of token_budget kept for the forced final answer (after Jina's DeepResearch, which keeps 15%; at "
        "most half)."))
    max_steps: int = Field(12, gt=0, description="Actions (search, read, reflect, answer) at most, then beast mode.")
    max_bad_attempts: int = Field(2, gt=0, description=(
        "Answers the evaluator may reject before beast mode writes the final answer."))
    max_empty_searches: int = Field(2, gt=0, description=(
        "search is switched off after this many searches in a row found nothing new."))
    max_gaps: int = Field(3, gt=0, description="Open gap questions at most; reflect is off while this many wait.")
    web_results: int = Field(5, gt=0, le=20, description="Results asked of the web search provider per query.")
    web_query_max_chars: int = Field(200, gt=0, le=2000, description=(
        "Longest search query sent to the web search provider; longer ones (and queries that span lines) are "
        "refused with a note to the model. A search is a short expression, and the query is the one text a run "
        "sends to a third party (docs/security.md)."))
    web_query_private_words: int = Field(8, ge=0, description=(
        "A search query that repeats this many consecutive words of a private chunk (text, title or path) not in "
        "the user's question, or an identifier, number or path from one, is not sent to the web search provider: "
        "injected text cannot make the model carry collection text out (docs/security.md). 0 = only identifiers "
        "are checked."))
    read_window: int = Field(1, ge=0, le=5, description=(
        "read opens a chunk with this many neighbouring chunks of its document on each side."))
    page_passages: int = Field(3, gt=0, le=20, description=(
        "Passages of a web page read kept as knowledge: those most similar to the question."))
    prompt_items: int = Field(20, gt=0, description=(
        "Knowledge items shown to the model per step at most: those most similar to the current question (fewer "
        "when the prompt must be fitted to the model's context window, the least similar left out first)."))
    excerpt_chars: int = Field(600, gt=50, description=(
        "Characters of each knowledge item shown per step at most (shorter when the prompt must be fitted to the "
        "model's context window)."))
