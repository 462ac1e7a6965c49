"""Beast mode: DeepResearch must stop (the token budget, the rejected answers allowed or the steps are spent, or no
action is left) and one final answer is forced from all knowledge.

The forced final answer (``final_answer``) is the only call made after the budget tripped, and exactly one: it may
use the reserve kept for it (``run.research_context``), and its prompt is fitted to the window and to what the budget
leaves.
"""

from __future__ import annotations

from typing import Sequence

from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem
from deepsearcher.agents.deep_research.run import Run
from deepsearcher.agents.deep_research.state import StopReason
from deepsearcher.agents.report import budget_too_small, cut_off, empty_answer, nothing_found, write_fitted
from deepsearcher.agents.reply_guard import loops_only
from deepsearcher.agents.rewrites import check_rewrite, moved_note
from deepsearcher.events import QueryBeastMode


class BeastMode(Exception):
    """Research must end in the forced final answer (``reason``): the bad attempts or steps are spent, or no action
    is possible. (A spent token budget is ``agents.budget.BudgetExhausted``.)"""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


def final_answer(run: Run, reason: StopReason) -> str:
    """Beast mode: one forced answer from all knowledge (``2 × prompt_items`` items most similar to the question),
    streamed as ``query.answer_token``. Exactly one LLM call (none without knowledge, or when the budget cannot pay
    even for a short prompt): it may use the reserve and its prompt is fitted to the window and to what the budget
    leaves (``report.write_fitted``)."""
    ctx, state = run.ctx, run.state
    ctx.emit(QueryBeastMode(reason=reason, step=state.step, tokens=ctx.llm.total_tokens,
                            bad_attempts=state.bad_attempts))
    if not len(run.store):
        return nothing_found(ctx)
    plans = [f.plan for f in state.failed if f.plan]
    items, priority = run.shown(state.question, 2 * run.options.prompt_items)

    unresearched = [q for q in state.never_researched() if q != state.question]

    def render(kept: Sequence[KnowledgeItem], cap: int | None) -> str:
        return rprompts.final_prompt(state.question, kept, plans, language=ctx.language, excerpt_chars=cap,
                                     unresearched=unresearched)

    try:
        reply, _ = write_fitted(ctx, "final_answer", run.renderer(render), items, priority,
                                guard=loops_only)
    except BudgetExhausted:
        return best_rejected(run) or budget_too_small(ctx, []).answer
    if not reply.text.strip():
        return best_rejected(run) or empty_answer(reply) + cut_off(ctx, "final_answer", reply)
    return over_earlier_answers(run, items, reply.text) + cut_off(ctx, "final_answer", reply)


def best_rejected(run: Run) -> str:
    """The answer to the original question the evaluator rejected that passed most checks, marked as such, for a
    forced answer that is empty or could not be paid for ("" when there is none)."""
    attempt = run.state.best_rejected()
    if attempt is None:
        return ""
    to = "" if attempt.question == run.state.question else f', an answer to "{attempt.question}"'
    return (f"{attempt.answer.strip()}\n\n*{BEST_REJECTED} (step {attempt.step}{to}): "
            f"{attempt.critique or 'it failed a check'}*")


BEST_REJECTED = "The forced final answer was empty, so this is the best answer the evaluator rejected"


def over_earlier_answers(run: Run, shown: Sequence[KnowledgeItem], text: str) -> str:
    """The forced answer with the rewrite rule applied (``agents.rewrites``): a sentence taken from an earlier
    answer keeps that answer's citations (both expanded to the items they rest on); new sentences cite evidence
    items directly and are not checked here."""
    earlier = [run.store.expand_answers(i.text) for i in shown if i.kind == "answer"]
    if not earlier:
        return text
    checked = check_rewrite("\n".join(earlier), run.store.expand_answers(text), new_claims=False)
    if not checked.moved:
        return text
    return f"{checked.text}\n\n{moved_note(checked.moved, 'the final answer')}"
