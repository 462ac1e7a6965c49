"""The usage meter of chat models, and helpers every provider uses (the ``ChatModel`` protocol is in
``deepsearcher.protocols``; ``Message``, ``ChatResult`` and ``TokenCallback`` are in ``deepsearcher.types`` and
re-exported here).

Messages are OpenAI-shaped dicts (``{"role": "system" | "user" | "assistant", "content": str}``) because every provider
we support speaks that shape. A provider returns the model's *raw* text: stripping reasoning and parsing JSON is the
job of ``deepsearcher.llm.output``, so it happens the same way for every provider and every call site.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
import time
from typing import Any, Callable, Sequence

from pydantic import BaseModel

from deepsearcher.protocols import ChatModel
from deepsearcher.types import ChatResult, Message, StopReply, TokenCallback, Usage

__all__ = ["ChatResult", "MeteredChatModel", "Message", "StopReply", "TokenCallback", "accepts_keyword",
           "estimate_tokens", "json_schema", "messages_chars", "schema_name"]


def estimate_tokens(text: str) -> int:
    """Rough token count (characters / 4, at least 1 for non-empty text) for servers that report no usage."""
    return (len(text) + 3) // 4 if text else 0


def messages_chars(messages: Sequence[Message]) -> str:
    return "\n".join(m["content"] for m in messages)


class MeteredChatModel:
    """Wraps a ``ChatModel`` and counts calls, tokens, seconds and cost for one run.

    Args:
        model: the provider.
        price_per_1m_input, price_per_1m_output: prices per million tokens; cost is None unless both are set.

    Thread-safe: steps call it from worker threads (the sub-queries of a round run concurrently).
    """

    def __init__(self, model: ChatModel, price_per_1m_input: float | None = None,
                 price_per_1m_output: float | None = None) -> None:
        self.model = model
        self.name = getattr(model, "name", type(model).__name__)
        self.prices = (price_per_1m_input, price_per_1m_output)
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._takes_max_tokens = accepts_keyword(model.chat, "max_tokens")

    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Complete ``messages`` with the wrapped model and count the call.

        ``max_tokens`` (the completion limit of this call) is passed on when the model's ``chat`` accepts it (every
        built-in provider does; a plugin written before it existed is called without it) and recorded in the
        result.
        """
        if max_tokens is not None and self._takes_max_tokens:
            result = self.model.chat(messages, schema=schema, on_token=on_token, max_tokens=max_tokens)
            result = dataclasses.replace(result, max_tokens=max_tokens)
        else:
            result = self.model.chat(messages, schema=schema, on_token=on_token)
        with self._lock:
            self.calls += max(1, result.attempts)
            self.prompt_tokens += result.prompt_tokens
            self.completion_tokens += result.completion_tokens
        return result

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def usage(self) -> Usage:
        """Usage so far; seconds since the meter was created."""
        pin, pout = self.prices
        cost = None
        if pin is not None and pout is not None:
            cost = round(self.prompt_tokens * pin / 1e6 + self.completion_tokens * pout / 1e6, 6)
        return Usage(llm_calls=self.calls, prompt_tokens=self.prompt_tokens,
                     completion_tokens=self.completion_tokens, seconds=round(time.monotonic() - self._start, 3),
                     cost=cost)


def accepts_keyword(function: Callable[..., Any], name: str) -> bool:
    """True when ``function`` takes a keyword argument ``name`` (or ``**kwargs``)."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def schema_name(schema: type[BaseModel]) -> str:
    """A name servers accept for a JSON schema (``[a-zA-Z0-9_-]{1,64}``)."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in schema.__name__)[:64] or "reply"


#: items allowed in a list the schema leaves unbounded: a grammar-constrained small model otherwise may repeat an
#: array's items until ``max_tokens`` (seen with llama.cpp grammars)
MAX_LIST_ITEMS = 50


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema`` as sent to servers, with every list bounded (``maxItems``)."""
    sent: dict[str, Any] = bound_lists(schema.model_json_schema())
    return sent


def bound_lists(node: Any) -> Any:
    """``node`` with ``maxItems: MAX_LIST_ITEMS`` added to every ``array`` schema that has none (in place)."""
    if isinstance(node, dict):
        if node.get("type") == "array" and "maxItems" not in node:
            node["maxItems"] = MAX_LIST_ITEMS
        for value in node.values():
            bound_lists(value)
    elif isinstance(node, list):
        for value in node:
            bound_lists(value)
    return node
