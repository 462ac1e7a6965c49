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
    """One section: its heading and the question its research answers."""

    title: str
    question: str


@dataclass(frozen=True)
class Outline:
    """A report title and its sections in reading order."""

    title: str
    sections: tuple[Section, ...]


class _SectionReply(BaseModel):
    title: str = Field(..., min_length=1, description="Short section title.")
    question: str = Field(..., min_length=3, description="The one research question the section answers.")

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
                   tuple(Section(s.title, s.question) for s in value.sections[:MAX_SECTIONS])), False


def outline_markdown(outline: Outline) -> str:
    """The outline in the file format of ``--outline FILE`` (see the module docstring)."""
    parts = [f"# {outline.title}", ""]
    for section in outline.sections:
        parts += [f"## {section.title}", section.question, ""]
    return "\n".join(parts)


def parse_outline(text: str, where: str = "the outline") -> Outline:
    """Read the file format (see the module docstring).

    Raises:
        ConfigError: no section, more than ``MAX_SECTIONS``, or a section without a question (names the line).
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
        if not heading or not question:
            raise ConfigError(f"{where}, line {number}: the section {heading or '(untitled)'!r} has "
                              f"{'no title' if not heading else 'no research question'}",
                              hint="follow each '## Section title' line with the question the section answers")
        out.append(Section(heading, question))
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
