"""The bases of every options model — a provider's (``ProviderOptions``) and an agent's (``AgentOptions``) — and
the ``query:`` section every agent reads (``QuerySettings``), so agents need nothing from ``settings`` (which
composes the providers' options and so sits above ingest/).

They sit below ``deepsearcher.settings`` so that each provider's options can live beside the provider
(``llm/options.py``, ``embedding/options.py``, ``vectordb/options.py``, ``ingest/options.py``,
``websearch/base.py``) while ``settings`` imports the defaults it needs without an import cycle.
``deepsearcher.settings`` re-exports both bases, the names plugin authors use.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, ValidationError, field_validator, model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError
from typing_extensions import Self

PathResolver = Callable[[Union[str, Path]], Path]


def _bool_for_a_number(annotation: Any, value: Any) -> bool:
    """``value`` holds a bool where ``annotation`` takes a number and no bool: ``int``, ``float | None``,
    ``Annotated[int, …]``, ``Literal[0, 1, 2]``, and the items of ``list[int]`` / ``tuple[int, …]`` / the values of
    ``dict[str, float]`` (pydantic's lax mode reads True as 1 in each)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _bool_for_a_number(args[0], value)
    if origin in (Union, types.UnionType):
        if isinstance(value, bool) and any(a is bool or get_origin(a) is Annotated and get_args(a)[0] is bool
                                           for a in args):
            return False  # the union takes a bool as it is
        return any(_bool_for_a_number(a, value) for a in args)
    if isinstance(value, bool):
        if origin is Literal:
            return bool(args) and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args)
        return annotation in (int, float)
    if origin in (list, tuple, set, frozenset) and isinstance(value, (list, tuple)) and args:
        items = args[:1] if origin is not tuple or len(args) == 2 and args[1] is Ellipsis else args
        return any(_bool_for_a_number(items[min(i, len(items) - 1)], v) for i, v in enumerate(value))
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return any(_bool_for_a_number(args[1], v) for v in value.values())
    return False


class NumbersNotBools(BaseModel):
    """A model where a boolean for a number is an error naming the field, listed with the model's other errors:
    pydantic's lax mode reads ``true`` as 1 (``relevance_check_strikes: true`` ran as 1; a JSON ``"top_k": true``
    searched for one chunk). ``_bool_hint`` follows the message ("" for JSON bodies)."""

    _bool_hint: ClassVar[str] = ""

    @model_validator(mode="wrap")
    @classmethod
    def _no_bool_for_a_number(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if not isinstance(data, dict):
            return handler(data)
        fields = {**{f.alias: f for f in cls.model_fields.values() if f.alias}, **cls.model_fields}
        wrong = [key for key, value in data.items()
                 if isinstance(key, str) and key in fields and _bool_for_a_number(fields[key].annotation, value)]
        if not wrong:
            return handler(data)
        errors = [cls._not_a_number(key, data[key]) for key in wrong]
        try:  # the other fields' errors too, so one run lists them all
            handler({k: v for k, v in data.items() if k not in wrong})
        except ValidationError as exc:
            errors += [_again(e) for e in exc.errors() if e["loc"][:1] not in [(k,) for k in wrong]]
        raise ValidationError.from_exception_data(cls.__name__, errors)

    def __setattr__(self, name: str, value: Any) -> None:
        # with validate_assignment the model validator gets the model, not the new value
        field = type(self).model_fields.get(name)
        if field is not None and _bool_for_a_number(field.annotation, value):
            raise ValidationError.from_exception_data(type(self).__name__, [self._not_a_number(name, value)])
        super().__setattr__(name, value)

    @classmethod
    def _not_a_number(cls, key: str, value: Any) -> InitErrorDetails:
        return InitErrorDetails(type=PydanticCustomError("number_not_bool", "must be a number, got {got}" +
                                                         cls._bool_hint, {"got": _as_text(value)}),
                                loc=(key,), input=value)


def _as_text(value: Any) -> str:
    """A value as the user wrote it in YAML or JSON (``true``, ``[1, false]``)."""
    return "true" if value is True else "false" if value is False else json.dumps(value, default=str)


def _again(error: Any) -> InitErrorDetails:
    """One of ``ValidationError.errors()`` as a line error to raise again: pydantic's own type with its context, or
    (a custom message, under pydantic's type name or its own) the same type name with the message as written."""
    ctx = error.get("ctx")
    details = InitErrorDetails(type=error["type"], loc=error["loc"], input=error["input"])
    if ctx:
        details["ctx"] = ctx
    try:
        if ValidationError.from_exception_data("check", [details]).errors()[0]["msg"] == error["msg"]:
            return details
    except (KeyError, TypeError, ValueError):
        pass  # e.g. our "url_scheme" message, whose name pydantic has with another context
    return InitErrorDetails(type=PydanticCustomError(error["type"], error["msg"]), loc=error["loc"],
                            input=error["input"])


class StrictModel(NumbersNotBools):
    """A config model: an unknown key is an error (``extra="forbid"``), assignments are validated, and a boolean for
    a number is an error (``NumbersNotBools``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    _bool_hint: ClassVar[str] = " (YAML reads true/false, yes/no and on/off as booleans)"


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
        1, ge=0, description="deep_search: when the model's relevance reply for the question keeps any chunk, the "
                             "question's own best-ranked chunks (this many) are kept too: a small model's filter "
                             "drops passages the question ranks first (docs/benchmarks.md). 0 = the reply alone "
                             "decides. chain_of_rag has its own: agents.chain_of_rag.question_floor.")
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
    stop_runaway_reports: bool = Field(
        True, description="End the report's reply where the model starts copying its prompt's sources (a shown "
                          "source's header, then its text) or says a sentence a third time: that text never reaches "
                          "the report, and a small model would write it until llm.max_tokens "
                          "(agents/reply_guard.py, docs/benchmarks.md). DeepResearch's forced answer and a long "
                          "report's sections are stopped at a loop only. false = let every report run to its end.")
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
