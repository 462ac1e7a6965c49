"""The prompts of DeepResearch and of long reports: named templates, and ONE function per prompt that renders it from
the run's state and the knowledge items shown, cut at an excerpt length (what ``Window.fit`` shortens and leaves out
to fit a model's window).

Shared pieces (the system prompt, ``messages``, placeholders) are in ``deepsearcher.agents.prompts``. Replies are JSON
validated by each step's schema, except the forced final answer, the sections and the coherence pass (Markdown).
"""

from __future__ import annotations

from datetime import date
from typing import Mapping, Sequence

from deepsearcher.agents.prompts import REPORT_FORMAT, bullet_list
from deepsearcher.agents.deep_research.knowledge import KnowledgeItem
from deepsearcher.agents.deep_research.state import Action, ResearchState

NO_KNOWLEDGE = "(nothing yet)"

STEP = """You are researching a question step by step. Choose the single best next action.

Original question: {question}
Current question: {current}

Knowledge gathered so far (cite an item as [n]):
{knowledge}

What you did so far:
{diary}
{failed}
Search looks in: {where}

Actions you may take now:
{actions}

Reply with JSON only: {{"action": "<{names}>", "think": "<one short sentence: why this action>", then the one \
field of that action as shown above}}"""

ACTION_TEXT: dict[Action, str] = {
    "search": """- "search": find new information. Give up to 3 short search expressions (keywords, in the language \
of the documents), each different from the queries already run ({queries}). Field: "queries": ["<search expression>"]""",
    "read": """- "read": open up to 3 items in full: a chunk with the passages around it in its document, or the page \
of a web result. Items not opened yet: {unread}. Field: "items": [<item number>]""",
    "reflect": """- "reflect": name what is still missing. Give up to 3 new questions whose answers are needed to \
answer the current question, different from those already asked ({asked}). Field: "questions": ["<question>"]""",
    "answer": """- "answer": answer the current question from the knowledge above only, citing the items each \
statement rests on as [n]. Write in {language}. Field: "answer": "<answer with [n] citations>\"""",
}

CHECKS = """Decide which checks an answer to the question below must pass.

- definitive: the answer must answer directly and confidently, without "I don't know" or evasions.
- freshness: the question asks about something recent or current, so the answer must rest on up-to-date facts.
- plurality: the question asks for several items (a list, examples, N things), so the answer must give that many.
- completeness: the question names several aspects or entities, so the answer must cover every one of them.
- attribution: every statement of the answer must be supported by the knowledge items it cites.

Question: {question}

Reply with JSON only, in this form: {{"definitive": true, "freshness": false, "plurality": false, \
"completeness": false, "attribution": true}}"""

CHECK_RULES = {
    "definitive": "it answers the question directly and confidently (no \"I don't know\", no evasion)",
    "freshness": "its facts are current as of today ({today}); outdated information fails",
    "plurality": "it gives as many items as the question asks for",
    "completeness": "it covers every aspect and entity the question names",
    "attribution": "every statement is supported by the cited knowledge items shown below",
}

EVALUATE = """You are a strict reviewer. Judge the answer below on each check listed; a check passes only if the \
answer clearly meets it.

Question: {question}

Answer:
{answer}

Knowledge items the answer cites:
{cited}

Checks:
{checks}

Reply with JSON only, in this form: {{{fields}, "critique": "<what is wrong; empty if every check passes>", \
"plan": "<how to fix it; empty if every check passes>"}}"""

#: the forced final answer, in the report prompt's order (``prompts.SYNTHESISE``): the knowledge, the question again,
#: the rules last with its "Answer:" line. With the rules first and the knowledge last, Qwen2.5-Coder-0.5B answered
#: 10 HotpotQA questions with 'The final answer to the question "…" is [1][2].' or with the knowledge list copied
#: ("[1] Chuck Rowland\n[2] 1986 North Carolina …") — the report prompt's measured failure (docs/benchmarks.md)
FINAL = """Research time is over. Answer the question below now, using only the numbered knowledge that follows it. \
A partial answer that says clearly what is missing is better than none.
{lessons}
Question: {question}

Knowledge:
{knowledge}

Question: {question}

Write in {language}. """ + REPORT_FORMAT + """ Cite only the numbers listed above."""

OUTLINE = """Plan the table of contents of a long report that answers the question below: from {min_sections} to \
{max_sections} sections, in reading order. Give each section a short title and one research question that the \
section will answer. Do not plan an introduction or a conclusion: they are written at the end. A section that only \
sums up the others (an executive summary, an overview) gets "synthesis": true: it is written from the other sections, \
not researched.

The documents searched: {where}

Question: {question}

Reply with JSON only, in this form: {{"title": "<report title>", "sections": [{{"title": "<section title>", \
"question": "<research question>"}}]}}"""

SECTION = """Write the section "{title}" of a longer report on: {report_question}
This section answers: {question}

Rules:
- Use only the numbered sources below; support each statement with its source number in square brackets, like [3] \
or [3][7], right after the statement. Cite only the numbers listed.
- Write 1 to 4 paragraphs of Markdown without a heading (the heading is added for you).
- If the sources do not answer part of the question, say so plainly.
- Write in {language}.

Sources:
{knowledge}"""

SYNTHESIS = """Write the section "{title}" of a longer report on: {report_question}
This section sums up the other sections ({purpose}); it is written from their text below, not from new research.

Rules:
- Use only what the sections below say, and give each statement the citation numbers [n] the sections give it. Cite \
only numbers that appear in the sections.
- Where the sections say nothing, do not fill the gap.
- Write 1 to 3 paragraphs of Markdown without a heading (the heading is added for you).
- Write in {language}.

Sections:
{sections}"""

COHERENCE = """Below is the draft of a report on: {question}
It was written section by section; its citations [n] refer to the numbered sources listed after it. Edit it into one \
coherent report:
- remove repetition between sections, and use the same term for the same thing throughout;
- keep every section heading (the lines starting with "## "), in the same order, and keep the citations with the \
statements they support; never invent citation numbers;
- {frame};
- then add "## {contradictions}": list each point on which sources disagree, citing the sources on each side, then \
the questions the research left open.{gaps} If no sources disagree, write "{no_contradictions}";
- write in {language}. Reply with the report in Markdown only.

Draft:
{draft}

Sources:
{sources}"""


def item_block(item: KnowledgeItem, max_chars: int | None = None) -> str:
    """One knowledge item for a prompt: ``[n] title (where)`` then its text (cut at ``max_chars``)."""
    title = item.chunk.title if item.chunk is not None and item.chunk.title else ""
    head = f"[{item.number}] {title} ({item.where})" if title else f"[{item.number}] ({item.where})"
    text = " ".join(item.text.split())
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars].rstrip() + " …"
    return f"{head}\n{text}"


def knowledge_list(items: Sequence[KnowledgeItem], max_chars: int | None = None) -> str:
    return "\n\n".join(item_block(i, max_chars) for i in items) or NO_KNOWLEDGE


def step_prompt(state: ResearchState, allowed: Sequence[Action], shown: Sequence[KnowledgeItem], *,
                unread: Sequence[KnowledgeItem], queries: Sequence[str], where: str, language: str,
                excerpt_chars: int | None) -> str:
    """The action-choice prompt: the current question, the knowledge shown, the diary, the failed attempts and only
    the allowed actions."""
    fields = {"queries": ", ".join(f'"{q}"' for q in queries[-12:]) or "none yet",
              "unread": ", ".join(f"[{i.number}]" for i in unread[:15]) or "none",
              "asked": "; ".join(state.asked[-8:]), "language": language}
    failed = ""
    if state.failed:
        lines = [f"- {f.question!r} (step {f.step}): rejected because {f.critique or 'it failed a check'}; "
                 f"plan: {f.plan or 'answer differently'}" for f in state.failed[-3:]]
        failed = "\nRejected answers (do not repeat them):\n" + "\n".join(lines) + "\n"
    return STEP.format(question=state.question, current=state.current,
                       knowledge=knowledge_list(shown, excerpt_chars),
                       diary="\n".join(f"- {d}" for d in state.diary[-10:]) or "(nothing yet: this is step 1)",
                       failed=failed, where=where,
                       actions="\n".join(ACTION_TEXT[a].format(**fields) for a in allowed),
                       names="|".join(allowed))


def checks_prompt(question: str) -> str:
    """Which evaluator checks a question needs."""
    return CHECKS.format(question=question)


def evaluate_prompt(question: str, answer: str, checks: Sequence[str], cited: Sequence[KnowledgeItem],
                    excerpt_chars: int | None, *, today: date) -> str:
    """The evaluator's prompt: the answer, the items it cites, and the chosen checks (freshness judged as of
    ``today``, the date of the question)."""
    rules = "\n".join(f"- {c}: {CHECK_RULES[c].format(today=today.isoformat())}" for c in checks)
    fields = ", ".join(f'"{c}": true|false' for c in checks)
    return EVALUATE.format(question=question, answer=answer.strip(), cited=knowledge_list(cited, excerpt_chars),
                           checks=rules, fields=fields)


def final_prompt(question: str, knowledge: Sequence[KnowledgeItem], plans: Sequence[str], *, language: str,
                 excerpt_chars: int | None, unresearched: Sequence[str] = ()) -> str:
    """Beast mode: the one forced final answer from all knowledge, with the reviewer's plans as lessons and the
    questions nobody researched (so the answer does not claim "no information was found" about them)."""
    lessons = ""
    if plans:
        lessons = "- Reviewers rejected earlier answers; follow their advice:\n" + "\n".join(
            f"  - {p}" for p in plans[-3:]) + "\n"
    if unresearched:
        lessons += ("- These questions were never researched (research stopped before any search for them). Do not "
                    "write that no information was found about them; say they were not researched:\n"
                    + "\n".join(f"  - {q}" for q in unresearched) + "\n")
    return FINAL.format(language=language, lessons=lessons, question=question,
                        knowledge=knowledge_list(knowledge, excerpt_chars))


def outline_prompt(question: str, where: str, min_sections: int, max_sections: int) -> str:
    return OUTLINE.format(question=question, where=where, min_sections=min_sections, max_sections=max_sections)


def section_prompt(report_question: str, title: str, question: str, knowledge: Sequence[KnowledgeItem], *,
                   language: str, excerpt_chars: int | None = None) -> str:
    return SECTION.format(report_question=report_question, title=title, question=question, language=language,
                          knowledge=knowledge_list(knowledge, excerpt_chars))


def synthesis_prompt(report_question: str, title: str, purpose: str, sections: str, *, language: str) -> str:
    """A synthesis section (an executive summary, a conclusion…) written from the other sections' text."""
    return SYNTHESIS.format(report_question=report_question, title=title, purpose=purpose, sections=sections,
                            language=language)


def coherence_prompt(question: str, draft: str, sources: Mapping[int, str], gaps: Sequence[str], *,
                     language: str, headings: Mapping[str, str] | None = None,
                     framed_by: Sequence[str] = ()) -> str:
    """The editing pass; ``headings`` are the report language's words for the headings and the no-contradictions
    line (``agents.scaffold``; English when None); ``framed_by``: the outline's synthesis sections, which take the
    place of the introduction and conclusion the pass otherwise writes."""
    listed = "\n".join(f"[{n}] {line}" for n, line in sources.items()) or "(none)"
    open_gaps = f" Questions left open by the research:\n{bullet_list(gaps)}\n" if gaps else ""
    words = {"introduction": "Introduction", "conclusion": "Conclusion",
             "contradictions": "Contradictions and open questions",
             "no_contradictions": "No contradictions between the sources were found.", **(headings or {})}
    frame = (f'start with a "## {words["introduction"]}" section and end the sections with "## {words["conclusion"]}"'
             if not framed_by else "add no introduction or conclusion: the sections "
             + ", ".join(f'"{t}"' for t in framed_by) + " already sum up the report")
    return COHERENCE.format(question=question, draft=draft, sources=listed, gaps=open_gaps, language=language,
                            frame=frame, **words)
