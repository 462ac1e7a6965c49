"""Every prompt the agents send, as named templates with named placeholders (``str.format``).

Tests render them and assert on the text the scripted model receives. Replies are JSON (validated by each step's
pydantic schema) except the final report. Templates ask for a JSON *object*, because OpenAI's structured output
needs an object at the top level; the parsers also accept a bare list.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Sequence

from deepsearcher.agents.citations import location
from deepsearcher.llm.base import Message
from deepsearcher.types import Chunk

SYSTEM = ("You are DeepSearcher, a careful research assistant. You work only from the documents you are given and "
          "you follow the requested output format exactly. Today is {date}; the time zone is {zone}. Judge how "
          "current a fact is against today's date.")

DECOMPOSE = """Break the question below into at most {max_sub_queries} short, self-contained search queries that \
together cover everything needed to answer it. Keep the language of the question. A simple question needs only one \
query.

Question: {question}

Reply with JSON only, in this form: {{"sub_queries": ["<query 1>", "<query 2>"]}}"""

ROUTE = """Choose the collections that may contain information for the search query, which is one part of the \
question below. Each collection is listed with a description of its contents.

Collections:
{collections}

Question: {question}
Search query: {query}

Reply with JSON only, in this form: {{"collections": ["<name>"], "query": "<the search query>"}}. Use only the \
names listed above; give an empty list if you cannot tell. In "query", repeat the search query, or rewrite it so \
that it finds the information in the chosen collections (their terms, their language)."""

RELEVANCE = """Question: {question}
Search query: {query}

Below are {count} numbered text chunks found by the search. Decide which chunks contain information that helps to \
answer the question or the search query.

{chunks}

Reply with JSON only, in this form: {{"relevant": [<numbers of the helpful chunks>]}}, or {{"relevant": []}} if \
none helps."""

REFLECT = """Question: {question}

Search queries already run:
{queries}

Queries that found nothing useful (do not repeat them; try other words or another angle):
{failed}

New information found in the last search round:
{new_chunks}

Everything found so far (one line per passage):
{found}

Is information needed to answer the question still missing? If so, propose at most {max_gaps} new search queries \
that would find it; they must differ from the queries already run. If the information is sufficient, propose none.

Reply with JSON only, in this form: {{"gap_queries": ["<new query>"]}} or {{"gap_queries": []}}"""

#: the report prompt's format rules; a reply that repeats them (the 0.5B model's chain_of_rag short answer began "a
#: name, date, number, yes/no, or one short sentence. The first line is …") has them stripped
#: (``echoes.without_prompt_rules``)
REPORT_FORMAT = ('The first line is "Answer: " followed by the short answer in words: a name, date, number, '
                 'yes/no, or one short sentence. Then explain the answer in a few sentences, putting the number of '
                 'each source you use in square brackets after the statement it supports, like [1] or [2][4].')
#: the report prompt's last rule; a reply copying it whole loses it (``echoes.without_prompt_rules``), its words
#: alone are kept: "The sources do not answer the question." is what it asks for
NO_ANSWER_RULE = "If the sources do not answer the question, say so plainly instead of guessing."
#: the report prompt. Rules last, after the sources and the question again: with the rules first ("support each
#: statement with the number of its source …", then the sources), Qwen2.5-Coder-0.5B answered 24 of 50 HotpotQA
#: questions with source numbers only; in this order, none of 50 (docs/benchmarks.md, "The report prompt")
SYNTHESISE = """Answer the question below using only the numbered sources that follow it.
{notes}
Question: {question}

The research searched for:
{sub_queries}

Sources:
{chunks}

Question: {question}

Write in {language}. """ + REPORT_FORMAT + " " + NO_ANSWER_RULE

#: added to the report prompt when a first report's short answer named neither option the question offers
#: (``short_answer.unnamed_options``): the bundled 1.5B model answered "Who was born first out of Aivar Kuusmaa and
#: Andy Summers?" with "John Allen", a third page's name, in every 2WikiMultiHopQA run
NAME_AN_OPTION = """ The question offers two answers, "{first}" or "{second}": the Answer line names the one the \
sources support."""

#: the follow-up turn after a report reply that held only source numbers (``short_answer.only_citations``)
IN_WORDS = """Write the answer in words, not only source numbers: first the line "Answer: " with the short answer, \
then the report."""

CHAIN_NOTES = """- Findings of earlier research steps (question → intermediate answer), for orientation:
{steps}
"""

FOLLOW_UP = """Question: {question}

Research steps so far (follow-up question → intermediate answer):
{steps}

Decide whether the steps above are enough to answer the question. If not, write the single next follow-up question \
to search for: a short, self-contained question about one missing fact, using what the steps have established.

Reply with JSON only, in this form: {{"enough": false, "follow_up": "<next question>"}} or \
{{"enough": true, "follow_up": ""}}"""

#: chain_of_rag's first call (``agents.chain_of_rag.decompose``): the question broken down before any search. With
#: the bundled 1.5B model this wording broke 17 of the 18 compositional questions of a 2WikiMultiHopQA slice into
#: their first hop ("Who is the performer of the song 'Changed It'?"); a wording that also offered to repeat a
#: question already simple got it repeated for 28 of 32, compositional ones included (docs/benchmarks.md)
FIRST_FOLLOW_UP = """You answer a main question by searching a document collection step by step. The search tool \
understands only simple questions, so break the main question down: write the first simple follow-up question to \
search for. When the main question refers to a person or thing without naming it, ask for its name first.

Main question: {question}

Reply with JSON only, in this form: {{"follow_up": "<simple question>"}}"""

#: what the intermediate prompts tell the model to answer when its chunks do not hold the answer
NO_ANSWER = "no relevant information"


def found_nothing(answer: str) -> bool:
    """An intermediate answer that found nothing: empty, or ``NO_ANSWER`` (any case, a full stop)."""
    return not answer.strip() or answer.strip(" .!\"'").casefold() == NO_ANSWER


INTERMEDIATE = """Answer the follow-up question briefly, using only the numbered chunks below. If they do not contain \
the answer, say \"""" + NO_ANSWER + """\".

Follow-up question: {query}

{chunks}

Reply with JSON only, in this form: {{"answer": "<short answer>", "supporting": [1, 2]}} where "supporting" lists \
the numbers of the chunks the answer relies on."""

INTERMEDIATE_NEXT = """Answer the follow-up question briefly, using only the numbered chunks below. If they do not \
contain the answer, say \"""" + NO_ANSWER + """\".
{context}
Follow-up question: {query}

{chunks}

Then decide whether the research steps so far and this answer are enough to answer the question. If not, write the \
single next follow-up question to search for: a short, self-contained question about one missing fact, using what \
the steps and this answer have established.

Reply with JSON only, in this form: {{"answer": "<short answer>", "supporting": [1, 2], "enough": false, \
"follow_up": "<next question>"}} where "supporting" lists the numbers of the chunks the answer relies on and \
"follow_up" is "" when "enough" is true."""

#: the question and the chain so far, in ``INTERMEDIATE_NEXT`` after the first step (the first step's follow-up
#: question is the question itself)
CHAIN_CONTEXT = """
Question: {question}

Research steps so far (follow-up question → intermediate answer):
{steps}
"""

_CHOOSE_AGENT = """Choose the best strategy to answer the question over a document collection.

Strategies:
{strategies}

Question: {question}

Reply with JSON only, in this form: {{"agent": "deep_search"}}"""


class _ChooseAgent:
    """The agent-choice prompt; its strategy list is the registry's agents with their descriptions."""

    template = _CHOOSE_AGENT

    def format(self, *, question: str, strategies: str | None = None) -> str:
        """Render for ``question``; ``strategies`` defaults to the process-wide registry's agents."""
        if strategies is None:
            from deepsearcher.registry import registry

            strategies = agent_strategies(registry.providers("agent"))
        return self.template.format(strategies=strategies, question=question)


DESCRIBE_COLLECTION = """Below is a sample of a document collection: its file names, document titles, headings and \
a few excerpts. Write a description of the collection in one or two sentences (at most 50 words): what kinds of \
documents it holds and which topics they cover, so that a search system can decide which questions to send to it. \
Write it in the language of the excerpts. Do not start with "This collection"; name the topics.

Files: {files}
Titles: {titles}
Headings: {headings}

Excerpts:
{excerpts}

Reply with the description only."""


def agent_strategies(providers: Sequence[Any]) -> str:
    """``- name: description`` per registered agent, in registration order (built-ins first)."""
    return "\n".join(f"- {p.name}: {p.description}" for p in providers)


CHOOSE_AGENT = _ChooseAgent()

NO_STEPS = "(none yet)"
QUESTION_LANGUAGE = "the same language as the question"


def is_placeholder(text: str) -> bool:
    """True for text that only repeats a template placeholder (``<query 1>``, ``...``) or is empty: small models
    copy the example reply, and such a "query" must not be searched."""
    t = text.strip()
    return not t.strip(".…") or (t.startswith("<") and t.endswith(">"))


#: the longest text taken as a search query the model wrote (a sub-query, gap query or follow-up question); longer
#: is prose, not a query (a helper's probe sent a 15,000-character "follow-up", searched and then too long for the
#: report prompt)
MAX_QUERY_CHARS = 400
#: a reply that names no query: "None", "N/A", "nothing", "No further questions.", "null"
_NO_QUERY = re.compile(r"^(?:none|n/?a|nil|null|nothing(?: more| else)?|no(?:ne)?(?: further| more| other)?"
                       r"(?: follow[- ]?ups?| questions?| queries| gaps?)?(?: needed| required)?)$", re.IGNORECASE)


def not_a_query(text: str) -> bool:
    """True for text the model wrote where a search query belongs that is none: a placeholder (``is_placeholder``),
    no letter or digit ("?", "-", '""'), a phrase saying there is none ("None", "No further questions."), or longer
    than ``MAX_QUERY_CHARS``."""
    t = text.strip()
    if is_placeholder(t) or len(t) > MAX_QUERY_CHARS or not any(ch.isalnum() for ch in t):
        return True
    return _NO_QUERY.match(" ".join(t.strip(" .!\"'`*").split())) is not None


def system(now: datetime | None = None) -> str:
    """The system prompt for a question asked at ``now`` (default: now, local time): ``Today is 2026-11-30
    (Monday); the time zone is UTC+01:00 (CET).`` Reasoning models judge time-sensitive facts against it (the seed
    design's prompts carry the current date for the same reason)."""
    now = now or datetime.now().astimezone()
    offset = now.strftime("%z") or "+0000"
    zone = f"UTC{offset[:3]}:{offset[3:]}" + (f" ({now.tzname()})" if now.tzname() and now.tzname() != "UTC" else "")
    return SYSTEM.format(date=f"{now.date().isoformat()} ({now.strftime('%A')})", zone=zone)


def messages(prompt: str, now: datetime | None = None) -> list[Message]:
    """The system prompt (``system(now)``) plus one user message."""
    return [Message(role="system", content=system(now)), Message(role="user", content=prompt)]


def excerpt(text: str, max_chars: int | None = None) -> str:
    """``text`` on one line, cut at ``max_chars`` characters (at a word boundary, ending in " …")."""
    flat = " ".join(text.split())
    if max_chars is None or len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip() + " …"


def chunk_block(number: int, chunk: Chunk, max_chars: int | None = None) -> str:
    """One numbered chunk for a prompt: ``[n] title (source, p. N)`` then its text (cut at ``max_chars``)."""
    where = location(chunk)
    head = f"[{number}] {chunk.title} ({where})" if chunk.title else f"[{number}] ({where})"
    return f"{head}\n{excerpt(chunk.text, max_chars)}"


#: characters of each passage in the compact "everything found so far" list of the reflection prompt
FOUND_LINE_CHARS = 160


def found_line(chunk: Chunk) -> str:
    """One line of the reflection prompt's compact list: ``- title (source, p. N): first words …``."""
    where = location(chunk)
    head = f"{chunk.title} ({where})" if chunk.title else where
    return f"- {head}: {excerpt(chunk.text, FOUND_LINE_CHARS)}"


def chunk_list(chunks: Sequence[Chunk], max_chars: int | None = None, start: int = 1) -> str:
    """Numbered chunks separated by blank lines (numbers from ``start``)."""
    return "\n\n".join(chunk_block(i, c, max_chars) for i, c in enumerate(chunks, start=start)) or "(nothing)"


def bullet_list(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "(none)"
