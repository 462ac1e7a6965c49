"""LLM output handling, used at every call site: strip reasoning, extract JSON tolerantly, validate, retry, fall back.

Reasoning comes in three shapes and is removed from every reply, not only the final answer:
1. ``<think>…</think>`` blocks at the start of the content (Qwen3, DeepSeek-R1 distills, QwQ; also ``<thinking>``);
   an opening tag at the start that is never closed (a reply cut off while reasoning) makes the whole reply reasoning;
2. a leading prelude with only the closing tag, ``…reasoning…</think>answer`` (chat templates that put the opening
   ``<think>`` in the prompt): the first closing tag with no opening tag before it;
3. a separate ``reasoning_content`` field (DeepSeek ``deepseek-reasoner``, vLLM and llama.cpp reasoning parsers),
   which providers return as ``ChatResult.reasoning``.

Only the start of a reply is reasoning. A tag later in the answer is text the answer quotes ("models wrap their
reasoning in <think> tags") and is kept with everything after it; a tag in inline code or quotes (`` `</think>` ``,
``"</think>"``) is never a tag.

JSON is then taken from wherever the model put it (``llm.json_extract``: the whole reply, code fences, every balanced
value in the prose; repaired where needed) and validated against the step's pydantic schema. On failure the model is
asked once more, shown its error (paper-qa's "retryable" errors); if that fails too the step's documented fallback is
used. A malformed reply never becomes a traceback.

A reply cut at its token limit (``finish_reason == "length"``) is never used as if complete: a structured reply is
asked again once with more room when the window and the budget allow it (the model's ``reply_room``), else its
cut-off last item is dropped (``json_extract.drop_last_leaf``); free text keeps what it has and the caller adds a
visible note (``TextReply.cut_off``). An empty answer after reasoning that filled the limit names ``llm.max_tokens``.
A reply "cut off" after a complete JSON value (a grammar that lets the model write whitespace until its limit) is
used as it is.

A server whose reasoning parser does not match the model (vLLM ``--reasoning-parser``, llama-server
``--reasoning-format``) delivers the whole reply in ``reasoning_content`` with ``content`` empty and a normal finish:
that reasoning is then the reply (``reply_in_reasoning``), said once in the log.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from typing import Generic, Sequence, TypeVar

from pydantic import BaseModel

from deepsearcher.errors import LLMOutputError, without_hint
from deepsearcher.llm.base import ChatResult, Message, StopReply, TokenCallback, estimate_tokens, messages_chars
from deepsearcher.llm.json_extract import extract_json, parse_reply
from deepsearcher.protocols import ChatModel

__all__ = ["RETRY_TEMPLATE", "Structured", "TextReply", "ThinkStreamFilter", "ask_structured", "ask_text",
           "extract_json", "parse_reply", "split_reasoning"]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_TAGS = "think|thinking|reasoning"
_BLOCK_RE = re.compile(rf"<({_TAGS})>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_CLOSE_RE = re.compile(rf"</({_TAGS})>", re.IGNORECASE)
_OPEN_RE = re.compile(rf"<({_TAGS})>", re.IGNORECASE)


def split_reasoning(text: str, reasoning: str = "") -> tuple[str, str]:
    """Separate the answer from the model's reasoning (only a leading block or prelude is reasoning, module
    docstring).

    Args:
        text: the reply content.
        reasoning: a separate reasoning field, if the server sent one.

    Returns:
        ``(answer, reasoning)``: the answer with the leading reasoning removed and stripped; all reasoning found,
        joined by blank lines. An opening ``<think>`` at the start that is never closed (a reply cut off while
        reasoning) makes the whole rest reasoning.
    """
    parts = [reasoning.strip()] if reasoning and reasoning.strip() else []
    answer = text.lstrip()
    close = _first_tag(_CLOSE_RE, answer)
    opened = _first_tag(_OPEN_RE, answer)
    if close is not None and (opened is None or opened.start() > close.start()):  # a prelude
        parts.append(answer[: close.start()].strip())
        answer = answer[close.end():].lstrip()
    while True:
        block = _BLOCK_RE.match(answer)
        if block:
            parts.append(block.group(2).strip())
            answer = answer[block.end():].lstrip()
            continue
        cut = _OPEN_RE.match(answer)
        if cut:  # cut off mid-reasoning
            parts.append(answer[cut.end():].strip())
            answer = ""
        break
    return answer.strip(), "\n\n".join(p for p in parts if p)


_QUOTES = "`'\"“”‘’«»„"


def _first_tag(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` in tag position: not in inline code or quotes (a quoted tag is text)."""
    for match in pattern.finditer(text):
        before = text[match.start() - 1] if match.start() else ""
        after = text[match.end()] if match.end() < len(text) else ""
        if (not before or before not in _QUOTES) and (not after or after not in _QUOTES):
            return match
    return None


class ThinkStreamFilter:
    """Incrementally remove reasoning from streamed content so only answer text reaches the screen.

    ``feed(delta)`` returns the visible part of each delta; ``flush()`` the rest at the end. Until the stream shows
    whether it opens with reasoning, text is held back: a leading ``<think>`` block is dropped; a ``</think>`` in the
    first ``prelude_chars`` characters drops everything before it (shape 2 above; a longer prelude is shown live).
    Past that point text flows as written: a later tag is text the answer quotes. The final text is always
    re-cleaned with ``split_reasoning``; this filter only makes the live view right.
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
                close = _first_tag(_CLOSE_RE, self._buf)
                inner = _first_tag(_OPEN_RE, self._buf)
                if opened:
                    self._buf, self._state = stripped[opened.end():], "think"
                elif close and inner and inner.start() < close.start():
                    self._state = "plain"  # tags later in the text are quoted text
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
            else:  # plain: the answer, passed through as written (a later tag is quoted text, module docstring)
                if self._trim:  # the answer after a leading reasoning block starts at its first visible character
                    self._buf = self._buf.lstrip()
                    if not self._buf:
                        return "".join(out)
                    self._trim = False
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


@dataclass(frozen=True)
class Structured(Generic[T]):
    """Outcome of one structured step.

    Attributes:
        value: the validated reply, or the step's fallback.
        reasoning: reasoning the model produced (all attempts), "" if none.
        fell_back: True when ``value`` is the fallback.
        error: the last parse/validation error message when it fell back (or was retried), else "".
        cut_off: a reply stopped at its token limit.
        cut_action: what was done about it: "retried with more room", "dropped the cut-off last item",
            "retried with more room, then dropped the cut-off last item", or "" (also when it fell back).
        max_tokens: the token limit the (last) cut-off reply hit, when known.
    """

    value: T
    reasoning: str = ""
    fell_back: bool = False
    error: str = ""
    cut_off: bool = False
    cut_action: str = ""
    max_tokens: int | None = None


RETRY_TEMPLATE = ("Your previous reply could not be used: {error}\n"
                  "Reply again with only the JSON value, following the requested format exactly.")
MORE_ROOM = "retried with more room"
DROPPED = "dropped the cut-off last item"


def reply_limit(llm: ChatModel, result: ChatResult) -> int | None:
    """The token limit ``result`` was produced under: the one the call set, else the model's ``max_tokens``."""
    configured = getattr(llm, "max_tokens", None)
    return result.max_tokens or (configured if isinstance(configured, int) else None)


def more_room(llm: ChatModel, messages: Sequence[Message], used: int | None) -> int | None:
    """A larger completion limit for asking ``messages`` again after a reply cut at ``used`` tokens: twice as much
    (at least 256 more), capped by what the model's optional ``reply_room(messages)`` allows (the window, the token
    budget); None when there is no more room or the limit used is unknown."""
    if used is None:
        return None
    room_of = getattr(llm, "reply_room", None)
    room = room_of(messages) if callable(room_of) else None
    wanted = max(2 * used, used + 256)
    new = min(wanted, room) if room is not None else wanted
    return new if new > used else None


def reasoning_used_up(limit: int | None) -> str:
    """The message for a reply whose whole token limit went on reasoning."""
    where = f"llm.max_tokens = {limit}" if limit else "llm.max_tokens"
    return (f"the model spent its whole reply ({where} tokens) reasoning and wrote no answer; raise llm.max_tokens "
            "(reasoning models need several thousand tokens)")


def ask_structured(llm: ChatModel, messages: Sequence[Message], schema: type[T], fallback: T) -> Structured[T]:
    """Ask for a reply matching ``schema``; on a cut-off reply ask once with more room (or drop its cut-off last
    item); on an unusable reply ask once more showing the error; else return ``fallback``. At most two calls.

    Args:
        llm: the chat model (the agents pass one that fits calls to the window and the token budget).
        messages: the step's prompt.
        schema: the step's pydantic schema (also sent to the server as a JSON schema where supported).
        fallback: the step's documented fallback value.

    Returns:
        ``Structured`` with the value, any reasoning, whether the fallback was used and what was done about a
        cut-off reply.

    Raises:
        ProviderError: the server failed (transport errors are not the model's output and have no fallback).
    """
    convo = list(messages)
    reasonings: list[str] = []
    error = ""
    limit: int | None = None
    actions: list[str] = []
    cut_limit: int | None = None
    for attempt in range(2):
        result = llm.chat(convo, schema=schema) if limit is None else llm.chat(convo, schema=schema, max_tokens=limit)
        answer, reasoning = split_reasoning(result.text, result.reasoning)
        answer = answer or reply_in_reasoning(result)
        if reasoning:
            reasonings.append(reasoning)
        complete = complete_value(answer, schema) if result.cut_off else None
        if complete is not None:  # a whole value, then whitespace until the limit: nothing is missing
            return Structured(complete, "\n\n".join(reasonings), False, error)
        if result.cut_off:
            cut_limit = reply_limit(llm, result)
            log.info("%s reply cut off at %s tokens (attempt %d)", schema.__name__, cut_limit, attempt + 1)
            bigger = more_room(llm, convo, cut_limit) if attempt == 0 else None
            if bigger is not None:
                limit = bigger
                actions.append(MORE_ROOM)
                error = reasoning_used_up(cut_limit) if not answer else "the reply was cut off at its token limit"
                continue
        try:
            value = parse_reply(answer, schema, cut_off=result.cut_off)
        except LLMOutputError as exc:
            error = reasoning_used_up(cut_limit) if result.cut_off and not answer and reasoning else \
                without_hint(exc)
            log.info("%s reply unusable (attempt %d): %s", schema.__name__, attempt + 1, error)
            convo = [*convo, Message(role="assistant", content=answer or result.text),
                     Message(role="user", content=RETRY_TEMPLATE.format(error=error))]
            continue
        if result.cut_off:
            actions.append(DROPPED)
        return Structured(value, "\n\n".join(reasonings), False, error, bool(actions), ", then ".join(actions),
                          cut_limit)
    return Structured(fallback, "\n\n".join(reasonings), True, error, cut_limit is not None, "", cut_limit)


@dataclass(frozen=True)
class TextReply:
    """A free-text reply with reasoning removed.

    Attributes:
        text: the answer.
        reasoning: the reasoning removed from it.
        finish_reason: as the server reported it.
        max_tokens: the token limit the reply was produced under, when known.
    """

    text: str
    reasoning: str = ""
    finish_reason: str = ""
    max_tokens: int | None = None

    @property
    def cut_off(self) -> bool:
        """True when the reply stopped at its token limit."""
        return self.finish_reason == "length"


def ask_text(llm: ChatModel, messages: Sequence[Message], on_token: TokenCallback | None = None) -> TextReply:
    """Ask for free text (streamed to ``on_token`` with reasoning filtered out when given).

    Raises:
        ProviderError: the server failed.
    """
    stream: TokenCallback | None = None
    streamed: list[str] = []
    if on_token is not None:
        flt = ThinkStreamFilter()

        def stream(delta: str) -> None:
            streamed.append(delta)
            visible = flt.feed(delta)
            if visible:
                on_token(visible)

    try:
        result = llm.chat(messages, on_token=stream)
    except StopReply:  # a model that does not catch it (a plugin): the text it streamed is the reply
        result = ChatResult("".join(streamed), "", estimate_tokens(messages_chars(messages)),
                            estimate_tokens("".join(streamed)), 1, "stop")
    if on_token is not None:
        rest = flt.flush()
        if rest:
            with contextlib.suppress(StopReply):  # the reply has ended either way
                on_token(rest)
    answer, reasoning = split_reasoning(result.text, result.reasoning)
    return TextReply(answer or reply_in_reasoning(result), reasoning, result.finish_reason, reply_limit(llm, result))


_said_reasoning = False


def reply_in_reasoning(result: ChatResult) -> str:
    """The reply a server delivered in its reasoning field with ``content`` empty and a normal finish (a reasoning
    parser that does not match the model), else ""."""
    global _said_reasoning
    if result.text.strip() or not result.reasoning.strip() or result.cut_off:
        return ""
    if not _said_reasoning:
        _said_reasoning = True
        log.warning("the LLM server delivered a reply in reasoning_content with content empty: its reasoning parser "
                    "does not match the model (vLLM --reasoning-parser, llama-server --reasoning-format); using the "
                    "reasoning as the reply. Start the server without the parser for a model that does not reason.")
    return result.reasoning.strip()


def complete_value(answer: str, schema: type[T]) -> T | None:
    """``answer`` as ``schema`` when it is one complete JSON value followed only by whitespace, else None."""
    import json

    text = answer.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    if text[end:].strip():
        return None
    try:
        return parse_reply(text, schema)
    except LLMOutputError:
        return None
