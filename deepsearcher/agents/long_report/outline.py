"""A long report's table of contents: planned by the model (3-8 sections, each a title and one research question) or
read from a Markdown file the user wrote or edited (``--outline FILE``).

File format (what ``outline_markdown`` writes)::

    # Report title

    ## Section title
    The research question of this section.

    ## Next section
    Its question.

Lines before the first section other than the title, blank lines and ``<!-- comments -->`` are ignored; a question
may span several lines and may start with ``Question:``.

**Synthesis sections** (``Section.synthesis``) sum up the others: an executive summary, an introduction, an
overview, a conclusion. They are not researched (no search runs for them) but written from the other sections' text
once those are written (``agent.write_synthesis``). In a planned outline a section is one when the model marks it
``"synthesis": true`` or its title is such a word in one of the report languages ``agents.scaffold`` knows
(``is_synthesis_title``: the whole title, numbering and punctuation aside, so "Introduction to Milvus" is
researched). In a file, a section is one when its text starts with ``Synthesis:`` (what it should sum up), or when
it has such a title and no text at all; a synthesis title followed by a research question is researched, as its
author asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import ask
from deepsearcher.errors import ConfigError

MIN_SECTIONS = 3
MAX_SECTIONS = 8


@dataclass(frozen=True)
class Section:
    """One section: its heading and the question its research answers; a ``synthesis`` section is written from the
    other sections instead (module docstring), ``question`` then says what it sums up."""

    title: str
    question: str
    synthesis: bool = False


#: whole titles of sections that sum up the others, in the languages of ``agents.scaffold`` (case-folded)
SYNTHESIS_TITLES = frozenset("""
summary|executive summary|management summary|overview|introduction|conclusion|conclusions|abstract|tl;dr|tldr|
key findings|summary and conclusion|summary and conclusions|conclusion and outlook|final thoughts|closing remarks|
zusammenfassung|einleitung|einführung|fazit|überblick|schluss|schlussfolgerung|schlussfolgerungen|kurzfassung|
management-zusammenfassung|fazit und ausblick|
résumé|resume|introduction générale|conclusion générale|synthèse|aperçu|vue d'ensemble|
resumen|resumen ejecutivo|introducción|conclusión|conclusiones|panorama general|visión general|
resumo|resumo executivo|introdução|conclusão|conclusões|visão geral|
sommario|riepilogo|sintesi|introduzione|conclusione|conclusioni|panoramica|
резюме|введение|заключение|выводы|обзор|краткое содержание|
摘要|概述|概要|总结|總結|结论|結論|引言|简介|前言|小结|
はじめに|序論|まとめ|結び|おわりに|
요약|개요|서론|결론|맺음말|
ملخص|الملخص|مقدمة|المقدمة|خاتمة|الخاتمة|الخلاصة|نظرة عامة
""".replace("\n", "").split("|"))


def is_synthesis_title(title: str) -> bool:
    """Whether ``title`` as a whole names a section that sums up the others ("Executive summary", "2. Fazit",
    "结论"), numbering, punctuation and Markdown emphasis aside."""
    text = re.sub(r"^[\s#*_]*(?:\d+(?:\.\d+)*[.)]?|[ivxlc]+[.)]|[a-z][.)])?\s+", " ", " " + title.casefold())
    text = " ".join(re.sub(r"[*_:：.。!?]+", " ", text).split())
    return text in SYNTHESIS_TITLES


@dataclass(frozen=True)
class Outline:
    """A report title and its sections in reading order."""

    title: str
    sections: tuple[Section, ...]


class _SectionReply(BaseModel):
    title: str = Field(..., min_length=1, description="Short section title.")
    question: str = Field(..., min_length=3, description="The one research question the section answers.")
    synthesis: bool = Field(False, description="The section only sums up the others (not researched).")

    @field_validator("title", "question")
    @classmethod
    def _real(cls, value: str) -> str:
        if prompts.is_placeholder(value):
            raise ValueError("the reply repeats the example placeholder")
        return " ".join(value.split())


class OutlineReply(BaseModel):
    """``{"title": str, "sections": [{"title": str, "question": str}]}`` with 3 to 8 sections."""

    title: str = Field("", description="The report's title.")
    sections: list[_SectionReply] = Field(..., min_length=MIN_SECTIONS, description=(
        f"{MIN_SECTIONS} to {MAX_SECTIONS} sections in reading order."))


def fallback_outline(question: str) -> Outline:
    """The outline used when the model's reply stays unusable: background, the question itself, open issues."""
    q = " ".join(question.split())
    return Outline(q, (Section("Background", f"What background is needed to understand this question: {q}"),
                       Section("Findings", q),
                       Section("Limitations and open issues",
                               f"What limitations, disagreements or open issues are known about: {q}")))


def plan_outline(ctx: QueryContext) -> tuple[Outline, bool]:
    """Ask the model for the table of contents (cut to ``MAX_SECTIONS``).

    Returns:
        ``(outline, fell_back)``: ``fallback_outline`` when the reply stayed unusable after a retry.
    """
    where = "; ".join(f"{c.name} ({c.description or 'no description'})" for c in ctx.collections) or "(none)"
    prompt = rprompts.outline_prompt(ctx.question, where, MIN_SECTIONS, MAX_SECTIONS)
    fallback = fallback_outline(ctx.question)
    reply = ask(ctx, "outline", prompt, OutlineReply,
                OutlineReply.model_construct(title="", sections=[]), "using a background / findings / open issues "
                                                                     "outline")
    if reply.fell_back or not reply.value.sections:
        return fallback, True
    value = reply.value
    return Outline(value.title.strip() or fallback.title,
                   tuple(Section(s.title, s.question, s.synthesis or is_synthesis_title(s.title))
                         for s in value.sections[:MAX_SECTIONS])), False


def outline_markdown(outline: Outline) -> str:
    """The outline in the file format of ``--outline FILE`` (see the module docstring)."""
    parts = [f"# {outline.title}", ""]
    for section in outline.sections:
        parts += [f"## {section.title}", f"Synthesis: {section.question}" if section.synthesis else section.question,
                  ""]
    return "\n".join(parts)


def parse_outline(text: str, where: str = "the outline") -> Outline:
    """Read the file format (see the module docstring).

    Raises:
        ConfigError: no section, more than ``MAX_SECTIONS``, a section without a question (names the line), or only
            synthesis sections.
    """
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    title = ""
    sections: list[tuple[str, list[str], int]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("## "):
            sections.append((line[3:].strip(), [], number))
        elif line.startswith("# ") and not sections and not title:
            title = line[2:].strip()
        elif line and sections:
            sections[-1][1].append(re.sub(r"^question\s*:\s*", "", line, flags=re.IGNORECASE))
    if not sections:
        raise ConfigError(f"{where} has no sections", hint="write one '## Section title' line per section, each "
                                                           "followed by its research question")
    if len(sections) > MAX_SECTIONS:
        raise ConfigError(f"{where} has {len(sections)} sections; a long report takes at most {MAX_SECTIONS}",
                          hint="merge or drop sections")
    out = []
    for heading, lines, number in sections:
        question = " ".join(" ".join(lines).split())
        marked = re.match(r"synthesis\s*:\s*", question, flags=re.IGNORECASE)
        synthesis = bool(marked) or (not question and is_synthesis_title(heading))
        question = question[marked.end():] if marked else question
        if synthesis and heading:
            out.append(Section(heading, question or f"Sum up the other sections: {heading}", True))
            continue
        if not heading or not question:
            raise ConfigError(f"{where}, line {number}: the section {heading or '(untitled)'!r} has "
                              f"{'no title' if not heading else 'no research question'}",
                              hint="follow each '## Section title' line with the question the section answers")
        out.append(Section(heading, question))
    if all(section.synthesis for section in out):
        raise ConfigError(f"{where} has only synthesis sections ({', '.join(s.title for s in out)}): nothing to "
                          "research and sum up", hint="add a '## Section title' line followed by the research "
                                                      "question of a section to research")
    return Outline(title, tuple(out))


def read_outline(path: str | Path) -> Outline:
    """``parse_outline`` of a file.

    Raises:
        ConfigError: the file is missing, unreadable, or not a valid outline.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the outline file {p}: {exc}",
                          hint="give a UTF-8 Markdown file, or --outline-only to have one planned") from None
    return parse_outline(text, str(p))
