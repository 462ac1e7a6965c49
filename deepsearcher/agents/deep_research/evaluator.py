"""The answer evaluator: decide which checks a question needs, then judge an answer on them (separate prompts from the
research step, after Jina's ``src/tools/evaluator.ts``).

Deviations from the reference, to spend fewer calls: the checks are chosen once per question (the reference decides
for the original question only and runs one call per check); all chosen checks are judged in one call that returns
one boolean per check, a critique and an improvement plan; gap questions get ``definitive`` and ``attribution``
without a choosing call. ``attribution`` first has a mechanical part: an answer that cites no known knowledge item
fails it without an LLM call; so does ``definitive`` for an answer that only repeats the question.

==========  ==============================================================  ==========================================
step        reply schema                                                    fallback
==========  ==============================================================  ==========================================
checks      ``{"definitive": bool, "freshness": bool, …}``                  definitive + attribution
evaluate    ``{<check>: bool, …, "critique": str, "plan": str}``            not verified: accepted, checks unknown
==========  ==============================================================  ==========================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem
from deepsearcher.agents.deep_research.run import Run
from deepsearcher.agents.deep_research.schemas import CheckChoice, verdict_model
from deepsearcher.agents.echoes import repeats_question

GAP_CHECKS = ["definitive", "attribution"]
#: measured: Qwen2.5-Coder-0.5B answered HotpotQA questions with the question itself ("<If Gallu is a demon Lilu is
#: what?>"); such an answer is rejected without an evaluator call
QUESTION_AGAIN = ("The answer only repeats the question; it answers nothing.",
                  "Write the answer itself from the knowledge items, or search for what is still missing.")
NO_CITATION = ("The answer cites no knowledge item, so none of its statements is attributed to a source.",
               "Cite the knowledge items that support each statement as [n], using only the numbers listed.")


@dataclass(frozen=True)
class Verdict:
    """The evaluator's decision on one answer.

    Attributes:
        passed: every chosen check passed (or the evaluator's reply was unusable: ``verified`` is then False).
        checks: check -> passed; None for a check not run (an unusable evaluator reply).
        critique: why it failed ("" when it passed).
        plan: how to improve it ("" when it passed).
        verified: the checks were really run (False when the evaluator's reply was unusable).
    """

    passed: bool
    checks: dict[str, bool | None] = field(default_factory=dict)
    critique: str = ""
    plan: str = ""
    verified: bool = True


def checks_for(run: Run, question: str) -> list[str]:
    """The checks an answer to ``question`` must pass: chosen by the model once for the original question (cached in
    the run's state); ``GAP_CHECKS`` for gap questions."""
    state = run.state
    if question in state.checks:
        return state.checks[question]
    if not state.is_original(question):
        chosen = list(GAP_CHECKS)
    else:
        fallback = CheckChoice(definitive=True, attribution=True)
        reply = run.ask("checks", lambda items, cap: rprompts.checks_prompt(question), [], None, CheckChoice,
                        fallback, "checking definitive and attribution")
        chosen = reply.value.chosen or list(GAP_CHECKS)
    state.checks[question] = chosen
    return chosen


def evaluate(run: Run, question: str, answer: str, checks: list[str]) -> Verdict:
    """Judge ``answer`` to ``question`` on ``checks`` (one call; none when the answer repeats the question or cites
    nothing).

    Raises:
        BudgetExhausted: the budget cannot pay for the call (the run goes to beast mode).
    """
    cited = run.store.cited(answer)
    mechanical = (("definitive", QUESTION_AGAIN) if repeats_question(answer, question)
                  else ("attribution", NO_CITATION) if "attribution" in checks and not cited else None)
    if mechanical is not None:  # failed without a call: the other checks are not run
        check, (critique, plan) = mechanical
        results: dict[str, bool | None] = {c: None for c in checks}
        results[check] = False
        return Verdict(False, results, critique, plan)
    schema = verdict_model(tuple(checks))
    grounded = [g for item in cited for g in run.store.grounding(item)] or cited

    def render(items: Sequence[KnowledgeItem], cap: int | None) -> str:
        return rprompts.evaluate_prompt(question, answer, checks, items, cap, today=run.ctx.now.date())

    fallback = schema.model_validate({c: True for c in checks})
    reply = run.ask("evaluate", render, grounded, None, schema, fallback, "accepting the answer unverified")
    if reply.fell_back:
        return Verdict(True, {c: None for c in checks}, verified=False)
    value = reply.value
    judged = value.results()
    passed = all(judged.values())
    return Verdict(passed, dict(judged), "" if passed else value.critique.strip() or _failed(judged),
                   "" if passed else value.plan.strip())


def _failed(results: dict[str, bool]) -> str:
    return "The answer failed the check(s): " + ", ".join(c for c, ok in results.items() if not ok) + "."
