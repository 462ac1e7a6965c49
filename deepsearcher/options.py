"""The bases of every options model — a provider's (``ProviderOptions``) and an agent's (``AgentOptions``) — and
the ``query:`` section every agent reads (``QuerySettings``), so agents need nothing from ``settings`` (which
composes the providers' options and so sits above ingest/).

They sit below ``deepsearcher.settings`` so that each provider's options can live beside the provider
(``llm/options.py``, ``embedding/options.py``, ``vectordb/options.py``, ``ingest/options.py``,
``websearch/base.py``) while ``settings`` imports the defaults it needs without an import cycle.
``deepsearcher.settings`` re-exports both bases, the names plugin authors use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError
from typing_extensions import Self

PathResolver = Callable[[Union[str, Path]], Path]


class StrictModel(BaseModel):
    """A config model: an unknown key is an error (``extra="forbid"``) and assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ProviderOptions(StrictModel):
    """Base of every provider's options model: the section's ``provider:`` name plus the provider's own keys.

    Plugin authors subclass it (or ``LoaderOptions`` / ``CrawlScope`` / ``VectorDBOptions`` for those kinds) with
    ``extra="forbid"`` kept, give every field a ``description``, and register the model with the provider.
    """

    provider: str = Field(..., description="Registered provider name (`deepsearcher config providers`).")

    def resolved(self, resolve: PathResolver) -> Self:
        """These options with relative file paths resolved (``resolve`` maps a path against the config folder);
        providers whose options hold paths override it."""
        return self


class AgentOptions(StrictModel):
    """Base of an agent's options model (the ``agents.<name>`` section of the config)."""


class QuerySettings(StrictModel):
    """The agent loop."""

    agent: str = Field("deep_search", description="Agent: auto (the LLM picks per question), deep_search, "
                                                  "chain_of_rag, naive, deep_research, or a plugin's agent.")
    max_iter: int = Field(3, gt=0, description="Reflection rounds at most.")
    top_k: int = Field(5, gt=0, description="Chunks retrieved per (sub-query, collection).")
    max_sub_queries: int = Field(4, gt=0, description="Sub-queries the question is decomposed into at most.")
    token_budget: int | None = Field(
        None, gt=0, description="Hard limit on LLM tokens (prompt + completion) per query, checked before every call; "
                                "room for the final report is kept back, and research stops early to write it.")
    hybrid: bool = Field(True, description="Dense + BM25 (full text), fused by a weighted sum of normalised scores.")
    language: str | None = Field(None, description="Report language; None = the question's language.")
    dedup_threshold: float | None = Field(
        None, gt=0, le=1, description="Cosine at or above which two sub-queries are duplicates (unless numbers, names "
                                      "or negation tell them apart). None = calibrated per embedding model "
                                      "(docs/benchmarks.md: 0.91 for all-MiniLM-L6-v2, 0.97 for other models).")
    max_question_tokens: int = Field(
        3000, gt=0, description="Longer questions are refused before any LLM call (the question is part of every "
                                "prompt).")
    concurrency: int = Field(4, gt=0, description="Sub-queries of one round routed, retrieved and judged at once "
                                                  "(threads); 1 = one after the other.")
    answer_from_top_chunks_when_irrelevant: bool = Field(
        False, description="When every retrieved chunk is judged irrelevant, answer from the top-ranked chunks "
                           "anyway (with a visible warning) instead of reporting that nothing relevant was found.")

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str) -> str:
        from deepsearcher.registry import registry

        known = registry.names("agent")
        if value != "auto" and value not in known:
            raise PydanticCustomError("literal_error", "Input should be {expected} (the registered agents)",
                                      {"expected": " or ".join(map(repr, ["auto", *known]))})
        return value
