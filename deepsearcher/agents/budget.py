"""The hard token budget and the gate every agent LLM call goes through (window + budget, checked before the call).

``query.token_budget`` limits the tokens (prompt + completion) of one query run. It is checked **before** every call,
not after a round: a call is made only if its prompt plus a useful reply fits what is left after the **reserve**, the
tokens kept back for the final report (its prompt over the chunks accepted so far, plus a reply). The call's
``max_tokens`` is lowered to what is left, so the budget cannot be overrun by one long reply; calls running at once
(the sub-queries of a round) claim their share before they start. When research must stop, ``BudgetExhausted`` is
raised; the agent catches it and writes the report from what it has, saying research stopped on the budget: the seed
design's "beast mode" (node-DeepResearch), a final forced answer instead of running out.

``CallGate`` is a ``ChatModel`` the steps pass to ``llm.output.ask_structured`` / ``ask_text``: it counts the prompt
with the model's window, refuses a prompt that does not fit (``ContextWindowError``), sets ``max_tokens`` to what the
window and the budget leave, and offers ``reply_room`` for the more-room retry of a cut-off reply.
"""

from __future__ import annotations

import threading
from typing import Sequence

from pydantic import BaseModel

from deepsearcher.errors import ContextWindowError
from deepsearcher.llm.base import ChatResult, MeteredChatModel, Message, TokenCallback
from deepsearcher.llm.window import MIN_REPLY_TOKENS, Window

#: the most of the budget held back for the final report
RESERVE_SHARE = 0.5
#: reply tokens the reserve plans for the report (it gets whatever is left in the end)
REPORT_REPLY_TOKENS = 1024


class BudgetExhausted(Exception):
    """A call was not made because it would overrun ``query.token_budget`` (control flow inside an agent: the agent
    stops researching and writes the report; never shown to users as an error).

    Attributes:
        step: the step whose call was refused.
        used: tokens used so far.
        limit: the budget.
    """

    def __init__(self, step: str, used: int, limit: int) -> None:
        super().__init__(f"{step}: the token budget of {limit} is spent ({used} used, the rest kept for the report)")
        self.step = step
        self.used = used
        self.limit = limit


class TokenBudget:
    """What is left of ``query.token_budget`` for one run (thread-safe).

    Args:
        limit: the budget in tokens, or None (no budget: every check passes).
        meter: the run's usage meter (tokens actually used).
        start: tokens the meter had counted when this budget began (a part of a run, ``share``); 0 = the run's.
        setting: the config key that sets ``limit``, for messages that say what to raise.

    Attributes:
        reserve: tokens kept for the final report; agents update it as chunks are accepted (``set_reserve``).
    """

    def __init__(self, limit: int | None, meter: MeteredChatModel, start: int = 0,
                 setting: str = "query.token_budget") -> None:
        self.limit = limit
        self.meter = meter
        self.start = start
        self.setting = setting
        self.reserve = 0
        self._claimed = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """Tokens used since this budget began."""
        return self.meter.total_tokens - self.start

    def share(self, limit: int | None, setting: str) -> TokenBudget:
        """A budget for one part of this run (a DeepResearch run, a section of a long report), counted from now: at
        most ``limit`` tokens (``setting`` names it; None = no limit of its own) and never more than this budget
        leaves (its reserve kept back), so ``query.token_budget``, when lower, wins."""
        left = self.left()
        if limit is None or (left is not None and left < limit):
            return TokenBudget(None if left is None else max(0, left), self.meter, self.meter.total_tokens,
                               self.setting)
        return TokenBudget(limit, self.meter, self.meter.total_tokens, setting)

    def set_reserve(self, report_tokens: int) -> None:
        """Keep ``report_tokens`` (at most ``RESERVE_SHARE`` of the budget) for the final report."""
        if self.limit is not None:
            self.reserve = min(int(self.limit * RESERVE_SHARE), max(0, report_tokens))

    def left(self, final: bool = False) -> int | None:
        """Tokens calls may still use (the reserve included only for the ``final`` call); None without a budget."""
        if self.limit is None:
            return None
        with self._lock:
            return self.limit - self.used - self._claimed - (0 if final else self.reserve)

    def claim(self, step: str, prompt_tokens: int, reply_tokens: int, final: bool = False) -> int:
        """Claim room for a call of ``prompt_tokens`` and return its reply limit (at most ``reply_tokens``).

        Raises:
            BudgetExhausted: fewer than ``MIN_REPLY_TOKENS`` would be left for the reply.
        """
        if self.limit is None:
            return reply_tokens
        with self._lock:
            left = self.limit - self.used - self._claimed - (0 if final else self.reserve)
            reply = min(reply_tokens, left - prompt_tokens)
            if reply < MIN_REPLY_TOKENS:
                raise BudgetExhausted(step, self.used, self.limit)
            self._claimed += prompt_tokens + reply
            return reply

    def release(self, prompt_tokens: int, reply_tokens: int) -> None:
        """Return a claim once its call has finished (the meter then holds what it really used)."""
        if self.limit is not None:
            with self._lock:
                self._claimed -= prompt_tokens + reply_tokens


class CallGate:
    """The ``ChatModel`` one step of one run calls: window check, reply limit and budget claim around each call.

    Args:
        meter: the run's metered model.
        window: the model's context window.
        budget: the run's token budget.
        step: the step name (for errors and ``BudgetExhausted``).
        final: the call writes the final report, so it may use the reserve.
    """

    def __init__(self, meter: MeteredChatModel, window: Window, budget: TokenBudget, step: str,
                 final: bool = False) -> None:
        self.meter = meter
        self.window = window
        self.budget = budget
        self.step = step
        self.final = final
        self.name = meter.name
        self.max_tokens = window.reply_tokens

    def reply_room(self, messages: Sequence[Message]) -> int:
        """The largest reply a call with ``messages`` could get now (window, then budget)."""
        prompt = self.window.count_messages(messages)
        room = self.window.reply_room(prompt)
        left = self.budget.left(self.final)
        return room if left is None else min(room, left - prompt)

    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Make the call with a reply limit of ``max_tokens`` (default ``llm.max_tokens``), lowered to fit the
        window and the budget.

        Raises:
            ContextWindowError: the prompt leaves less than ``MIN_REPLY_TOKENS`` of the window for the reply.
            BudgetExhausted: the budget cannot pay for the prompt and a minimal reply.
            ProviderError: as the model raises it.
        """
        prompt = self.window.count_messages(messages)
        reply = min(max_tokens or self.window.reply_tokens, self.window.reply_room(prompt))
        if reply < MIN_REPLY_TOKENS:
            raise ContextWindowError(
                f"{self.step}: the prompt ({prompt} tokens) leaves no room for a reply in the "
                f"{self.window.describe()}", hint="lower query.top_k or raise the model's context window",
                limit=self.window.size)
        reply = self.budget.claim(self.step, prompt, reply, self.final)
        try:
            return self.meter.chat(messages, schema=schema, on_token=on_token, max_tokens=reply)
        finally:
            self.budget.release(prompt, reply)
