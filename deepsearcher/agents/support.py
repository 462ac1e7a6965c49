"""A supporting passage for an answer whose report cites nothing: the source sentence that holds the answer's words;
and the source number of text a report copied from a source without citing it (``cite_copies``).

Small local models often answer well and cite nothing: the bundled Qwen2.5-Coder-1.5B wrote "Answer: Milvus offers
four consistency levels: strong, bounded staleness, session, and eventually." and then a copy of the prompt's source
list (docs/benchmarks.md, "Citations from a small model"). Asked in a follow-up turn which sources say it, it named
all five; asked to quote the supporting sentence, it quoted its own answer. So the report step looks for the
support itself, by words, and says so: the source sentence that holds (nearly) every word the short answer adds to
the question — numbers always — is shown under the report as a quotation with its source number, marked as found
by matching words, not cited by the model. No sentence qualifies → nothing is added and the sources stay
"consulted".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from deepsearcher.agents.citations import cite_sentence, cites_any, code_spans
from deepsearcher.agents.rewrites import CJK, LETTER, overlap, sentences, words
from deepsearcher.types import Chunk

#: share of the answer's own words a sentence must hold (numbers: all of them)
MIN_SHARE = 0.8
#: characters of the quoted sentence at most
MAX_QUOTE = 400
_NUMBER = re.compile(r"\d+")


def supporting_sentence(answer: str, question: str, chunks: Sequence[Chunk | None]) -> tuple[int, str] | None:
    """``(1-based chunk number, sentence)`` of the sentence that best holds what ``answer`` adds to ``question``.

    Words are compared as a rewrite's sentences are (``rewrites.words``: citations removed, case-folded, words of
    three or more letters and each Han/kana/Hangul character, frequent English words left out); numbers apart. The
    answer's own words and numbers are those the question does not have. A sentence (``rewrites.sentences``)
    qualifies when it holds every own number and at least ``MIN_SHARE`` of the own words; among those, the one
    holding most of them, then most of the question's words, then the earliest, wins. None when the answer adds
    nothing or no sentence qualifies. A ``None`` in ``chunks`` (a numbered item with no chunk, e.g. a web result's
    snippet) is skipped and keeps its number.
    """
    asked = words(question)
    own = words(answer) - asked
    numbers = set(_NUMBER.findall(answer)) - set(_NUMBER.findall(question))
    if not own and not numbers:
        return None
    best: tuple[tuple[float, int], int, str] | None = None
    for number, chunk in enumerate(chunks, start=1):
        for sentence in sentences(chunk.text) if chunk is not None else []:
            have = words(sentence)
            share = overlap(own, have) if own else 1.0
            if share < MIN_SHARE or not numbers <= set(_NUMBER.findall(sentence)):
                continue
            score = (share, len(asked & have))
            if best is None or score > best[0]:
                best = (score, number, " ".join(sentence.split()))
    if best is None:
        return None
    _, number, sentence = best
    if len(sentence) > MAX_QUOTE:
        sentence = sentence[:MAX_QUOTE].rsplit(" ", 1)[0] + " …"
    return number, sentence


def support_note(number: int, sentence: str) -> str:
    """The note under a report that cites nothing: the sentence, quoted, with its source number."""
    quoted = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", sentence.replace("\n", " "))  # a link: its text
    quoted = quoted.replace("[", "(").replace("]", ")")  # no number in it may read as a citation
    return (f"*The model cited no source. The passage that holds the answer's words (found by matching them):*\n\n"
            f"> “{quoted}” [{number}]")


#: words a paragraph or sentence copied from a source must have to be cited as that source's (shorter ones, "Milvus
#: Lite is a library.", are common phrasing, not a copy); Chinese, Japanese and Korean count a word per two characters
COPY_MIN_WORDS = 8
#: a word as copies are compared: a number with its sign and separators ("-40" is not "+40", "3.5" not "3,5"), or a
#: run of letters with their combining marks (Devanagari … Sinhala: "मिल्वस" is one word)
_TOKEN = re.compile(rf"[+\-−]?\d+(?:[.,]\d+)*|{LETTER}+")
#: a line that is not prose the report step may add a number to: a heading, a quote, HTML, indented code, a table
#: row (any "|")
_NOT_PROSE = re.compile(r"^(?:\s*(?:#|>|<)| {4,}|\t)|\|")
#: a setext heading's underline: the line above it is a heading
_UNDERLINE = re.compile(r"^\s*(?:=+|-+)\s*$")
#: a list item's marker or a bold label before a copy ("1. ", "- ", "**Note:** ")
_LEAD = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?)?(?:\*\*[^*\n]{1,40}:\*\*\s*)?")
#: a Markdown link ("[text](url)"): a number must not land in its text, so a line holding one is left as written
_LINK = re.compile(r"\]\(")


def copy_words(text: str) -> list[str]:
    """The words of ``text`` as copies are compared (``_TOKEN``), case folded."""
    return _TOKEN.findall(text.casefold())


@dataclass(frozen=True)
class SourceText:
    """A numbered source's words, and where its sentences start among them (``cite_copies`` compares whole
    sentences)."""

    words: list[str]
    starts: frozenset[int]

    @classmethod
    def of(cls, text: str) -> SourceText:
        words: list[str] = []
        starts = {0}
        for sentence in sentences(text):
            words += copy_words(sentence)
            starts.add(len(words))
        return cls(words, frozenset(starts))

    def holds(self, probe: list[str]) -> bool:
        """``probe`` is one or more whole sentences of this source, in order."""
        size = len(probe)
        return any(self.words[at:at + size] == probe and at + size in self.starts for at in self.starts)


def cite_copies(text: str, chunks: Sequence[Chunk | None]) -> tuple[str, int]:
    """``text`` with the source number added to each paragraph line, or else sentence, that cites nothing and is a
    numbered source's text told again word for word (``chunks``, 1-based; ``None`` for an item with no chunk); and how
    many got one. The bundled 1.5B model's reports paste passages and cite none of them (58 of 85 stored reports of
    its answer runs, docs/benchmarks.md), so they read as the model's own words on no source; cited, they are listed
    under Sources and judged by the citation check like any other.

    A copy is one or more whole sentences of the source, in order (case and punctuation aside; a number keeps its
    sign and separators), of at least ``COPY_MIN_WORDS`` words: a source's "It is a myth that X." gives X no number,
    and neither does a line wrapped in the middle of a sentence. The first source holding it gives its number, before
    the closing punctuation, or after the quotes or emphasis wrapping it whole. Left as written: code (fenced,
    indented or inline), headings (also a line underlined with = or -), tables (a line with "|"), quotes, HTML, lines
    with a Markdown link, lines that cite anything, and sentences ending in a colon, semicolon or comma (a lead-in)."""
    texts = {number: c.text for number, c in enumerate(chunks, start=1) if c is not None}
    flat = {number: f" {' '.join(copy_words(text))} " for number, text in texts.items()}
    split: dict[int, SourceText] = {}  # sentences found only for a source holding a probe's words (pysbd is slow)

    def holds(number: int, probe: list[str]) -> bool:
        if f" {' '.join(probe)} " not in flat[number]:
            return False
        if number not in split:
            split[number] = SourceText.of(texts[number])
        return split[number].holds(probe)

    def source_of(part: str) -> int | None:
        body = _LEAD.sub("", part, count=1)
        probe = copy_words(body)
        size = max(len(probe), sum(map(len, CJK.findall(body))) // 2)
        if size < COPY_MIN_WORDS or body.rstrip(" *_").endswith((":", ";", ",", "：", "；", "，")):
            return None
        return next((n for n in texts if holds(n, probe)), None)

    code = code_spans(text)
    lines = text.split("\n")
    out: list[str] = []
    count = at = 0
    for index, raw in enumerate(lines):
        start, at = at, at + len(raw) + 1
        line, cr = (raw[:-1], "\r") if raw.endswith("\r") else (raw, "")
        underlined = index + 1 < len(lines) and _UNDERLINE.match(lines[index + 1]) is not None
        if (_in_code(code, start, at) or _NOT_PROSE.search(line) or _LINK.search(line)
                or underlined or cites_any(line)):
            out.append(raw)
            continue
        whole = source_of(line)
        if whole is not None:
            out.append(cite_sentence(line, [whole]) + cr)
            count += 1
            continue
        parts = sentences(line)
        if "".join(parts) != line:  # a separator sentences() does not give back (U+2028): left as written
            out.append(raw)
            continue
        numbers = [source_of(part) for part in parts]
        count += sum(n is not None for n in numbers)
        out.append("".join(cite_sentence(part, [n]) if n is not None else part for part, n in zip(parts, numbers)) + cr)
    return "\n".join(out), count


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
#: a source named by its place in the prompt's list: "The first source states that …", "the second document"
_ORDINAL_SOURCE = re.compile(rf"\bthe\s+({'|'.join(_ORDINALS)})\s+(?:source|document|passage)\b(?!\s*[\[【［])",
                             re.IGNORECASE)


def cite_ordinals(text: str, count: int) -> tuple[str, int]:
    """``text`` with the number of a source it names by its place ("The first source states that X" → "The first
    source [1] states that X") in each sentence that cites nothing, when that place is among the ``count`` sources
    the prompt listed; and how many got one. The bundled 1.5B model wrote such sentences in 7 of 85 stored reports:
    uncited, nothing judged them; cited, the citation check does (a source that does not hold the claim is listed).
    Code and sentences that cite anything are left as written."""
    code = code_spans(text)
    found = 0

    def numbered(part: str) -> str:
        nonlocal found
        places = [(m.end(), _ORDINALS.index(m[1].casefold()) + 1) for m in _ORDINAL_SOURCE.finditer(part)]
        places = [(end, place) for end, place in places if place <= count]
        if cites_any(part):
            return part
        for end, place in reversed(places):
            part = f"{part[:end]} [{place}]{part[end:]}"
        found += len(places)
        return part

    out: list[str] = []
    start = 0
    for line in text.split("\n"):
        parts = sentences(line)
        if "".join(parts) == line:  # else a separator sentences() does not give back (U+2028): left as written
            at, new = start, []
            for part in parts:
                new.append(part if _in_code(code, at, at + len(part)) else numbered(part))
                at += len(part)
            out.append("".join(new))
        else:
            out.append(line)
        start += len(line) + 1
    return "\n".join(out), found


def _in_code(code: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """``text[start:end]`` overlaps one of the ``code`` spans (``citations.code_spans``)."""
    return any(a < end and start < b for a, b in code)
