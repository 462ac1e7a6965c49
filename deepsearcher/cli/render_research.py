"""CLI lines for the events of DeepResearch and long reports (steps, web searches, reads, verdicts, beast mode,
outline, sections, saved pages); ``render.QueryProgress`` merges these handlers into its own."""

from __future__ import annotations

from typing import Any, Callable

from deepsearcher.events import (
    QueryBeastMode, QueryEvaluation, QueryOutline, QueryRead, QuerySaved, QuerySection, QueryStep, QueryWebSearch,
)

BEAST_TEXT = {"token_budget": "the token budget is spent", "bad_attempts": "too many answers were rejected",
              "max_steps": "the step limit is reached", "no_action": "no action was left to take"}
MARK = {True: "✓", False: "✗", None: "?"}


def checks_text(checks: dict[str, bool | None]) -> str:
    """``definitive ✓, attribution ✗`` (``?`` for a check not run)."""
    return ", ".join(f"{name} {MARK[ok]}" for name, ok in checks.items())


class ResearchLines:
    """Handlers writing DeepResearch and long-report events to a ``QueryProgress`` view (its ``_line``, ``status``,
    ``answer`` and ``stepwise``)."""

    def __init__(self, view: Any) -> None:
        self.view = view

    def handlers(self) -> dict[type[Any], Callable[[Any], None]]:
        return {QueryStep: self.step, QueryWebSearch: self.web, QueryRead: self.read, QueryEvaluation: self.verdict,
                QueryBeastMode: self.beast, QueryOutline: self.outline, QuerySection: self.section,
                QuerySaved: self.saved}

    def step(self, e: QueryStep) -> None:
        view = self.view
        view.stepwise = True
        about = "" if e.original else f" on “{e.question}”"
        why = f" — {e.think}" if e.think else ""
        fell = " (fallback: the reply was unusable)" if e.fell_back else ""
        view._line(f"Step {e.step}: {e.action}{about}{fell}{why}")
        if view.verbose and e.disabled:
            view._line("    off: " + "; ".join(f"{a} ({why})" for a, why in e.disabled.items()), "dim")
        view.status = f"Step {e.step}: {e.action}"

    def web(self, e: QueryWebSearch) -> None:
        if e.error.startswith("not sent:"):
            self.view._line(f"    ! web search ({e.provider}) {e.error}", "yellow")
        elif e.error:
            self.view._line(f"    ! web search ({e.provider}) failed: {e.error}", "yellow")
        else:
            self.view._line(f"    ↗ web ({e.provider}): {e.query} → {e.results} results ({e.new} new)", "dim")

    def read(self, e: QueryRead) -> None:
        self.view._line(f"    ✓ read {len(e.opened)} item(s), {e.added} new: " + "; ".join(e.opened),
                        "green" if e.added else "dim")
        for failure in e.failed:
            self.view._line(f"    ! could not read {failure}", "yellow")

    def verdict(self, e: QueryEvaluation) -> None:
        outcome = "accepted" if e.passed else f"rejected: {e.critique}"
        self.view._line(f"    evaluator ({checks_text(e.checks)}): {outcome}", "green" if e.passed else "yellow")

    def beast(self, e: QueryBeastMode) -> None:
        self.view._line(f"Beast mode after {e.step} step(s): {BEAST_TEXT.get(e.reason, e.reason)}; writing the final "
                        "answer from all knowledge", "yellow")
        self.view.status = "Writing the final answer"

    def outline(self, e: QueryOutline) -> None:
        how = {"llm": "", "file": " (from the outline file)", "fallback": " (fallback outline)"}[e.source]
        self.view._line(f"Outline: {e.title}{how}")
        for i, section in enumerate(e.sections, start=1):
            self.view._line(f"  {i}. {section.get('title', '')}: {section.get('question', '')}", "dim")

    def section(self, e: QuerySection) -> None:
        view = self.view
        if e.status == "research":
            view._line(f"Section {e.index}/{e.total}: {e.title}")
            view.answer += f"\n\n## {e.title}\n\n"
            view.status = f"Section {e.index}/{e.total}: researching"
        elif e.status == "written":
            view._line(f"  ✓ section {e.index} written ({e.sources} sources cited)", "green")
        else:
            view._line(f"Editing the whole report ({e.sources} sources)")
            view.answer = ""
            view.status = "Editing the report"

    def saved(self, e: QuerySaved) -> None:
        if e.error:
            self.view._line(f"Web pages not saved to {e.collection}: {e.error}", "yellow")
        else:
            self.view._line(f"Saved {e.pages} web page(s) ({e.chunks} new chunks) to collection {e.collection}")
