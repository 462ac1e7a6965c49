"""The bases of every options model — a provider's (``ProviderOptions``) and an agent's (``AgentOptions``) — and
the ``query:`` section every agent reads (``QuerySettings``), so agents need nothing from ``settings`` (which
composes the providers' options and so sits above ingest/).

They sit below ``deepsearcher.settings`` so that each provider's options can live beside the provider
(``llm/options.py``, ``embedding/options.py``, ``vectordb/options.py``, ``ingest/options.py``,
``websearch/base.py``) while ``settings`` imports the defaults it needs without an import cycle.
``deepsearcher.settings`` re-exports both bases, the names plugin authors use.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError
from typing_extensions import Self

PathResolver = Callable[[Union[str, Path]], Path]


def _number_not_bool(annotation: Any) -> bool:
    """The annotation takes an int or a float and not a bool (``int``, ``float | None``, ``Annotated[int, …]``)."""
    if get_origin(annotation) is Annotated:
        return _number_not_bool(get_args(annotation)[0])
    kinds = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    kinds = tuple(get_args(k)[0] if get_origin(k) is Annotated else k for k in kinds)
    return bool not in kinds and any(k in (int, float) for k in kinds)


class StrictModel(BaseModel):
    """A config model: an unknown key is an error (``extra="forbid"``), assignments are validated, and a boolean for
    a number is an error (pydantic's lax mode reads ``true`` as 1: ``relevance_check_strikes: true`` ran as 1)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        wrong = [InitErrorDetails(type=PydanticCustomError(
                     "number_not_bool", "must be a number, got {got} (YAML reads true/false, yes/no and on/off as "
                     "booleans)", {"got": str(value).lower()}), loc=(key,), input=value)
                 for key, value in data.items()
                 if isinstance(value, bool) and key in cls.model_fields
                 and _number_not_bool(cls.model_fields[key].annotation)]
        if wrong:  # each with its key, so the error names query.concurrency, not query
            raise ValidationError.from_exception_data(cls.__name__, wrong)
        return data


def http_base_url(value: str | None) -> str | None:
    """A ``base_url`` setting checked: it must start with ``http://`` or ``https://`` (without, the HTTP client fails
    only at the first request, with "Request URL is missing an 'http://' or 'https://' protocol"); None stays."""
    if value is not None and not value.startswith(("http://", "https://")):
        raise PydanticCustomError("url_scheme", "must start with http:// or https://, got {got} (e.g. {example})",
                                  {"got": repr(value), "example": f"http://{value}"})
    return value


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
    relevance_check: bool = Field(
        True, description="Show a check passage, unrelated to the question, among the chunks of every relevance "
                          "prompt; a call whose reply marks it helpful keeps every chunk, and after "
                          "relevance_check_strikes such replies the run keeps every retrieved chunk from then on "
                          "(agents/relevance_check.py).")
    relevance_check_strikes: int = Field(
        2, ge=1, description="Replies marking the check passage after which the model is taken as not judging: "
                             "every later relevance call of the run keeps every chunk without asking. 1 = at the "
                             "first (a small model's one slip then costs the run its filter: docs/benchmarks.md).")
    relevance_keep_top: int = Field(
        1, ge=0, description="deep_search and chain_of_rag: when the model's relevance reply (chain_of_rag: its "
                             "first intermediate answer's supporting list) for the question keeps any chunk, the "
                             "question's own best-ranked chunks (this many) are kept too: a small model's filter "
                             "drops passages the question ranks first (docs/benchmarks.md). 0 = the reply alone "
                             "decides.")
    long_report_budget_runs: float = Field(
        2.0, gt=0, le=20, description="A long report (every section, the outline and the editing pass together) may "
                                      "use at most this many times agents.deep_research.token_budget tokens per "
                                      "request; later sections are cut short when it is spent. Without it one "
                                      "request could spend one budget per section (8 sections: 8x). "
                                      "query.token_budget, when lower, wins.")
    report_links: Literal["cited", "all"] = Field(
        "cited", description="Links in a model-written answer (the report's answer, report.md, the API's markdown "
                             "and answer_html) stay links only to URLs this run retrieved or read (its sources, the "
                             "pages it read): cited. Any other becomes its text and host with \"removed: not "
                             "retrieved by this run\", so a link can neither carry data out on a click nor pass for a "
                             "source; the report's unretrieved_urls lists them. all = keep http(s) links to any URL, "
                             "those not read marked \"(not retrieved by this run)\". Remote images and raw HTML are "
                             "always removed (docs/security.md).")
    read_private_result_urls: bool = Field(
        False, description="Let DeepResearch read web search results (and their redirects) whose host resolves to "
                           "a loopback, private, link-local (cloud metadata), CGNAT or reserved address. A search "
                           "engine, not you, chose those URLs, so they are refused by default whatever "
                           "crawler.allow_private_urls or server.allow_private_urls say (docs/security.md).")
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


DEFAULT_KEY_HOSTS = frozenset({"api.openai.com"})
"""The hosts the default key variable ($OPENAI_API_KEY) is sent to when ``api_key_env`` is left unset."""


def key_variable(options: ProviderOptions) -> str | None:
    """The environment variable whose key goes to ``options.base_url`` (OpenAI-compatible LLM or embedding options:
    they have ``api_key_env`` and ``base_url``).

    A key belongs to its service: the default ``api_key_env`` ($OPENAI_API_KEY) is sent only to OpenAI (no
    ``base_url``, or one on ``DEFAULT_KEY_HOSTS``); another server gets a key only when the config names the
    variable (``api_key_env: DEEPSEEK_API_KEY``, or ``OPENAI_API_KEY`` written out), so pointing ``base_url`` at a
    local or third-party server never hands it the OpenAI key by accident.
    """
    env: str | None = getattr(options, "api_key_env", None)
    base_url: str | None = getattr(options, "base_url", None)
    if not env or "api_key_env" in options.model_fields_set or base_url is None:
        return env
    from urllib.parse import urlsplit

    return env if (urlsplit(base_url).hostname or "").lower() in DEFAULT_KEY_HOSTS else None
