"""The state of one DeepResearch run: the gap-question queue, the diary, failed attempts, and the rules that switch
actions off (the token budget is ``ctx.budget``, checked by every call: ``agents.budget``).

After Jina's node-DeepResearch (``src/agent.ts``): a queue of questions to answer, starting with the user's; a diary of
what each step did, shown back to the model; failed answers kept with the evaluator's critique and an improvement
plan. Queue order is ours (the issue's): each step works on the head; new gap questions go to the head; the current
question, unless solved, goes back to the tail, so the original question always comes round again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from deepsearcher.agents.deep_research.knowledge import KnowledgeStore
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.types import Evaluation, WebSearchOutcome

Action = Literal["search", "read", "reflect", "answer"]
ACTIONS: tuple[Action, ...] = ("search", "read", "reflect", "answer")
StopReason = Literal["token_budget", "bad_attempts", "max_steps", "no_action"]


@dataclass(frozen=True)
class FailedAttempt:
    """An answer the evaluator rejected.

    Attributes:
        step: the step that answered.
        question: the question it answered.
        answer: the rejected answer.
        critique: why the evaluator rejected it.
        plan: what to do differently.
        checks: the evaluator's checks, check -> passed (None: not run).
    """

    step: int
    question: str
    answer: str
    critique: str
    plan: str
    checks: dict[str, bool | None] = field(default_factory=dict)


@dataclass
class ResearchState:
    """Mutable state of one research run (one question; one section of a long report).

    Attributes:
        question: the original question of this run.
        queue: questions still to answer, head first (starts with ``question``).
        asked: every question queued so far (new gap questions are deduplicated against it).
        current: the question the running step works on ("" between steps).
        step: steps started so far.
        last_action: the previous step's action, None before the first.
        rejected_last: the previous step's answer was rejected.
        empty_searches: searches in a row that added no knowledge item.
        bad_attempts: answers rejected so far.
        diary: one entry per step, in the second person ("At step 2 you searched …").
        failed: the rejected answers with critique and plan.
        checks: question -> the evaluator checks chosen for it.
        researched: questions a step worked on (search, read or answer), in order.
        answered: questions whose answer the evaluator accepted.
        evaluations: every verdict, in order.
        web_searches: every web search and how it went, in order.
    """

    question: str
    queue: deque[str] = field(default_factory=deque)
    asked: list[str] = field(default_factory=list)
    current: str = ""
    step: int = 0
    last_action: Action | None = None
    rejected_last: bool = False
    empty_searches: int = 0
    bad_attempts: int = 0
    diary: list[str] = field(default_factory=list)
    failed: list[FailedAttempt] = field(default_factory=list)
    checks: dict[str, list[str]] = field(default_factory=dict)
    researched: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    web_searches: list[WebSearchOutcome] = field(default_factory=list)

    @classmethod
    def start(cls, question: str) -> ResearchState:
        """A run whose queue holds only ``question``."""
        return cls(question=question, queue=deque([question]), asked=[question])

    def next_question(self) -> str:
        """Start a step: pop the head of the queue as the current question."""
        self.step += 1
        self.current = self.queue.popleft() if self.queue else self.question
        return self.current

    def undo_step(self) -> None:
        """Take back a step that never chose its action (its call was not made): the question goes back to the
        head and the step is not counted."""
        if self.current:
            self.queue.appendleft(self.current)
        self.current = ""
        self.step -= 1

    def add_gaps(self, gaps: list[str]) -> None:
        """Put new gap questions at the head of the queue, in the given order."""
        for gap in reversed(gaps):
            self.queue.appendleft(gap)
        self.asked += gaps

    def end_step(self, action: Action, *, solved: bool = False, rejected: bool = False) -> None:
        """Finish a step: re-queue the current question at the tail unless it was solved."""
        if action != "reflect" and self.current and self.current not in self.researched:
            self.researched.append(self.current)
        if solved and self.current and self.current not in self.answered:
            self.answered.append(self.current)
        if not solved and self.current and self.current not in self.queue:
            self.queue.append(self.current)
        self.current = ""
        self.last_action = action
        self.rejected_last = rejected

    def open_gaps(self) -> list[str]:
        """Gap questions not answered (the current one included), without the original question."""
        pending = ([self.current] if self.current else []) + list(self.queue)
        out: list[str] = []
        for q in pending:
            if q != self.question and q not in out:
                out.append(q)
        return out

    def is_original(self, question: str) -> bool:
        return question == self.question

    def never_researched(self) -> list[str]:
        """Questions queued but never worked on by a search, read or answer step (the original one included)."""
        return [q for q in self.asked if q not in self.researched]

    def best_rejected(self) -> FailedAttempt | None:
        """The best rejected answer: one to the original question before one to a gap question, then the one that
        passed most checks, then the latest; None when no answer was rejected."""
        usable = [f for f in self.failed if f.answer.strip()]
        return max(usable, key=lambda f: (f.question == self.question, sum(ok is True for ok in f.checks.values()),
                                          f.step), default=None)


def allowed_actions(state: ResearchState, store: KnowledgeStore, options: DeepResearchOptions, *,
                    can_open_chunks: bool) -> dict[Action, str]:
    """Which actions the next step may take: ``{action: ""}`` when allowed, ``{action: reason}`` when switched off.

    Rules (after the reference loop's ``allow*`` flags, as listed in the issue):

    - ``search`` is off after ``max_empty_searches`` searches in a row found nothing new;
    - ``read`` is off when no item is left to open (a web result whose page was not read, or — when the store can
      fetch neighbours — a chunk not opened yet);
    - ``reflect`` is off right after a reflect, and while ``max_gaps`` gap questions wait;
    - ``answer`` is off before any knowledge, and right after a rejected answer.
    """
    out: dict[Action, str] = {action: "" for action in ACTIONS}
    if state.empty_searches >= options.max_empty_searches:
        out["search"] = f"{state.empty_searches} searches in a row found nothing new"
    if not store.unread(chunks=can_open_chunks):
        out["read"] = "nothing left to open"
    if state.last_action == "reflect":
        out["reflect"] = "the previous step reflected"
    elif len(state.open_gaps()) >= options.max_gaps:
        out["reflect"] = f"{options.max_gaps} gap questions are already open"
    if not len(store):
        out["answer"] = "no knowledge yet"
    elif state.rejected_last:
        out["answer"] = "the previous answer was rejected"
    return out
