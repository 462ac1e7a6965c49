"""``ScriptedChatModel``: a fake chat model that replays queued replies and records every prompt.

After simonw/llm's ``MockModel.enqueue`` + ``history``. Used by the unit tests, the LLM-call benchmark and the HTTP
server's tests: they queue the replies the steps should see, run a query, then assert on the recorded prompts and the
``Report``. When the queue runs dry it raises ``ScriptExhaustedError`` (never an ``LLMOutputError``, so no step
fallback can hide a test that expected fewer calls).

Example::

    llm = ScriptedChatModel(['{"sub_queries": ["a", "b"]}', '{"relevant": [1]}'])
    app = DeepSearcher(settings, llm=llm)
    report = app.query("…")
    assert "Break the question" in llm.history[0].prompt
"""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence, Union

from pydantic import BaseModel

from deepsearcher.llm.base import ChatResult, Message, StopReply, TokenCallback, estimate_tokens, messages_chars

Reply = Union[str, ChatResult, Callable[[Sequence[Message]], Union[str, ChatResult]]]


class ScriptExhaustedError(AssertionError):
    """The scripted model was asked for more replies than were queued."""


@dataclass(frozen=True)
class ScriptedCall:
    """One recorded call.

    Attributes:
        messages: the messages sent (copied).
        schema: the pydantic schema requested, or None.
        streamed: whether an ``on_token`` callback was given.
        reply: the raw reply text returned.
        max_tokens: the completion limit the caller asked for (None: the model's default).
    """

    messages: list[Message]
    schema: type[BaseModel] | None
    streamed: bool
    reply: str
    max_tokens: int | None = None

    @property
    def prompt(self) -> str:
        """The last user message (what the step asked)."""
        users = [m["content"] for m in self.messages if m["role"] == "user"]
        return users[-1] if users else ""

    @property
    def system(self) -> str:
        return "\n".join(m["content"] for m in self.messages if m["role"] == "system")


class ScriptedChatModel:
    """Replays queued replies in order.

    Args:
        replies: initial queue. Each reply is a string (the raw model text, ``<think>`` blocks allowed), a
            ``ChatResult`` (to script ``reasoning`` or token counts), or a callable ``messages -> str | ChatResult``
            (to answer depending on the prompt).
        name: model name reported in usage.
        context_window: the window it reports (``context_window()``), like a server would; None = unknown (the
            agents then assume the default).
        max_tokens: its completion limit per call (like ``llm.max_tokens``); None = unknown.

    Token counts are estimated from characters unless a ``ChatResult`` gives them. Streaming (``on_token``) passes the
    reply in word-sized pieces. Replies are never cut to ``max_tokens``: script ``ChatResult(finish_reason="length")``
    for a cut-off reply.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, name: str = "scripted", context_window: int | None = None,
                 max_tokens: int | None = None) -> None:
        self.name = name
        self._window = context_window
        self.max_tokens = max_tokens
        self._queue: deque[Reply] = deque(replies)
        self.history: list[ScriptedCall] = []
        self._lock = threading.Lock()

    def enqueue(self, *replies: Reply) -> "ScriptedChatModel":
        """Append replies to the queue; returns self for chaining."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def context_window(self) -> int | None:
        """The window given to the constructor (None = unknown)."""
        return self._window

    @property
    def remaining(self) -> int:
        """Replies still queued."""
        return len(self._queue)

    @property
    def prompts(self) -> list[str]:
        """The last user message of every call so far."""
        return [call.prompt for call in self.history]

    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Return the next queued reply (``max_tokens`` is recorded, not applied).

        Raises:
            ScriptExhaustedError: the queue is empty (the message shows the prompt that asked).
        """
        with self._lock:
            if not self._queue:
                asked = [m["content"] for m in messages if m["role"] == "user"]
                head = (asked[-1] if asked else "").strip().splitlines()[:3]
                raise ScriptExhaustedError(
                    f"ScriptedChatModel ran out of replies after {len(self.history)} calls; the next prompt was:\n"
                    + "\n".join(head))
            reply = self._queue.popleft()
        if callable(reply):
            reply = reply(messages)
        result = reply if isinstance(reply, ChatResult) else ChatResult(text=str(reply))
        if not result.prompt_tokens and not result.completion_tokens:
            result = ChatResult(text=result.text, reasoning=result.reasoning,
                                prompt_tokens=estimate_tokens(messages_chars(messages)),
                                completion_tokens=estimate_tokens(result.reasoning + result.text),
                                attempts=result.attempts, finish_reason=result.finish_reason or "stop")
        if on_token is not None:
            streamed = ""
            for piece in re.findall(r"\s*\S+|\s+", result.text):
                streamed += piece
                try:
                    on_token(piece)
                except StopReply:  # like a server whose stream is closed: the text so far
                    result = replace(result, text=streamed, finish_reason="stop",
                                     completion_tokens=estimate_tokens(result.reasoning + streamed))
                    break
        with self._lock:
            self.history.append(ScriptedCall([Message(role=m["role"], content=m["content"]) for m in messages],
                                             schema, on_token is not None, result.text, max_tokens))
        return result


def chunk_numbers(prompt: str) -> list[int]:
    """The numbers of a relevance prompt's chunks, without the check passage (``agents.relevance_check``): what a
    scripted model that "reads" may mark as relevant. A fixed ``{"relevant": [1]}`` may name the check passage,
    which makes the run keep every chunk."""
    from deepsearcher.agents.relevance_check import PASSAGES

    checks = {f"{title} ({source})" for title, source, _ in PASSAGES}
    return [int(m.group(1)) for m in re.finditer(r"(?m)^\[(\d+)\] (.*)$", prompt) if m.group(2) not in checks]
