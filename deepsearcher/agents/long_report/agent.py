"""Long reports: outline → research per section over one shared knowledge store → sections with global citation
numbers → one coherence pass → one Markdown report with a table of contents (DESIGN.md "DeepResearch loop").

1. **Outline**: 3-8 sections, each a title and one research question (``long_report.outline``), or the user's file.
2. **Research** each section's question with the section agent (``section_agent``: one that declares
   ``AgentCapabilities(sections=True)``; ``sections.research_section``): ``deep_research`` (the loop, its knowledge
   kept in the shared store), ``deep_search`` (its accepted chunks added to the store, then one section-writing
   call), or a plugin agent (its report's sources added to the store). The store is shared: a chunk or page found
   for one section keeps its item and number, searches are cached for the whole report and DeepResearch does not run
   a query again.
   A **synthesis section** (an executive summary, an introduction, a conclusion, an overview: ``outline``'s rule,
   or ``Section(synthesis=True)`` in an outline built in code) is not researched: no search runs for it. Once the
   other sections are written it is written from their text (``write_synthesis``), and may cite only numbers those
   sections cite (any other is removed and counted).
3. **Sections** cite store items ``[n]``; the draft is renumbered once over the whole report in order of first
   appearance, so a source has one number everywhere. A section whose research cited nothing says so instead of
   holding uncited claims: "The sources hold nothing on …" (or that it was not researched, the budget spent), in the
   report's language (``agents.scaffold``), and its question is listed as open (``Report.questions``, the open
   questions section). In the other researched sections each sentence without a citation is marked "(uncited)"
   after the editing pass (``mark_uncited``).
4. **Coherence pass** (one call): removes repetition, aligns terms, writes the introduction and the conclusion
   (unless the outline has synthesis sections, which take their place), and adds "Contradictions and open questions"
   (sources that disagree, with their citations; the gaps left open). Its citations are verified again. It is not
   asked for when the draft does not fit the window or is longer than the reply the model can give
   (``llm.max_tokens``, the window, the budget); when it cannot be made or its reply is unusable (cut off, or
   sections missing) the draft is kept and the section lists the open gaps. A sentence of the edited report citing
   what its draft sentence did not (two numbers exchanged, a sentence moved under another citation) is put back as
   drafted, or left out, with a note (``agents.rewrites``).

Every prompt (outline, section, editing pass, and DeepResearch's) is fitted to the model's window and every call is
checked against the token budget by the machinery all agents share (``steps``, ``report.write_fitted``, ``budget``):
a DeepResearch section runs on its own budget (``agents.deep_research.token_budget``), a DeepSearch section on a
share of ``query.token_budget``; the editing pass may use what is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Sequence

from deepsearcher.agents.base import (
    AUTO, Agent, OptionsFn, agents_with, build_agent, check_agent_name, default_options, registry_of,
)
from deepsearcher.agents.budget import BudgetExhausted
from deepsearcher.agents.citations import Marker, cited_numbers, location, replace_citations, verify_citations
from deepsearcher.agents.deep_research import prompts as rprompts
from deepsearcher.agents.deep_research.knowledge import KnowledgeStore
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.agents.long_report.outline import Outline, Section, plan_outline
from deepsearcher.agents.long_report.sections import research_section
from deepsearcher.agents.report import write_fitted
from deepsearcher.agents.rewrites import check_rewrite, moved_note, sentences, words
from deepsearcher.agents.scaffold import language_code, word
from deepsearcher.agents.support import cite_copies
from deepsearcher.agents.state import QueryContext
from deepsearcher.errors import ConfigError, ContextWindowError
from deepsearcher.events import QueryFallback, QueryOutline, QuerySection
from deepsearcher.registry import Registry
from deepsearcher.registry import registry as default_registry
from deepsearcher.types import Evaluation, QuestionStatus, Report, Source, WebSearchOutcome
from deepsearcher.vectordb.fusion import fused_priority

#: the agent that researches the sections when the query's agent is "auto"
DEFAULT_SECTION_AGENT = "deep_research"
REQUEST_BUDGET = "query.long_report_budget_runs"
CONTRADICTIONS = "Contradictions and open questions"
NO_CONTRADICTIONS = "No contradictions between the sources were found."


def section_agent(requested: str, registry: Registry | None = None, options: OptionsFn | None = None) -> str:
    """The agent that researches the sections: the requested one when it declares ``sections``
    (``agents.base.AgentCapabilities``), ``deep_research`` for "auto".

    Args:
        requested: "auto" or a registered agent name.
        registry: where agents are looked up (default: the process-wide registry).
        options: the agents' options (default: each agent's defaults).

    Raises:
        ConfigError: an unknown agent, or one that does not declare ``sections`` (the message names those that do).
    """
    registry = registry or default_registry
    options = options or default_options(registry)
    if requested == AUTO:
        return DEFAULT_SECTION_AGENT
    check_agent_name(registry, requested)
    capable = section_agents(registry, options)
    if requested not in capable:
        raise ConfigError(f"a long report researches its sections with {either(capable)}, not {requested!r}",
                          hint=f"add --agent {capable[0]}{also(capable)}, or leave out --report long")
    return requested


def section_agents(registry: Registry, options: OptionsFn) -> list[str]:
    """The agents that declare ``sections``, the default one first."""
    capable = agents_with(registry, options, sections=True)
    return sorted(capable, key=lambda name: name != DEFAULT_SECTION_AGENT)


def either(names: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c`` (for messages)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def also(names: list[str]) -> str:
    """`` (or b, c)`` after the first of ``names`` (for hints); "" for one name."""
    return f" (or {', '.join(names[1:])})" if len(names) > 1 else ""


def request_budget(ctx: QueryContext) -> int:
    """The tokens one long-report request may spend: ``query.long_report_budget_runs`` times the DeepResearch
    per-run budget (each section has that budget of its own, so without this cap the request's cost grows with the
    number of sections a caller or the model asks for)."""
    options = ctx.agent_options("deep_research")
    per_run = (options if isinstance(options, DeepResearchOptions) else DeepResearchOptions()).token_budget
    return int(per_run * ctx.settings.long_report_budget_runs)


def write_long_report(ctx: QueryContext, agent: str, outline: Outline | None = None) -> Report:
    """Research and write a long report on ``ctx.question`` (see the module docstring).

    Args:
        ctx: the query context (its ``research`` tools are used by deep_research sections).
        agent: the agent that researches the sections (``section_agent``).
        outline: the table of contents to follow; None = planned by the model.
    """
    ctx = replace(ctx, budget=ctx.budget.share(request_budget(ctx), REQUEST_BUDGET))
    source = "file"
    if outline is None:
        outline, fell_back = plan_outline(ctx)
        source = "fallback" if fell_back else "llm"
    outline = researchable(outline)
    sections = [{"title": s.title, "question": s.question, **({"synthesis": "true"} if s.synthesis else {})}
                for s in outline.sections]
    ctx.emit(QueryOutline(title=outline.title, sections=sections, source=source))  # type: ignore[arg-type]
    store = KnowledgeStore()
    language = language_code(ctx.question, ctx.settings.language)
    run = research_sections(ctx, build_agent(registry_of(ctx), agent, ctx.agent_options), outline, store, language)
    texts, statuses, gaps = run.texts, run.statuses, run.gaps
    removed = write_syntheses(ctx, outline, store, texts, language)
    written = [(section, texts[i]) for i, section in enumerate(outline.sections, start=1)]
    # an item's text told again uncited gets its number, as in every report (support.cite_copies)
    draft = verify_citations(cite_copies(assemble(written), [item.chunk for item in store])[0], len(store))
    draft_sources = store.sources(draft.cited)
    body = coherence(ctx, outline, draft.text, draft_sources, gaps)
    final = verify_citations(body, len(draft_sources))
    answered = {s.question for s in statuses if s.status == "answered"}
    text = mark_uncited(final.text, {s.title for s in outline.sections if not s.synthesis and s.question in answered},
                        language)
    sources = [Source(i, draft_sources[n - 1].chunk, draft_sources[n - 1].collection)
               for i, n in enumerate(final.cited, start=1)]
    return Report(question=ctx.question, answer=f"{table_of_contents(text, language)}\n\n{text}",
                  sources=sources, language=language,
                  sub_queries=run.queries, iterations=run.steps, usage=ctx.llm.usage(), agent=agent,
                  removed_citations=removed + draft.removed + final.removed, gaps=gaps, title=outline.title,
                  sections=[s.title for s in outline.sections], questions=statuses, evaluations=run.evaluations,
                  web_searches=run.web)


@dataclass
class Researched:
    """What researching the outline's sections gave (``research_sections``): each researched section's text by its
    1-based index, what became of its question, and what the runs report."""

    texts: dict[int, str] = field(default_factory=dict)
    statuses: list[QuestionStatus] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    web: list[WebSearchOutcome] = field(default_factory=list)
    steps: int = 0


def research_sections(ctx: QueryContext, researcher: Agent, outline: Outline, store: KnowledgeStore,
                      language: str) -> Researched:
    """Research every section that is not a synthesis, into ``store`` (searches cached across sections); a section
    whose research cited nothing gets ``nothing_note`` as its text and its question joins the gaps."""
    shared = replace(ctx, search=lru_cache(maxsize=1024)(ctx.search))  # a search run for one section is reused
    out = Researched()
    total = len(outline.sections)
    for index, section in enumerate(outline.sections, start=1):
        if section.synthesis:
            continue
        ctx.emit(QuerySection(index=index, total=total, title=section.title, question=section.question,
                              status="research", sources=0))
        found = research_section(researcher, replace(shared, question=section.question), outline, section, store)
        text = store.expand_answers(found.text)
        status = section_status(section, store, text, bool(found.queries or found.steps))
        if status.status != "answered":  # no evidence: say so, never uncited claims; its question stays open
            text = nothing_note(section, status, language)
            found.gaps.append(section.question)
        out.texts[index] = text
        out.statuses.append(status)
        out.gaps += [g for g in found.gaps if g not in out.gaps]
        out.evaluations += found.evaluations
        out.web += found.web_searches
        out.queries += found.queries
        out.steps += found.steps
        ctx.emit(QuerySection(index=index, total=total, title=section.title, question=section.question,
                              status="written", sources=len(store.cited(text))))
    return out


def researchable(outline: Outline) -> Outline:
    """``outline`` as it is when it has a section to research; else (every section a synthesis: nothing to sum up)
    every section researched."""
    if any(not s.synthesis for s in outline.sections):
        return outline
    return Outline(outline.title, tuple(replace(s, synthesis=False) for s in outline.sections))


def write_syntheses(ctx: QueryContext, outline: Outline, store: KnowledgeStore, texts: dict[int, str],
                    language: str) -> int:
    """Write every synthesis section into ``texts`` (by 1-based index) from the researched sections already there
    (``write_synthesis``); returns the citation numbers removed from them."""
    researched = [(outline.sections[i - 1], text) for i, text in sorted(texts.items())]
    removed = 0
    total = len(outline.sections)
    for index, section in enumerate(outline.sections, start=1):
        if not section.synthesis:
            continue
        ctx.emit(QuerySection(index=index, total=total, title=section.title, question=section.question,
                              status="synthesis", sources=0))
        texts[index], dropped = write_synthesis(ctx, outline, section, researched, language)
        removed += dropped
        ctx.emit(QuerySection(index=index, total=total, title=section.title, question=section.question,
                              status="written", sources=len(store.cited(texts[index]))))
    return removed


def nothing_note(section: Section, status: QuestionStatus, language: str) -> str:
    """What a section whose research cited nothing says, in the report's language: the sources hold nothing on its
    question, or it was not researched."""
    key = "nothing_on" if status.status == "nothing_found" else "not_researched_on"
    return word(language, key).format(question=" ".join(section.question.split()))


def write_synthesis(ctx: QueryContext, outline: Outline, section: Section,
                    researched: Sequence[tuple[Section, str]], language: str) -> tuple[str, int]:
    """A synthesis section written from the researched sections' text (one call; no search): citations limited to
    the numbers those sections cite (others removed).

    Returns:
        ``(text, removed)``: the section text, citing store numbers, and how many citation numbers were removed.
    """
    allowed = {n for _, text in researched for n in cited_numbers(text)}
    if not allowed:  # nothing cited anywhere: nothing a summary could rest on
        return word(language, "synthesis_empty"), 0
    shown = "\n\n".join(f"## {s.title}\n\n{text.strip()}" for s, text in researched)
    prompt = rprompts.synthesis_prompt(outline.title or ctx.question, section.title, section.question, shown,
                                       language=ctx.language)
    try:
        reply, _ = write_fitted(ctx, "synthesis", lambda items, cap: prompt, [], None)
    except (BudgetExhausted, ContextWindowError) as exc:
        problem = "the token budget is spent" if isinstance(exc, BudgetExhausted) else "the sections exceed the window"
        ctx.emit(QueryFallback(step="synthesis", error=f"{section.title}: {problem}",
                               fallback="the section says it was not written"))
        return word(language, "synthesis_empty"), 0
    removed = 0

    def keep(marker: Marker) -> str:
        nonlocal removed
        kept = [n for n in marker.numbers if n in allowed]
        removed += len(marker.numbers) - len(kept)
        return "".join(f"[{n}]" for n in kept)

    text = replace_citations(reply.text.strip(), keep)
    if removed:  # no space left before the punctuation that followed a removed number
        text = re.sub(r"[ \t]+([.,;:!?。，])", r"\1", text)
    return text or word(language, "synthesis_empty"), removed


def mark_uncited(body: str, titles: set[str], language: str) -> str:
    """``body`` with every sentence of the sections titled ``titles`` that cites nothing marked "(uncited)" in the
    report's language (a sentence of three words or more; headings, tables and code are left alone)."""
    mark = f"*{word(language, 'uncited')}*"
    out: list[str] = []
    current, fence = "", False
    for line in body.split("\n"):
        heading = re.match(r"^##\s+(.+?)\s*#*\s*$", line)
        if heading:
            current = heading.group(1).strip()
        elif re.match(r"^ {0,3}(```|~~~)", line):
            fence = not fence
        elif current in titles and not fence and not re.match(r"^\s*(\||#|>?\s*$|-{3,}\s*$)", line):
            for sentence in sentences(line):
                if not cited_numbers(sentence) and len(words(sentence)) >= 3 and mark not in sentence:
                    line = line.replace(sentence.rstrip(), f"{sentence.rstrip()} {mark}", 1)
        out.append(line)
    return "\n".join(out)


def section_status(section: Section, store: KnowledgeStore, text: str, researched: bool) -> QuestionStatus:
    """What became of a section's question: "answered" when its text cites a source, "not_researched" when no
    search or step ran for it (the budget was spent), else "nothing_found"."""
    detail = f"section {section.title!r}"
    if store.cited(text):
        return QuestionStatus(section.question, "answered", detail)
    if not researched:
        return QuestionStatus(section.question, "not_researched", f"{detail}: research stopped first")
    return QuestionStatus(section.question, "nothing_found", f"{detail}: no source was cited")


def assemble(written: Sequence[tuple[Section, str]]) -> str:
    """The draft: one ``## title`` heading and its text per section."""
    return "\n\n".join(f"## {section.title}\n\n{text.strip()}" for section, text in written)


def coherence(ctx: QueryContext, outline: Outline, draft: str, sources: Sequence[Source], gaps: Sequence[str]) -> str:
    """The one editing pass over the whole draft (see the module docstring); the draft plus a gaps section when the
    pass cannot be made (the draft does not fit the window, or is longer than the reply the model can give, or the
    budget is spent) or its reply is unusable (cut off, or sections missing)."""
    listed = {s.number: f"{s.chunk.title + ' — ' if s.chunk.title else ''}{location(s.chunk)}" for s in sources}
    ctx.emit(QuerySection(index=0, total=len(outline.sections), title=outline.title or ctx.question,
                          question=ctx.question, status="editing", sources=len(sources)))
    code = language_code(ctx.question, ctx.settings.language)
    headings = {k: word(code, k) for k in ("introduction", "conclusion", "contradictions", "no_contradictions")}
    prompt = rprompts.coherence_prompt(ctx.question, draft, listed, gaps, language=ctx.language, headings=headings,
                                       framed_by=[s.title for s in outline.sections if s.synthesis])
    problem = editing_room_problem(ctx, prompt, draft)
    text = ""
    if not problem:
        try:
            reply, _ = write_fitted(ctx, "coherence", lambda items, cap: prompt, [], None)
            text = reply.text.strip()
            missing = [s.title for s in outline.sections
                       if not re.search(rf"^##\s+{re.escape(s.title)}\s*$", text, re.MULTILINE)]
            if reply.cut_off:
                problem = "the edited report was cut off at its token limit"
            elif missing:
                problem = f"the edited report lost section(s): {', '.join(missing)}"
        except ContextWindowError:
            problem = "the draft exceeds the model's context window"
        except BudgetExhausted:
            problem = "the token budget left cannot pay for the editing pass"
    if problem:
        ctx.emit(QueryFallback(step="coherence", error=problem, fallback="keeping the sections as written"))
        return f"{draft}\n\n## {word(code, 'contradictions')}\n\n{_open_questions(gaps, code, checked=False)}"
    checked = check_rewrite(draft, text)  # a citation stays only on a claim that carried it (agents.rewrites)
    text = checked.text
    titles = "|".join(re.escape(t) for t in {CONTRADICTIONS, word(code, "contradictions")})
    if not re.search(rf"^##\s+(?:{titles})", text, re.MULTILINE | re.IGNORECASE):
        text += f"\n\n## {word(code, 'contradictions')}\n\n{_open_questions(gaps, code, checked=True)}"
    if checked.moved:
        ctx.emit(QueryFallback(step="coherence", error=f"the editing pass moved citations in {len(checked.moved)} "
                               "sentence(s)", fallback="keeping those sentences as drafted (or leaving them out)"))
        text += "\n\n" + moved_note(checked.moved, "the editing pass")
    return text


def editing_room_problem(ctx: QueryContext, prompt: str, draft: str) -> str:
    """Why the editing pass cannot be asked for ("" when it can): the edited report is about as long as the draft,
    so a reply limit (``llm.max_tokens``, the room the window leaves after the prompt, the token budget) shorter
    than the draft would only cut it off."""
    messages = ctx.messages(prompt)
    room = min(ctx.window.reply_tokens, ctx.model("coherence", final=True).reply_room(messages))
    need = ctx.window.count(draft)
    if need > room:
        return (f"the draft ({need:,} tokens) is longer than the reply the model can give ({max(room, 0):,} tokens: "
                "llm.max_tokens, the context window and the token budget limit it)")
    return ""


def _open_questions(gaps: Sequence[str], language: str, *, checked: bool) -> str:
    head = word(language, "no_contradictions" if checked else "not_compared")
    if not gaps:
        return head
    return head + f"\n\n{word(language, 'left_open')}\n" + "\n".join(f"- {g}" for g in gaps)


def slug(heading: str) -> str:
    """The anchor GitHub-style Markdown gives a heading (lower case, punctuation dropped, spaces as hyphens)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().casefold())
    return text.replace(" ", "-")


def table_of_contents(body: str, language: str = "en") -> str:
    """``## Contents`` (in the report's language) with a link to every ``## `` heading of ``body``; a repeated
    title gets the anchor GitHub gives it (``-1``, ``-2``… after the first; ``anchors``)."""
    headings = [m.group(1).strip() for m in re.finditer(r"^##\s+(.+?)\s*#*\s*$", body, re.MULTILINE)]
    links = anchors([word(language, "contents"), *headings])[1:]  # the Contents heading itself takes its slug first
    return f"## {word(language, 'contents')}\n\n" + "\n".join(
        f"{i}. [{h}](#{a})" for i, (h, a) in enumerate(zip(headings, links), start=1))


def anchors(headings: Sequence[str]) -> list[str]:
    """The anchor of each heading, in document order, made unique as GitHub does: the first ``slug``, then
    ``slug-1``, ``slug-2``…"""
    counts: dict[str, int] = {}
    out: list[str] = []
    for heading in headings:
        base = slug(heading)
        counts[base] = counts.get(base, -1) + 1
        out.append(f"{base}-{counts[base]}" if counts[base] else base)
    return out
