"""The state of one query run (``QueryContext``) and its stop rules; the steps agents share are in ``steps``, the
``Agent`` protocol that runs on it in ``base``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from pydantic import BaseModel

from deepsearcher.agents import prompts
from deepsearcher.agents.budget import CallGate, TokenBudget
from deepsearcher.agents.dedup_rules import threshold_for
from deepsearcher.agents.relevance_check import RelevanceCheck
from deepsearcher.agents.tools import ResearchTools
from deepsearcher.errors import QuestionError
from deepsearcher.events import EventCallback, QueryAnswerRestart, QueryAnswerToken
from deepsearcher.llm.base import MeteredChatModel, Message
from deepsearcher.llm.window import MIN_REPLY_TOKENS, Window, resolve_window
from deepsearcher.options import QuerySettings
from deepsearcher.types import CollectionInfo, Hit

if TYPE_CHECKING:
    from deepsearcher.registry import Registry

SearchFn = Callable[[str, str, int], list[Hit]]
"""``search(query, collection, top_k) -> hits`` best first."""
EmbedFn = Callable[[str], np.ndarray]
"""``embed(text) -> unit vector`` of shape (dim,)."""


def _no_options(name: str) -> BaseModel | None:
    return None


#: tokens a prompt needs besides the question: instructions, the system prompt and at least one short excerpt
QUESTION_FRAME_TOKENS = 600


@dataclass
class StreamedText:
    """The answer text a run has streamed (``query.answer_token``), so that the text of a reply being replaced can be
    taken back (``query.answer_restart``) and a reply kept after all streamed again. One per run, shared by the
    contexts made from it."""

    chars: int = 0
    pieces: list[str] = field(default_factory=list)

    def since(self, start: int) -> str:
        """The text streamed after its first ``start`` characters."""
        return "".join(self.pieces)[start:]

    def add(self, text: str) -> None:
        self.pieces.append(text)
        self.chars += len(text)

    def cut(self, to: int) -> None:
        """Forget the text after its first ``to`` characters."""
        self.pieces = ["".join(self.pieces)[:to]]
        self.chars = to


@dataclass(frozen=True)
class QueryContext:
    """Everything one query run uses; built by ``DeepSearcher.query``.

    Attributes:
        question: the user's question.
        llm: the chat model, metered (calls, tokens, seconds, cost of this run).
        collections: the collections in scope, with their descriptions (for routing).
        search: retrieval function (dense or hybrid, as configured).
        embed: query embedder (for near-duplicate detection).
        settings: query settings with any per-call overrides applied (``max_iter``).
        emit: event callback.
        registry: where agents are looked up (the agent router); None = the process-wide registry.
        agent_options: ``name -> options`` of an agent (its ``agents.<name>`` config section), or None.
        embedding_model: the embedder's model name (picks the calibrated dedup threshold).
        window: the model's context window and token counter; None = ``resolve_window(llm)``.
        budget: the run's token budget; None = ``TokenBudget(settings.token_budget, llm)``.
        now: the time of the question (its date and time zone go into the system prompt); None = now, local time.
        research: what DeepResearch can reach besides ``search`` (web search, page reader, a chunk's neighbours);
            None = the collections only.
        embed_sees: whether ``embed`` can represent every word of a text (``dedup_rules.sees``); sub-queries it
            cannot are deduplicated as text only.
        relevance_check: how often the model picked the relevance step's check passage in this run (shared by the
            run's threads and sections; ``agents.relevance_check``); None = a new one.
        streamed: the answer text streamed so far (``stream``, ``take_back``); shared like ``relevance_check``.
    """

    question: str
    llm: MeteredChatModel
    collections: list[CollectionInfo]
    search: SearchFn
    embed: EmbedFn
    settings: QuerySettings
    emit: EventCallback = field(default=lambda event: None)
    registry: Registry | None = None
    agent_options: Callable[[str], BaseModel | None] = _no_options
    embedding_model: str = ""
    window: Window = None  # type: ignore[assignment]  # filled in by __post_init__
    budget: TokenBudget = None  # type: ignore[assignment]
    now: datetime = None  # type: ignore[assignment]
    research: ResearchTools | None = None
    embed_sees: Callable[[str], bool] = field(default=lambda text: True)
    relevance_check: RelevanceCheck = None  # type: ignore[assignment]
    streamed: StreamedText = field(default_factory=StreamedText)

    def __post_init__(self) -> None:
        if self.window is None:
            object.__setattr__(self, "window", resolve_window(self.llm))
        if self.budget is None:
            object.__setattr__(self, "budget", TokenBudget(self.settings.token_budget, self.llm))
        if self.now is None:
            object.__setattr__(self, "now", datetime.now().astimezone())
        if self.relevance_check is None:
            object.__setattr__(self, "relevance_check",
                               RelevanceCheck(self.settings.relevance_check_strikes))

    def stream(self, text: str) -> None:
        """Stream ``text`` as a piece of the answer (``query.answer_token``)."""
        self.streamed.add(text)
        self.emit(QueryAnswerToken(text=text))

    def take_back(self, to: int, reason: str) -> None:
        """Take back the answer text streamed after its first ``to`` characters, if any (``query.answer_restart``):
        the reply it came from is being replaced."""
        if self.streamed.chars > to:
            self.emit(QueryAnswerRestart(dropped=self.streamed.chars - to, reason=reason))
            self.streamed.cut(to)

    @property
    def language(self) -> str:
        """The report language: ``query.language``, else the question's."""
        return self.settings.language or prompts.QUESTION_LANGUAGE

    @property
    def dedup_threshold(self) -> float:
        """``query.dedup_threshold``, else the threshold calibrated for ``embedding_model`` (``dedup_rules``)."""
        return threshold_for(self.embedding_model, self.settings.dedup_threshold)

    def model(self, step: str, *, final: bool = False) -> CallGate:
        """The chat model one ``step`` calls: fitted to the window, limited by the token budget (``final``: the
        report, which may use the reserve)."""
        return CallGate(self.llm, self.window, self.budget, step, final)

    def messages(self, prompt: str) -> list[Message]:
        """The system prompt (with today's date and time zone) plus one user message."""
        return prompts.messages(prompt, now=self.now)

    def check_question(self) -> None:
        """Refuse a question too long to research, before any LLM call.

        Raises:
            QuestionError: longer than ``query.max_question_tokens``, or too long for the model's window (the
                question appears in every prompt, twice in some, next to the chunks).
        """
        tokens = self.window.count(self.question)
        limit = self.settings.max_question_tokens
        if tokens > limit:
            raise QuestionError(f"the question is {tokens:,} tokens long; the limit is query.max_question_tokens = "
                                f"{limit:,} tokens", hint="shorten the question (put long material into a "
                                "collection with `deepsearcher load`), or raise query.max_question_tokens")
        room = self.window.prompt_room()
        if 2 * tokens + QUESTION_FRAME_TOKENS > room:
            raise QuestionError(
                f"the question ({tokens:,} tokens) is too long for the model's context window: prompts hold it "
                f"twice plus instructions and chunks, and only {room:,} tokens are free in the "
                f"{self.window.describe()}", hint="shorten the question, or use a larger context window "
                "(llm.context_window / llm.n_ctx, the server's context size) or a smaller llm.max_tokens")

    def over_budget(self) -> bool:
        """True when too little of the token budget is left for another research call."""
        left = self.budget.left()
        return left is not None and left < 2 * MIN_REPLY_TOKENS

    def stop_reason(self, proposed: bool, kept: Sequence[str], iteration: int) -> str | None:
        """Why the research loop stops after ``iteration``, or None to go on.

        Args:
            proposed: the model proposed at least one further query.
            kept: those queries left after near-duplicates of searched ones were dropped.
            iteration: rounds run so far.

        Returns:
            "no_gaps", "duplicates", "max_iter", "token_budget" (checked in that order), or None.
        """
        if not proposed:
            return "no_gaps"
        if not kept:
            return "duplicates"
        if iteration >= self.settings.max_iter:
            return "max_iter"
        if self.over_budget():
            return "token_budget"
        return None
