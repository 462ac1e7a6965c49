"""The run's own date in an answer: a date only the system prompt gave.

Every prompt carries today's date (``prompts.system``) so a model can judge how current a fact is. A small model
sometimes copies it into the answer as a fact: measured with Qwen2.5-Coder-0.5B on 2WikiMultihopQA, "When did the
director of film X die?" got "died on 2026-12-02 (Wednesday)", the day of the run, which no document said. A date in
the answer or the short answer that is a day of the run and that neither the question nor any cited source contains
is such a copy: it is listed in ``Report.unsourced_dates`` and the report says so (``dates_note``); the text stays, so
a reader sees what the model wrote. So is the run's day and month with another year: the same model once wrote
"December 2, 1926" on 2026-12-02 for a date no document gave.

Dates are recognised in the forms a model writes them: ISO (2026-12-02, 2026/12/02), day-month-year and
month-day-year with numbers (02.12.2026, 12/02/2026), and English month names (December 2, 2026; 2 Dec 2026;
2nd of December, 2026).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import Iterable, Iterator

from deepsearcher.types import Report

_MONTHS = {name: i for i, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_PATTERNS = [
    re.compile(r"(?<!\d)(?P<year>\d{4})[-/.](?P<a>\d{1,2})[-/.](?P<b>\d{1,2})(?!\d)"),  # ISO order only
    re.compile(r"(?<!\d)(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.](?P<year>\d{4})(?!\d)"),  # D.M.Y or M/D/Y
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def dates_in(text: str) -> Iterator[tuple[str, date]]:
    """Each date written in ``text``: (the text as written, the day). A numeric date whose order is ambiguous
    (02.12.2026) gives both readings."""
    for i, pattern in enumerate(_PATTERNS):
        for m in pattern.finditer(text):
            year = int(m["year"])
            if i == 0:
                readings = [(year, int(m["a"]), int(m["b"]))]
            elif i == 1:
                readings = [(year, int(m["b"]), int(m["a"])), (year, int(m["a"]), int(m["b"]))]
            else:
                readings = [(year, _MONTHS[m["month"].lower()], int(m["day"]))]
            for y, mo, d in readings:
                day = _day(y, mo, d)
                if day is not None:
                    yield m.group(0), day


def unsourced_dates(texts: Iterable[str], days: set[date], evidence: Iterable[str]) -> list[str]:
    """The dates written in ``texts`` (as written, each once) that fall on one of ``days`` (the run's), or on its
    day and month in a year that no text of ``evidence`` (the question, the cited sources) mentions, and that no text
    of ``evidence`` contains in any form (a numeric date is supported when any of its readings is)."""
    evidence = list(evidence)
    supported = {day for text in evidence for _, day in dates_in(text)}
    years = {int(y) for text in evidence for y in re.findall(r"(?<!\d)\d{4}(?!\d)", text)}
    run = {(d.month, d.day) for d in days}
    found: list[str] = []
    for text in texts:
        readings: dict[str, list[date]] = {}
        for written, day in dates_in(text):
            readings.setdefault(written, []).append(day)
        for written, options in readings.items():
            if any(day in supported for day in options):
                continue
            if any(day in days or ((day.month, day.day) in run and day.year not in years) for day in options):
                found.append(written)
    return list(dict.fromkeys(found))


def with_checked_dates(report: Report, days: set[date]) -> Report:
    """``report`` with ``unsourced_dates`` set: the run's own dates its answer or short answer gives that neither the
    question nor a cited source contains."""
    evidence = [report.question, *(s.chunk.text for s in report.sources)]
    found = unsourced_dates([report.answer, report.short_answer], days, evidence)
    return replace(report, unsourced_dates=list(dict.fromkeys([*report.unsourced_dates, *found])))


def dates_note(report: Report) -> str:
    """The note on the run's own date given as a fact ("" when the answer gives none)."""
    if not report.unsourced_dates:
        return ""
    listed = ", ".join(f"“{d}”" for d in report.unsourced_dates)
    return (f"**Dates.** The answer gives {listed}: the day and month of this run's date, which every prompt "
            "carries, in no cited source and not in the question. The model may have copied it from its instructions; "
            "do not rely on it.")
