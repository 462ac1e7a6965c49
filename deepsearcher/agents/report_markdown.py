"""The report as Markdown: the answer, how it was checked, and a Sources section that names each cited file once.

What ``query --output`` writes, the web page downloads and the API's ``markdown`` field holds (``report_markdown``),
with the notes agents append to an answer (``gaps_note``) and the Sources grouping the web page shows too
(``group_sources``). What counts as a citation, and a chunk's location as citations show it, are ``citations``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from deepsearcher.agents.citations import cites_any, location, place
from deepsearcher.types import OtherSource, Report, Source


@dataclass(frozen=True)
class SourceGroup:
    """The cited chunks of one file or URL, for a Sources list that names each file once.

    Attributes:
        source: the file path or URL.
        title: the document title ("" when none, or when it only repeats the file name).
        collection: the collection of its first cited chunk.
        sources: its cited chunks, by citation number.
    """

    source: str
    title: str
    collection: str
    sources: list[Source]

    @property
    def refs(self) -> str:
        """``[1], [2]``, or with places ``[3] p. 2, [4] slide 5, [5] › Install › Linux`` (``citations.place``)."""
        return ", ".join(f"[{s.number}]" + (f" {place(s.chunk)}" if place(s.chunk) else "") for s in self.sources)

    def line(self) -> str:
        """``/d/lite.md — lite: [1], [2]`` (title left out when empty or part of the path), then ``(also in …)``
        when the same text is stored under other sources."""
        head = self.source + (f" — {self.title}" if self.title else "")
        others: dict[str, OtherSource] = {}
        for source in self.sources:
            for other in source.also_in:
                others.setdefault(location(other), other)
        tail = f" ({also_in_text(list(others.values()))})" if others else ""
        return f"{head}: {self.refs}{tail}"


def group_sources(sources: Sequence[Source]) -> list[SourceGroup]:
    """Group sources by file or URL, in order of each file's first citation number."""
    groups: dict[str, list[Source]] = {}
    for source in sorted(sources, key=lambda s: s.number):
        groups.setdefault(source.chunk.source, []).append(source)
    out: list[SourceGroup] = []
    for path, members in groups.items():
        title = members[0].chunk.title.strip()
        out.append(SourceGroup(path, "" if not title or title in path else title, members[0].collection, members))
    return out


def also_in_text(others: Sequence[OtherSource]) -> str:
    """``"also in /b/policy.md, /c/policy.md"`` for the other copies of a text ("" when there are none)."""
    return "also in " + ", ".join(location(o) for o in others) if others else ""


def gaps_note(gaps: Sequence[str]) -> str:
    """The paragraph appended to an answer when research stopped with open gap queries."""
    items = "\n".join(f"- {g}" for g in gaps)
    return f"**Open questions.** Research stopped before these could be searched:\n{items}"


def research_note(report: Report) -> str:
    """One italic line on how the answer was checked: the evaluator's checks, or that beast mode forced it ("" for
    an answer no evaluator saw)."""
    if report.beast_mode:
        return ("*Forced final answer (beast mode): research ended on its budget or limits before an answer passed "
                "the evaluator.*")
    if report.checks:
        marks = {True: "passed", False: "failed", None: "not run"}
        return "*Evaluator checks: " + ", ".join(f"{name} {marks[ok]}" for name, ok in report.checks.items()) + ".*"
    return ""


def report_markdown(report: Report, *, title: bool = False) -> str:
    """The whole report as Markdown: the answer, how it was checked (DeepResearch), then a Sources section listing
    each cited file or URL once with the citation numbers (and pages) that point into it.

    Args:
        report: the report.
        title: start with the title (a long report's) or the question as a level-1 heading (``query --output``
            files, the web page's download and the API's ``markdown`` field do; the terminal does not repeat it).
    """
    parts = [f"# {' '.join((report.title or report.question).split())}"] if title else []
    parts.append(report.answer.strip())
    if research_note(report):
        parts.append(research_note(report))
    if report.sources:
        heading = "## Sources" if cites_any(report.answer) else "## Sources consulted (the answer cites none)"
        parts.append(heading + "\n\n" + "\n".join(f"- {g.line()}" for g in group_sources(report.sources)))
    else:
        parts.append("## Sources\n\nNo sources: nothing relevant was retrieved.")
    return "\n\n".join(parts) + "\n"
