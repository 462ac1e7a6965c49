"""Citations: number the chunks given to the model, verify the ``[n]`` it wrote, and render the report as Markdown.

The one home of the citation pattern (``CITATION_RE``), of a chunk's location as citations show it (``location``)
and of the report's Markdown (``report_markdown``: what ``query --output`` writes and the web page downloads).

Every ``[n]`` in a report must resolve to a chunk retrieved in this run (paper-qa verifies its citation keys the same
way). Numbers outside ``1..len(chunks)`` are removed and counted; the remaining ones are renumbered in order of
first appearance, so a report cites ``[1]``, ``[2]``, … and its Sources section lists exactly those chunks. Ranges
(``[1-3]``) and lists (``[1, 2]``, ``【1】``) are understood and rewritten as ``[1][2][3]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from deepsearcher.types import Chunk, Hit, Report, Source

_SEP = r"\s*(?:,|，|;|、|-|–|and)\s*"
#: A citation: ``[1]``, ``[1, 2]``, ``[1-3]``, ``【1】`` (not a Markdown link ``[1](…)``); group 1 holds the numbers.
CITATION_RE = re.compile(rf"[\[【]\s*(\d{{1,4}}(?:{_SEP}\d{{1,4}})*)\s*[\]】](?!\()")
_RANGE_RE = re.compile(r"(\d+)\s*[-–]\s*(\d+)")
MAX_RANGE = 50


@dataclass(frozen=True)
class Verified:
    """An answer with its citations checked.

    Attributes:
        text: the answer with unknown citations removed and the rest renumbered ``1..len(cited)``.
        cited: the original (1-based) numbers of the cited chunks, in order of first appearance; ``cited[i]`` is
            cited as ``[i + 1]`` in ``text``.
        removed: citation numbers removed because no chunk had them.
    """

    text: str
    cited: list[int]
    removed: int


def citation_numbers(group: str) -> list[int]:
    """The numbers of one citation's group 1 (``"1, 3-5"`` -> [1, 3, 4, 5]; ranges over ``MAX_RANGE`` are not
    expanded)."""
    out: list[int] = []
    for part in re.split(r"\s*(?:,|，|;|、|and)\s*", group):
        span = _RANGE_RE.fullmatch(part.strip())
        if span:
            lo, hi = int(span.group(1)), int(span.group(2))
            if lo <= hi and hi - lo <= MAX_RANGE:
                out.extend(range(lo, hi + 1))
                continue
            out.extend([lo, hi])
        elif part.strip().isdigit():
            out.append(int(part))
    return out


def verify_citations(text: str, count: int) -> Verified:
    """Check and renumber the ``[n]`` citations in ``text`` against ``count`` numbered chunks (1..count).

    Returns:
        ``Verified``; ``removed`` counts each invalid number once per occurrence.
    """
    order: dict[int, int] = {}
    removed = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal removed
        valid: list[int] = []
        for n in citation_numbers(match.group(1)):
            if 1 <= n <= count:
                if n not in valid:
                    valid.append(n)
            else:
                removed += 1
        for n in valid:
            order.setdefault(n, len(order) + 1)
        return "".join(f"[{order[n]}]" for n in valid)

    new = CITATION_RE.sub(replace, text)
    if removed:
        new = re.sub(r"[ \t]+([.,;:!?。，])", r"\1", new)  # "claim [7]." became "claim ." — close the gap
        new = re.sub(r"[ \t]{2,}", " ", new)
    return Verified(new.strip(), list(order), removed)


def cited_sources(verified: Verified, hits: Sequence[Hit]) -> list[Source]:
    """Sources for the renumbered citations (``hits[n - 1]`` was shown to the model as ``[n]``)."""
    return [Source(i, hits[n - 1].chunk, hits[n - 1].collection) for i, n in enumerate(verified.cited, start=1)]


def consulted_sources(hits: Sequence[Hit]) -> list[Source]:
    """All chunks given to the model, numbered as in the prompt (used when an answer cites nothing)."""
    return [Source(i, h.chunk, h.collection) for i, h in enumerate(hits, start=1)]


def location(chunk: Chunk) -> str:
    """File (with page) or URL of a chunk, as a citation shows it."""
    return f"{chunk.source}, p. {chunk.page}" if chunk.page is not None else chunk.source


def source_line(source: Source) -> str:
    """``[n] location — title`` (title omitted when empty or equal to the file name)."""
    where = location(source.chunk)
    title = source.chunk.title.strip()
    shown = f"[{source.number}] {where}"
    if title and title not in where:
        shown += f" — {title}"
    return shown


def gaps_note(gaps: Sequence[str]) -> str:
    """The paragraph appended to an answer when research stopped with open gap queries."""
    items = "\n".join(f"- {g}" for g in gaps)
    return f"**Open questions.** Research stopped before these could be searched:\n{items}"


def cites_any(text: str) -> bool:
    return CITATION_RE.search(text) is not None


def research_note(report: Report) -> str:
    """One italic line on how the answer was checked: the evaluator's checks, or that beast mode forced it ("" for
    an answer no evaluator saw)."""
    if report.beast_mode:
        return ("*Forced final answer: the research budget ran out before an answer passed the evaluator "
                "(beast mode).*")
    if report.checks:
        marks = {True: "passed", False: "failed", None: "not run"}
        return "*Evaluator checks: " + ", ".join(f"{name} {marks[ok]}" for name, ok in report.checks.items()) + ".*"
    return ""


def report_markdown(report: Report, *, title: bool = False) -> str:
    """The whole report as Markdown: the answer, how it was checked (DeepResearch), then a Sources section (file and
    page, or URL, per cited chunk).

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
        parts.append(heading + "\n\n" + "\n".join(f"- {source_line(s)}" for s in report.sources))
    else:
        parts.append("## Sources\n\nNo sources: nothing relevant was retrieved.")
    return "\n\n".join(parts) + "\n"
