"""LLM output handling, used at every call site: strip reasoning, extract JSON tolerantly, validate, retry, fall back.

Reasoning comes in three shapes and is removed from every reply, not only the final answer:
1. ``<think>…</think>`` blocks anywhere in the content (Qwen3, DeepSeek-R1 distills, QwQ; also ``<thinking>``);
2. a leading prelude with only the closing tag, ``…reasoning…</think>answer`` (chat templates that put the opening
   ``<think>`` in the prompt);
3. a separate ``reasoning_content`` field (DeepSeek ``deepseek-reasoner``, vLLM and llama.cpp reasoning parsers),
   which providers return as ``ChatResult.reasoning``.

JSON is then extracted from code fences or prose around it, repaired (single quotes, Python literals, trailing
commas, truncation; via ``json-repair``) with full-width punctuation (U+FF0C ``，``, ``“ ”``, ``：``) normalised, and
validated against the step's pydantic schema. On failure the model is asked once more, shown its error (paper-qa's
"retryable" errors); if that fails too the step's documented fallback is used. A malformed reply never becomes a
traceback.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Generic, Sequence, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

from deepsearcher.errors import LLMOutputError
from deepsearcher.llm.base import Message, TokenCallback
from deepsearcher.protocols import ChatModel

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_TAGS = "think|thinking|reasoning"
_BLOCK_RE = re.compile(rf"<({_TAGS})>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_CLOSE_RE = re.compile(rf"</({_TAGS})>", re.IGNORECASE)
_OPEN_RE = re.compile(rf"<({_TAGS})>", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_FULL_WIDTH = str.maketrans({
    "\uff0c": ",", "\u3001": ",", "\uff1a": ":", "\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
    "\uff3b": "[", "\uff3d": "]", "\uff5b": "{", "\uff5d": "}", "\u300c": '"', "\u300d": '"', "\uff02": '"',
    "\uff07": "'",
})


def split_reasoning(text: str, reasoning: str = "") -> tuple[str, str]:
    """Separate the answer from the model's reasoning.

    Args:
        text: the reply content.
        reasoning: a separate reasoning field, if the server sent one.

    Returns:
        ``(answer, reasoning)``: the answer with every reasoning shape removed and stripped; all reasoning found,
        joined by blank lines. An opening ``<think>`` that is never closed (a reply cut off while reasoning) makes the
        whole rest reasoning.
    """
    parts = [reasoning.strip()] if reasoning and reasoning.strip() else []
    parts += [m.group(2).strip() for m in _BLOCK_RE.finditer(text)]
    answer = _BLOCK_RE.sub("", text)
    close = _CLOSE_RE.search(answer)
    if close:  # a prelude whose opening tag was in the prompt: everything before the last stray closing tag
        last = list(_CLOSE_RE.finditer(answer))[-1]
        parts.append(answer[: last.start()].strip())
        answer = answer[last.end():]
    opened = _OPEN_RE.search(answer)
    if opened:  # cut off mid-reasoning
        parts.append(answer[opened.end():].strip())
        answer = answer[: opened.start()]
    return answer.strip(), "\n\n".join(p for p in parts if p)


class ThinkStreamFilter:
    """Incrementally remove reasoning from streamed content so only answer text reaches the screen.

    ``feed(delta)`` returns the visible part of each delta; ``flush()`` the rest at the end. Until the stream shows
    whether it opens with reasoning, text is held back: a leading ``<think>`` block is dropped; a ``</think>`` in the
    first ``prelude_chars`` characters drops everything before it (shape 2 above; a longer prelude is shown live).
    Past that point text flows and later tags are removed. The final text is always re-cleaned with
    ``split_reasoning``; this filter only makes the live view right.
    """

    def __init__(self, prelude_chars: int = 256) -> None:
        self.prelude_chars = prelude_chars
        self._buf = ""
        self._state = "start"  # start -> (think | plain); think -> plain
        self._trim = False
        self._emitted = False
        self.reasoning = ""

    def feed(self, delta: str) -> str:
        self._buf += delta
        out: list[str] = []
        while True:
            if self._state == "start":
                stripped = self._buf.lstrip()
                opened = _OPEN_RE.match(stripped)
                close = _CLOSE_RE.search(self._buf)
                inner = _OPEN_RE.search(self._buf)
                if opened:
                    self._buf, self._state = stripped[opened.end():], "think"
                elif close and inner and inner.start() < close.start():
                    self._state = "plain"  # an ordinary block later in the text, handled by the plain state
                elif close:
                    self.reasoning += self._buf[: close.start()]
                    self._buf, self._state = self._buf[close.end():].lstrip(), "plain"
                    self._trim = True
                elif len(self._buf) >= self.prelude_chars:
                    self._state = "plain"
                else:
                    return "".join(out)
            elif self._state == "think":
                close = _CLOSE_RE.search(self._buf)
                if not close:
                    return "".join(out)
                self.reasoning += self._buf[: close.start()]
                self._buf, self._state = self._buf[close.end():], "plain"
                self._trim = not self._emitted  # only a leading block leaves whitespace to drop
            else:  # plain: pass through, cutting out any later blocks, holding a possibly partial tag
                if self._trim:  # the answer after a leading reasoning block starts at its first visible character
                    self._buf = self._buf.lstrip()
                    if not self._buf:
                        return "".join(out)
                    self._trim = False
                opened = _OPEN_RE.search(self._buf)
                if opened:
                    out.append(self._buf[: opened.start()])
                    self._emitted = self._emitted or any(out)
                    self._buf, self._state = self._buf[opened.end():], "think"
                    continue
                close = _CLOSE_RE.search(self._buf)
                if close:
                    out.append(self._buf[: close.start()])
                    self._buf = self._buf[close.end():]
                    continue
                cut = self._buf.rfind("<")
                if cut != -1 and len(self._buf) - cut < 13:
                    out.append(self._buf[:cut])
                    self._buf = self._buf[cut:]
                else:
                    out.append(self._buf)
                    self._buf = ""
                self._emitted = self._emitted or any(out)
                return "".join(out)

    def flush(self) -> str:
        """Return text still held back (nothing if the stream ended inside reasoning)."""
        rest, self._buf = self._buf, ""
        if self._state == "think":
            self.reasoning += rest
            return ""
        return rest


def extract_json(text: str) -> Any:
    """Extract one JSON value from a reply (reasoning already removed).

    Accepts a bare value, a value in a code fence, or a value with prose before/after; repairs single-quoted keys and
    strings, Python literals (``True``, ``None``, ``['a', 'b']``), trailing commas, a truncated tail and full-width
    punctuation.

    Raises:
        LLMOutputError: no JSON object or array in the reply (retryable).
    """
    stripped = text.strip()
    if stripped.startswith('"') and stripped.endswith('"') and len(stripped) > 1:
        try:  # a bare JSON string: the schemas accept one where they expect a single item
            return json.loads(stripped)
        except json.JSONDecodeError:
            pass
    fenced = _FENCE_RE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    for raw in candidates:
        for variant in (raw, raw.translate(_FULL_WIDTH)):
            span = _json_span(variant)
            if span is None:
                continue
            try:
                return json.loads(span)
            except json.JSONDecodeError:
                pass
            try:
                value = json_repair.loads(span)
            except Exception:  # json-repair raises assorted errors on hopeless input; we report one error below
                continue
            if value != "" and value is not None:
                return value
    raise LLMOutputError("the reply contains no JSON object or array", raw=text,
                         hint="the model should answer with JSON only")


def _json_span(text: str) -> str | None:
    """The first balanced ``{…}`` / ``[…]`` (string-aware), or from its start to the end when unbalanced."""
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    if not starts:
        return None
    start = min(starts)
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'" and (ch == '"' or _opens_single_quote(text, i)):
            quote = ch
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if stack and stack[-1] == ch:
                stack.pop()
                if not stack:
                    return text[start: i + 1]
            else:
                break
    return text[start:]


def _opens_single_quote(text: str, i: int) -> bool:
    """A ``'`` starts a string only after a structural character (so "it's" inside prose does not)."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "[{,:"


def parse_reply(text: str, schema: type[T]) -> T:
    """Extract JSON from ``text`` and validate it as ``schema``.

    Raises:
        LLMOutputError: no JSON, or it does not match the schema (message lists the validation errors).
    """
    value = extract_json(text)
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:5])
        raise LLMOutputError(f"the JSON does not match the expected shape: {problems}", raw=text) from exc


@dataclass(frozen=True)
class Structured(Generic[T]):
    """Outcome of one structured step.

    Attributes:
        value: the validated reply, or the step's fallback.
        reasoning: reasoning the model produced (all attempts), "" if none.
        fell_back: True when ``value`` is the fallback.
        error: the last parse/validation error message when it fell back (or was retried), else "".
    """

    value: T
    reasoning: str = ""
    fell_back: bool = False
    error: str = ""


RETRY_TEMPLATE = ("Your previous reply could not be used: {error}\n"
                  "Reply again with only the JSON value, following the requested format exactly.")


def ask_structured(llm: ChatModel, messages: Sequence[Message], schema: type[T], fallback: T) -> Structured[T]:
    """Ask for a reply matching ``schema``; retry once showing the error; else return ``fallback``.

    Args:
        llm: the chat model.
        messages: the step's prompt.
        schema: the step's pydantic schema (also sent to the server as a JSON schema where supported).
        fallback: the step's documented fallback value.

    Returns:
        ``Structured`` with the value, any reasoning, and whether the fallback was used.

    Raises:
        ProviderError: the server failed (transport errors are not the model's output and have no fallback).
    """
    convo = list(messages)
    reasonings: list[str] = []
    error = ""
    for attempt in range(2):
        result = llm.chat(convo, schema=schema)
        answer, reasoning = split_reasoning(result.text, result.reasoning)
        if reasoning:
            reasonings.append(reasoning)
        try:
            value = parse_reply(answer, schema)
            return Structured(value, "\n\n".join(reasonings), False, error)
        except LLMOutputError as exc:
            error = str(exc).split("\n  hint:")[0]
            log.info("%s reply unusable (attempt %d): %s", schema.__name__, attempt + 1, error)
            convo = [*convo, Message(role="assistant", content=answer or result.text),
                     Message(role="user", content=RETRY_TEMPLATE.format(error=error))]
    return Structured(fallback, "\n\n".join(reasonings), True, error)


@dataclass(frozen=True)
class TextReply:
    """A free-text reply with reasoning removed."""

    text: str
    reasoning: str = ""
    finish_reason: str = ""


def ask_text(llm: ChatModel, messages: Sequence[Message], on_token: TokenCallback | None = None) -> TextReply:
    """Ask for free text (streamed to ``on_token`` with reasoning filtered out when given).

    Raises:
        ProviderError: the server failed.
    """
    stream: TokenCallback | None = None
    if on_token is not None:
        flt = ThinkStreamFilter()

        def stream(delta: str) -> None:
            visible = flt.feed(delta)
            if visible:
                on_token(visible)

    result = llm.chat(messages, on_token=stream)
    if on_token is not None:
        rest = flt.flush()
        if rest:
            on_token(rest)
    answer, reasoning = split_reasoning(result.text, result.reasoning)
    return TextReply(answer, reasoning, result.finish_reason)
