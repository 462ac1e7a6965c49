"""The model's context window and token counting: the one place every prompt is measured and fitted.

Every step of every agent builds its prompt through ``Window.fit``: the prompt's fixed part (instructions, question,
sub-query) plus a list of items (chunks, summary lines, earlier steps) rendered with an optional excerpt cap. When
the whole does not fit, excerpts are shortened first (``EXCERPT_STEPS``), then the items of lowest priority are left
out (a fused rank across sub-queries, so each sub-query keeps its best chunks), until the prompt plus the room kept
for the reply fits the window.

Where the window size comes from (``resolve_window``), first match wins:

1. ``llm.context_window`` in the config (``openai_compatible``), or ``llm.n_ctx`` (in-process ``llama_cpp``);
2. what the server reports (``ChatModel.context_window()``: llama.cpp ``/props`` ``n_ctx``, vLLM ``max_model_len``,
   Ollama's ``num_ctx``; for OpenAI, DeepSeek and Gemini their documented window; see ``llm.server_info``);
3. ``DEFAULT_CONTEXT_WINDOW`` (8,192 tokens), corrected downwards the first time a server refuses a prompt and names
   its limit ("maximum context length is 2048 tokens": ``Window.learn``).

Tokens are counted with the model's own tokenizer where there is one (``ChatModel.count_tokens``: in-process llama.cpp
``tokenize``, a llama.cpp / vLLM server's ``/tokenize``), else with ``upper_bound_tokens``, a deliberately high
estimate (never tiktoken, which downloads its vocabularies at run time).
"""

from __future__ import annotations

import functools
import logging
import math
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar

from deepsearcher.errors import ContextWindowError
from deepsearcher.llm.base import Message

log = logging.getLogger(__name__)

T = TypeVar("T")

#: window assumed when neither the config nor the server gives one (most current models have at least this; a
#: server with less refuses the first prompt that is too long and names its limit, which ``learn`` picks up)
DEFAULT_CONTEXT_WINDOW = 8192
#: completion room assumed for a model that does not say its ``max_tokens``
DEFAULT_REPLY_TOKENS = 1024
#: tokens a chat template adds around each message (role markers, separators), and once per conversation
MESSAGE_OVERHEAD = 8
CONVERSATION_OVERHEAD = 16
#: share of the window kept free when tokens are estimated rather than counted with the model's tokenizer
ESTIMATE_MARGIN = 0.10
#: excerpt caps (characters) tried in turn before any item is left out; the last is the shortest excerpt shown
EXCERPT_STEPS = (1600, 1000, 700, 450, 300)
#: the least room a reply may get; a call that cannot leave this much is not made
MIN_REPLY_TOKENS = 64

_LIMIT_RE = re.compile(r"(?:context (?:length|window|size)|maximum context length|n_ctx)\D{0,40}?(\d{3,7})",
                       re.IGNORECASE)


def upper_bound_tokens(text: str) -> int:
    """A high estimate of the tokens of ``text`` for any tokenizer: ASCII characters / 3 plus one token per other
    character (measured BPE vocabularies average ~4 ASCII characters per token on prose and at most ~1 token per CJK
    character; Cyrillic or Arabic text is over-counted, which only costs room)."""
    if not text:
        return 0
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def limit_in_message(message: str) -> int | None:
    """The window a server names in an overflow error ("maximum context length is 2048 tokens",
    "exceed context window of 2048"), or None."""
    numbers = [int(m.group(1)) for m in _LIMIT_RE.finditer(message)]
    return min(numbers) if numbers else None


@dataclass(frozen=True)
class Fit(Generic[T]):
    """A prompt fitted to the window.

    Attributes:
        messages: the prompt to send.
        items: the items kept, in the order they were given.
        dropped: items left out.
        excerpt_chars: the excerpt cap applied (characters), or None when every item is whole.
        tokens: the prompt's tokens (counted or estimated).
    """

    messages: list[Message]
    items: list[T]
    dropped: int
    excerpt_chars: int | None
    tokens: int

    @property
    def trimmed(self) -> bool:
        """True when excerpts were shortened or items left out."""
        return self.dropped > 0 or self.excerpt_chars is not None


Render = Callable[[Sequence[T], "int | None"], list[Message]]
"""``render(items, excerpt_chars) -> messages``: the prompt holding ``items``, each excerpt cut at ``excerpt_chars``
characters (None = whole)."""


class Window:
    """A model's context window and token counter (thread-safe; the size may shrink when a server names its limit).

    Args:
        size: the window in tokens (prompt + reply).
        reply_tokens: the completion limit configured for the model (``llm.max_tokens``).
        source: where ``size`` came from, for messages ("llm.context_window", "server /props", "default", ...).
        counter: ``text -> tokens`` with the model's tokenizer, returning None when it cannot count; None = estimate.
    """

    def __init__(self, size: int, reply_tokens: int = DEFAULT_REPLY_TOKENS, source: str = "default",
                 counter: Callable[[str], int | None] | None = None) -> None:
        if size < 2 * MIN_REPLY_TOKENS:
            raise ValueError(f"a context window of {size} tokens is too small")
        self._size = size
        self.reply_tokens = max(1, reply_tokens)
        self.source = source
        self._counter = counter
        self._lock = threading.Lock()
        self._count = functools.lru_cache(maxsize=8192)(self._count_uncached)

    @property
    def size(self) -> int:
        """The window in tokens."""
        return self._size

    @property
    def exact(self) -> bool:
        """True when tokens are counted with the model's tokenizer (else estimated high)."""
        return self._counter is not None

    def count(self, text: str) -> int:
        """Tokens of ``text`` (the model's tokenizer, else ``upper_bound_tokens``); cached per text."""
        return int(self._count(text))

    def _count_uncached(self, text: str) -> int:
        if self._counter is not None and text:
            try:
                counted = self._counter(text)
            except Exception as exc:  # a tokenizer endpoint that went away: estimate from now on
                log.info("token counting failed (%s); estimating from now on", exc)
                self._counter = None
                counted = None
            if counted is not None:
                return int(counted)
        return upper_bound_tokens(text)

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of a conversation, chat-template overhead included."""
        return CONVERSATION_OVERHEAD + sum(MESSAGE_OVERHEAD + self.count(m["content"]) for m in messages)

    @property
    def margin(self) -> int:
        """Tokens kept free for counting errors (10 % of the window when estimating, else 1 %)."""
        return int(self._size * (0.01 if self.exact else ESTIMATE_MARGIN))

    @property
    def reply_reserve(self) -> int:
        """Tokens kept for every reply: ``llm.max_tokens``, but at most half the window."""
        return max(MIN_REPLY_TOKENS, min(self.reply_tokens, self._size // 2))

    def prompt_room(self) -> int:
        """The most tokens a prompt may have: the window less the reply reserve and the margin."""
        return self._size - self.reply_reserve - self.margin

    def reply_room(self, prompt_tokens: int) -> int:
        """The most tokens a reply to a prompt of ``prompt_tokens`` can have before the window is full."""
        return self._size - prompt_tokens - self.margin

    def learn(self, error: ContextWindowError, prompt_tokens: int) -> bool:
        """Shrink the window after the server refused a prompt of ``prompt_tokens`` tokens.

        The new size is the limit the server named, else three quarters of the refused prompt's size (the prompt
        plus its reply did not fit, so the window is smaller than that).

        Returns:
            True when the window shrank (the caller may fit the prompt again and retry), False when it cannot.
        """
        limit = error.limit or limit_in_message(str(error))
        new = limit if limit else (prompt_tokens + self.reply_reserve) * 3 // 4
        with self._lock:
            if new >= self._size or new < 2 * MIN_REPLY_TOKENS:
                return False
            log.info("the model's context window is %d tokens, not %d (%s)", new, self._size, error)
            self._size, self.source = new, "learned from the server's error"
        return True

    def fit(self, render: Render[T], items: Sequence[T], priority: Sequence[float] | None = None,
            room: int | None = None) -> Fit[T]:
        """Render ``items`` into the largest prompt that fits ``room`` tokens (default ``prompt_room()``).

        Whole excerpts first; then every excerpt cut to each of ``EXCERPT_STEPS`` in turn; then, at the shortest
        excerpt, items left out from the lowest priority up (a binary search on how many to keep).

        Args:
            render: builds the prompt from the kept items and an excerpt cap.
            items: candidates, in prompt order.
            priority: one number per item, lower = more important (default: the given order).
            room: the prompt's token limit.

        Raises:
            ContextWindowError: the prompt does not fit even with no items (the fixed part is too long).
        """
        limit = self.prompt_room() if room is None else room
        whole = render(items, None)
        tokens = self.count_messages(whole)
        if tokens <= limit:
            return Fit(whole, list(items), 0, None, tokens)
        for cap in EXCERPT_STEPS:
            messages = render(items, cap)
            tokens = self.count_messages(messages)
            if tokens <= limit:
                return Fit(messages, list(items), 0, cap, tokens)
        cap = EXCERPT_STEPS[-1]
        ranks = list(priority) if priority is not None else list(range(len(items)))
        order = sorted(range(len(items)), key=lambda i: (ranks[i], i))

        def keep(n: int) -> list[T]:
            chosen = set(order[:n])
            return [item for i, item in enumerate(items) if i in chosen]

        lo, hi, best = 0, len(items) - 1, None
        while lo <= hi:  # the most items that fit: prompts only grow with more items
            mid = (lo + hi) // 2
            messages = render(keep(mid), cap)
            tokens = self.count_messages(messages)
            if tokens <= limit:
                best, lo = (mid, messages, tokens), mid + 1
            else:
                hi = mid - 1
        if best is None:
            raise ContextWindowError(
                f"the prompt does not fit the model's context window even without any excerpt: {tokens} tokens "
                f"where {limit} are available ({self.describe()})",
                hint="shorten the question, or use a model with a larger context window (llm.context_window, "
                     "llama.cpp --n_ctx)")
        n, messages, tokens = best
        return Fit(messages, keep(n), len(items) - n, cap, tokens)

    def describe(self) -> str:
        """``"8192-token window (default), 1024 kept for the reply"``."""
        return f"{self._size}-token window ({self.source}), {self.reply_reserve} kept for the reply"


def resolve_window(model: Any) -> Window:
    """The window of a chat model (a provider or a ``MeteredChatModel`` around one).

    Reads the provider's optional ``context_window()`` (config, else server), ``max_tokens`` and ``count_tokens``
    (see ``deepsearcher.protocols.ChatModel``); anything missing takes the defaults above.
    """
    inner = getattr(model, "model", model)
    size: int | None = None
    source = "default"
    probe = getattr(inner, "context_window", None)
    if callable(probe):
        try:
            found = probe()
        except Exception as exc:  # discovery is best effort: a server without the endpoint is not an error
            log.info("could not read the model's context window: %s", exc)
            found = None
        if isinstance(found, tuple):
            size, source = found
        elif found:
            size, source = int(found), "model"
    reply = getattr(inner, "max_tokens", None)
    counter = getattr(inner, "count_tokens", None)
    return Window(size or DEFAULT_CONTEXT_WINDOW, int(reply) if isinstance(reply, int) else DEFAULT_REPLY_TOKENS,
                  source, counter if callable(counter) else None)
