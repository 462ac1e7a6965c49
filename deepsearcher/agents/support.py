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
import unicodedata
from typing import Sequence

from deepsearcher.types import Chunk

#: words that say nothing about which sentence holds an answer
_STOP = frozenset("""a an the and or but of in on at to for from by with as is are was were be been being it its this
that these those there their his her he she they them we you i not no yes do does did has have had which who whom
whose what when where why how than then so such also into over under about after before between during""".split())
#: share of the answer's own words a sentence must hold (numbers: all of them)
MIN_SHARE = 0.8
#: characters of the quoted sentence at most
MAX_QUOTE = 400


def words(text: str) -> list[str]:
    """Case-folded, accent-stripped word tokens without stop words."""
    plain = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return [w for w in re.findall(r"\w+", plain) if w not in _STOP]


def sentences(text: str) -> list[str]:
    """The sentences of a chunk (split after . ! ? and their CJK forms, and at line breaks)."""
    parts = re.split(r"(?<=[.!?。！？])\s+|\n+", text)
    return [" ".join(p.split()) for p in parts if p.strip()]


def supporting_sentence(answer: str, question: str, chunks: Sequence[Chunk]) -> tuple[int, str] | None:
    """``(1-based chunk number, sentence)`` of the sentence that best holds what ``answer`` adds to ``question``.

    The answer's own words are its words that the question does not have. A sentence qualifies when it holds every
    number among them and at least ``MIN_SHARE`` of them; among those, the one holding most of them, then most of
    the question's words, then the earliest, wins. None when the answer adds no word or no sentence qualifies.
    """
    asked = set(words(question))
    own = [w for w in dict.fromkeys(words(answer)) if w not in asked]
    if not own:
        return None
    numbers = {w for w in own if w.isdigit()}
    best: tuple[tuple[float, int], int, str] | None = None
    for number, chunk in enumerate(chunks, start=1):
        for sentence in sentences(chunk.text):
            have = set(words(sentence))
            share = sum(w in have for w in own) / len(own)
            if share < MIN_SHARE or not numbers <= have:
                continue
            score = (share, len(asked & have))
            if best is None or score > best[0]:
                best = (score, number, sentence)
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
