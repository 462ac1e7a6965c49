"""The report as Markdown: the answer, how it was checked, and a Sources section that names each cited file once.

What ``query --output`` writes, the web page downloads and the API's ``markdown`` field holds (``report_markdown``),
with the notes agents append to an answer (``gaps_note``) and the Sources grouping the web page shows too
(``group_sources``). What counts as a citation, and a chunk's location as citations show it, are ``citations``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from deepsearcher.agents.citations import cites_any, location, place
from deepsearcher.agents.cited_support import support_note
from deepsearcher.agents.run_dates import dates_note
from deepsearcher.agents.safe_markdown import LinkRule, check_links, known_urls, md_inline, md_source, safe_answer
from deepsearcher.agents.scaffold import word
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
        head = md_source(self.source) + (f" — {md_inline(self.title)}" if self.title else "")  # outside text
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


def gaps_note(gaps: Sequence[str], researched: Sequence[str] | None = None) -> str:
    """The paragraph appended to an answer when research stopped with open gap queries; with ``researched`` (the
    questions a step worked on) it says which were researched without an answer and which were never searched."""
    if researched is None:
        items = "\n".join(f"- {g}" for g in gaps)
        return f"**Open questions.** Research stopped before these could be searched:\n{items}"
    searched = [g for g in gaps if g in researched]
    never = [g for g in gaps if g not in researched]
    parts = ["**Open questions.**"]
    if searched:
        parts.append("Researched, but no answer citing a source was accepted:\n" + "\n".join(f"- {g}" for g in searched))
    if never:
        parts.append("Not researched (research stopped first):\n" + "\n".join(f"- {g}" for g in never))
    return "\n".join(parts)


STATUS_WORDS = {"answered": "answered", "nothing_found": "researched, nothing found",
                "not_researched": "not researched"}


def questions_note(report: Report) -> str:
    """What became of each question and every evaluator verdict, in words ("" when there is nothing to say: one
    question, answered, no rejection)."""
    rejected = [e for e in report.evaluations if not e.passed]
    if not rejected and all(q.status == "answered" for q in report.questions) and len(report.questions) <= 1:
        return ""
    # questions, details and critiques are model text: literal Markdown (md_inline), no link or image out of them
    lines = [f"- {md_inline(q.question)}: {STATUS_WORDS[q.status]} ({md_inline(q.detail)})" if q.detail else
             f"- {md_inline(q.question)}: {STATUS_WORDS[q.status]}" for q in report.questions]
    marks = {True: "passed", False: "failed", None: "not run"}
    for e in report.evaluations:
        checks = ", ".join(f"{name} {marks[ok]}" for name, ok in e.checks.items())
        verdict = "accepted" if e.passed else f"rejected: {md_inline(e.critique)}"
        lines.append(f"- Evaluator, step {e.step} ({md_inline(e.question)}): {verdict}" +
                     (f" [{checks}]" if checks else ""))
    return "**Questions and verdicts.**\n" + "\n".join(lines)


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


def escape_markdown(text: str) -> str:
    """``text`` with Markdown's inline markers escaped (a short answer is plain text; it shows as written)."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def report_urls(report: Report) -> set[str]:
    """What the report's answer may link to (``safe_markdown.known_urls``): its sources' URLs and the pages it
    read."""
    return known_urls([*(s.chunk.source for s in report.sources), *report.pages_read])


def safe_report_answer(report: Report, links: LinkRule = "cited") -> str:
    """The report's answer as it may be shown or written (``safe_markdown.safe_answer``: no remote images, raw HTML
    escaped, links only to URLs this run retrieved or read unless ``links`` is "all")."""
    return safe_answer(report.answer, report_urls(report), links)


def with_checked_links(report: Report, pages_read: Sequence[str], links: LinkRule = "cited") -> Report:
    """``report`` with the pages the run read recorded and the link rule applied to its answer and its short answer
    (``safe_markdown.check_links``): a link to a URL neither among its sources nor read is removed (or marked, with
    ``links: all``) and listed once in ``unretrieved_urls``; the sources are left as they are."""
    report = replace(report, pages_read=list(dict.fromkeys([*report.pages_read, *pages_read])))
    known = report_urls(report)
    answer, unretrieved = check_links(report.answer, known, links)
    short, in_short = check_links(report.short_answer, known, links)  # the one-line answer is answer text too
    found = list(dict.fromkeys([*report.unretrieved_urls, *unretrieved, *in_short]))
    return replace(report, answer=answer, short_answer=short, unretrieved_urls=found)


def links_note(report: Report) -> str:
    """The note on URLs the answer gave that this run never retrieved or read ("" when there were none)."""
    count = len(report.unretrieved_urls)
    if not count:
        return ""
    return (f"**Links.** The answer linked to {count} URL{'s' if count > 1 else ''} this run never retrieved or read; those links are "
            "marked \"not retrieved by this run\" and are not among the sources.")


WEB_WORDS = {"ok": "ok", "no_results": "0 results", "degraded": "degraded", "failed": "failed",
             "not_sent": "not sent"}


def web_note(report: Report) -> str:
    """The "Web search" note: every search and how it went, when any was not clean ("" when all were ok)."""
    if all(w.outcome == "ok" for w in report.web_searches):
        return ""
    lines = [f"- {md_inline(w.query)} ({md_inline(w.provider)}): {WEB_WORDS[w.outcome]}" +
             (f": {md_inline(w.detail)}" if w.detail else "") for w in report.web_searches]
    return "**Web search.** Not every web search went through:\n" + "\n".join(lines)


_CITATIONS = re.compile(r"\[\d+(?:\s*[,;–-]\s*\d+)*\]")
_NOT_WORDS = re.compile(r"[\W_]+")


def same_words(answer: str, short: str) -> bool:
    """True when ``answer`` says no more than ``short``: the same words once citations, punctuation, emphasis and
    case are set aside (a one-sentence answer whose short answer repeats it)."""
    def words(text: str) -> str:
        return _NOT_WORDS.sub(" ", _CITATIONS.sub(" ", text)).casefold().strip()
    return bool(words(short)) and words(answer) == words(short)


def report_notes(report: Report) -> list[str]:
    """The notes under a report's answer, as Markdown, in order: how it was checked (DeepResearch), its questions,
    its web searches, links it may not keep, the run's date copied, cited sentences their sources do not hold."""
    notes = (research_note(report), questions_note(report), web_note(report), links_note(report),
             dates_note(report), support_note(report))
    return [note for note in notes if note]


def report_markdown(report: Report, *, title: bool = False, links: LinkRule = "cited") -> str:
    """The whole report as Markdown: the short answer (bold label ``Answer:``, in the report's language), the answer,
    how it was checked (DeepResearch), then a Sources section listing each cited file or URL once with the citation
    numbers (and pages) that point into it.

    Args:
        report: the report.
        title: start with the title (a long report's) or the question as a level-1 heading (``query --output``
            files, the web page's download and the API's ``markdown`` field do; the terminal does not repeat it).
        links: which links of the model-written answer stay links (``query.report_links``; ``safe_report_answer``).
    """
    parts = [f"# {md_inline(report.title or report.question)}"] if title else []
    lang = report.language or "en"  # the labels and headings follow the report language (agents.scaffold)
    label = f"**{word(lang, 'answer')}:**"
    body = safe_report_answer(report, links).strip()
    first, _, rest = body.partition("\n\n")
    plain = not re.match(r"\s*(?:#|\||[-*+]\s|\d+[.)]\s|>|```|~~~)", first)
    if report.short_answer and plain and same_words(first, report.short_answer):
        # the answer (or its first paragraph, e.g. above a supporting quote) is its short answer: said once, with
        # its citations
        parts.append(f"{label} {first}")
        if rest.strip():
            parts.append(rest.strip())
    else:
        if report.short_answer:
            parts.append(f"{label} {escape_markdown(report.short_answer)}")
        parts.append(body)
    parts.extend(report_notes(report))
    if report.sources:
        heading = f"## {word(lang, 'sources' if cites_any(report.answer) else 'sources_consulted')}"
        parts.append(heading + "\n\n" + "\n".join(f"- {g.line()}" for g in group_sources(report.sources)))
    else:
        parts.append(f"## {word(lang, 'sources')}\n\n{word(lang, 'no_sources')}")
    return "\n\n".join(parts) + "\n"
