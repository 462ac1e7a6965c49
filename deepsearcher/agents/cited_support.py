"""Does a cited source hold what its sentence says? Checked by words, for every report.

Verifying a citation's number (``citations.verify_citations``) shows only that it points at a chunk the run
retrieved. A small model also cites the wrong chunk or writes a claim no chunk makes: on the quick start's question
the bundled Qwen2.5-Coder-1.5B answered with five paragraphs numbered [1]…[5] after the five sources; [1] said
chunk 2's PACELC sentence (38 % of its words are in chunk 1, with its title; all of them in chunk 2), [3] and [4]
gave the same invented definition to two levels (29 % and 50 % of their words in the chunk each cites), while [2]
and [5] copied their chunk (100 %). A report that showed all five as citations looked verified.

So every sentence of the answer that cites sources (``rewrites.sentences``, a citation after the full stop belonging
to the sentence before; code left out) is compared by its words (``rewrites.words``: citations removed, case-folded,
words of three or more letters, each Han/kana/Hangul character, frequent English words left out; each reduced to its
stem by the Snowball stemmer of the sentence's language, so "offers" is "offer" and "cities" "city") with the text,
title and file name of the sources it cites together (the prompt showed all three): when they hold less than
``SUPPORTED`` (half) of its words, the sentence is **not supported by its sources** and listed in
``Report.unsupported_citations`` with the other sources that do hold half its words (``found_in``). The report says
so under the answer (``support_note``); the text stays as the model wrote it, so a reader sees what was claimed. Not
judged: a sentence of fewer than ``MIN_WORDS`` words ("Yes [1]."), one that only speaks of the answer and its
sources ("The answer supports sources [1] and [2]."), one in another language than every source it cites (a German
report over English documents shares few words with them however right it is; ``scaffold.detect`` tells the
languages apart).

Matching words is a screen, not a proof: a paraphrase in other words can be flagged, and a sentence that reuses a
source's words to say something else passes. It catches what was measured: citations put on sentences from another
chunk and claims written from no chunk.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

import snowballstemmer

from deepsearcher.agents.citations import cited_numbers, without_code
from deepsearcher.agents.rewrites import ABOUT_ANSWER, overlap, sentences, words
from deepsearcher.agents.safe_markdown import LINK_MARKS, md_inline
from deepsearcher.agents.scaffold import detect, english_name
from deepsearcher.types import Report, Source, UnsupportedCitation

#: share of a cited sentence's words its cited sources must hold together
SUPPORTED = 0.5
#: a sentence with fewer words than this is not judged
MIN_WORDS = 3
_NO_BRACKETS = str.maketrans("[]【】［］", "()()()")
_MARKER = re.compile(r"^(?:[-*+]|\d+[.)]|#{1,6})\s+")
#: characters of a sentence quoted in the note
_QUOTE = 90


def unsupported_citations(answer: str, sources: Sequence[Source]) -> list[UnsupportedCitation]:
    """The sentences of ``answer`` whose cited ``sources`` hold less than ``SUPPORTED`` of their words (module
    docstring), in the order written, each once."""
    by_number = {s.number: s for s in sources}
    languages: dict[int, str] = {}
    known: dict[tuple[int, str], set[str]] = {}
    stemmers: dict[str, Any] = {}  # one per call: a Snowball stemmer keeps state while it stems

    def stems(found: set[str], language: str) -> set[str]:
        name = english_name(language)
        if name not in stemmers:
            stemmers[name] = (snowballstemmer.stemmer(name) if name in snowballstemmer.algorithms() else None)
        stemmer = stemmers[name]
        return set(stemmer.stemWords(sorted(found))) if stemmer is not None else found

    def language_of(number: int) -> str:
        if number not in languages:
            languages[number] = detect(by_number[number].chunk.text)
        return languages[number]

    def held_by(number: int, language: str) -> set[str]:
        if (number, language) not in known:
            chunk = by_number[number].chunk
            # what the prompt showed of it: its title, file or page name ("[1] Cotula (docs/plants.md)") and its
            # text; not the folders above the file ("film" of ".../films/phoolwari.md" is no fact about Phoolwari)
            name = chunk.source.rstrip("/").rsplit("/", 1)[-1]
            known[number, language] = stems(words(f"{chunk.title}\n{name}\n{chunk.text}"), language)
        return known[number, language]

    found: list[UnsupportedCitation] = []
    seen: set[str] = set()
    written = LINK_MARKS.sub("", answer)  # the link rule's marks are ours, not the model's claim
    prose = without_code(written)  # code is no claim: "data=[1]" cites nothing; same length, so positions hold
    at = 0
    for sentence in sentences(prose):
        at = prose.find(sentence, at)
        original, at = written[at:at + len(sentence)], at + len(sentence)  # quoted with its inline code
        cited = [n for n in dict.fromkeys(cited_numbers(sentence)) if n in by_number]
        text = _MARKER.sub("", " ".join(original.split()))  # a list item's or heading's marker is not its text
        if not cited or text in seen:
            continue
        language = detect(sentence)
        # judged by its words about the question; "offers" is "offer", "cities" "city"
        mine = stems(words(sentence) - ABOUT_ANSWER, language)
        if len(mine) < MIN_WORDS or all(language_of(n) != language for n in cited):
            continue
        share = overlap(mine, set().union(*(held_by(n, language) for n in cited)))
        if share >= SUPPORTED:
            continue
        others = [(overlap(mine, held_by(s.number, language)), s.number) for s in sources if s.number not in cited]
        found_in = [n for score, n in sorted(others, key=lambda t: (-t[0], t[1])) if score >= SUPPORTED]
        found.append(UnsupportedCitation(sentence=text, cited=cited, share=round(share, 2), found_in=found_in))
        seen.add(text)
    return found


def with_checked_support(report: Report) -> Report:
    """``report`` with ``unsupported_citations`` set from its answer and sources."""
    return replace(report, unsupported_citations=unsupported_citations(report.answer, report.sources))


def support_note(report: Report) -> str:
    """The note under an answer with sentences their cited sources do not hold ("" when there are none)."""
    listed = report.unsupported_citations
    if not listed:
        return ""

    def item(u: UnsupportedCitation) -> str:
        plain = re.sub(r"\*\*|__|(?<!\w)\*|\*(?!\w)", "", u.sentence)  # no emphasis the cut could leave open
        quote = plain if len(plain) <= _QUOTE else plain[:_QUOTE].rsplit(" ", 1)[0] + " …"
        # model text as literal Markdown: no link, image or HTML out of it; its numbers must not read as citations
        quote = md_inline(quote.translate(_NO_BRACKETS)).replace("&", "\\&")  # "&#91;2&#93;" shows no [2] either
        where = (f"; most of them are in {_numbered(u.found_in)}" if u.found_in
                 else "; no other listed source holds most of them")
        return f"- “{quote}” cites {_numbered(u.cited)}, with {round(u.share * 100)} % of its words{where}."

    if len(listed) == 1:
        head = ("**Citations.** 1 sentence of the answer cites sources that do not hold most of its words (checked "
                "by matching words, not by reading); check it against the sources before relying on it:")
    else:
        head = (f"**Citations.** {len(listed)} sentences of the answer cite sources that do not hold most of their "
                "words (checked by matching words, not by reading); check them against the sources before relying "
                "on them:")
    return head + "\n\n" + "\n".join(item(u) for u in listed)


def _numbered(numbers: Sequence[int]) -> str:
    return f"source{'s' if len(numbers) > 1 else ''} {', '.join(str(n) for n in numbers)}"
