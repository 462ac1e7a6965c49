"""CLI lines for the events of DeepResearch and long reports (steps, web searches, reads, verdicts, beast mode,
outline, sections, saved pages), in the events' own words (``Event.describe``); ``render.QueryProgress`` merges these
handlers into its own."""

from __future__ import annotations

from typing import Any, Callable

from deepsearcher.events import (
    QueryBeastMode, QueryEvaluation, QueryOutline, QueryRead, QuerySaved, QuerySection, QueryStep, QueryWebSearch,
)


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
        head, *off = e.describe()
        view._line(head)
        if view.verbose and off:
            view._line(f"    {off[0]}", "dim")
        view.status = f"Step {e.step}: {e.action}"

    def web(self, e: QueryWebSearch) -> None:
        self.view._line(f"    {e.describe()[0]}", "yellow" if e.error else "dim")

    def read(self, e: QueryRead) -> None:
        head, *failures = e.describe()
        self.view._line(f"    {head}", "green" if e.added else "dim")
        for failure in failures:
            self.view._line(f"    {failure}", "yellow")

    def verdict(self, e: QueryEvaluation) -> None:
        self.view._line(f"    {e.describe()[0]}", "green" if e.passed else "yellow")

    def beast(self, e: QueryBeastMode) -> None:
        self.view._line(e.describe()[0], "yellow")
        self.view.status = "Writing the final answer"

    def outline(self, e: QueryOutline) -> None:
        head, *sections = e.describe()
        self.view._line(head)
        for section in sections:
            self.view._line(f"  {section}", "dim")

    def section(self, e: QuerySection) -> None:
        view = self.view
        line = e.describe()[0]
        if e.status in ("research", "synthesis"):
            view._line(line)
            view.answer += f"\n\n## {e.title}\n\n"
            view.status = f"Section {e.index}/{e.total}: " + ("researching" if e.status == "research" else "writing")
        elif e.status == "written":
            view._line(f"  {line}", "green")
        else:
            view._line(line)
            view.answer = ""
            view.status = "Editing the report"

    def saved(self, e: QuerySaved) -> None:
        self.view._line(e.describe()[0], "yellow" if e.error else "")
