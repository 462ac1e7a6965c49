"""A supporting passage for an answer whose report cites nothing: the source sentence that holds the answer's words.

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
