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
from typing import Sequence

from deepsearcher.agents.citations import cites_any
from deepsearcher.agents.rewrites import overlap, sentences, words
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
#: Lite is a library.", are common phrasing, not a copy)
COPY_MIN_WORDS = 8
_WORD = re.compile(r"\w+")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def cite_copies(text: str, chunks: Sequence[Chunk | None]) -> tuple[str, int]:
    """``text`` with the source number added to each paragraph, or else sentence, that cites nothing and is a copy,
    word for word, of a numbered source's text (``chunks``, 1-based; ``None`` for an item with no chunk); and how many
    got one. The bundled 1.5B model's deep_research answers on HotpotQA (2026-12-03) told three of its knowledge
    items again, word for word and uncited — two of them about other things than the question — so the report
    looked like its own words on no source. Cited, they are the sources' words, listed under Sources and judged by
    the citation check like any other. Copies of at least ``COPY_MIN_WORDS`` words (case and punctuation aside);
    headings, tables, code and text that cites anything are left as written."""
    bodies = [f" {' '.join(_WORD.findall(c.text.casefold()))} " if c is not None else "" for c in chunks]

    def source_of(part: str) -> int | None:
        said = _WORD.findall(part.casefold())
        if len(said) < COPY_MIN_WORDS:
            return None
        probe = f" {' '.join(said)} "
        return next((n for n, body in enumerate(bodies, start=1) if body and probe in body), None)

    out: list[str] = []
    fenced, count = False, 0
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or _FENCE.match(line) or line.lstrip().startswith(("#", "|", ">")) or cites_any(line):
            out.append(line)
            continue
        whole = source_of(line)
        if whole is not None:
            out.append(_cite(line, whole))
            count += 1
            continue
        parts = sentences(line)
        numbers = [source_of(part) for part in parts]
        if any(n is not None for n in numbers):
            line = "".join(_cite(part, n) + (" " if part.endswith(" ") else "") if n is not None else part
                           for part, n in zip(parts, numbers))
            count += sum(n is not None for n in numbers)
        out.append(line)
    return "\n".join(out), count


def _cite(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` before its closing full stop (or at its end)."""
    body = sentence.rstrip()
    stop = re.search(r"[.!?。！？][*_\"”’')]*$", body)
    if stop is None:
        return f"{body} [{number}]"
    return f"{body[:stop.start()].rstrip()} [{number}]{body[stop.start():]}"
