"""Sentences that add nothing to a report: claims that the sources vouch for the answer, sentences about the answer
rather than the question, and lines or sentences said again (``without_support_claims``, ``without_repeated_lines``,
``without_repeated_sentences``), with ``content_words``, the words of a text that can say something.
"""

from __future__ import annotations

import re

from deepsearcher.agents.citations import cited_numbers, strip_citations
from deepsearcher.agents.echoes import ANSWER_LINE, LABEL_PREFIX
from deepsearcher.agents.rewrites import ABOUT_ANSWER, sentences


#: a list item's marker at a line's start ("- ", "* ", "1. ", "2) ")
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: a sentence about the sources rather than the question ("The answer is supported by all four sources.", "Both
#: documents confirm this."): with no citation of its own it is a claim no one checked — the bundled 1.5B model wrote
#: "supported by all four sources" under an answer that cited none, above a Sources list of one
_SUPPORT_CLAIM = re.compile(
    r"\b(?:supported|confirmed|backed(?:\s+up)?|corroborated|verified|validated)\s+by\s+(?:all|both|each|every|the|"
    r"these|several|multiple|many|\w+)\s+(?:of\s+the\s+)?(?:\w+\s+)?(?:sources|documents|passages|references|"
    r"chunks)\b|\b(?:all|both|each\s+of\s+the|every\s+one\s+of\s+the|the)\s+(?:\w+\s+)?(?:sources|documents|"
    r"passages|references)\s+(?:all\s+)?(?:agree|confirm|support|corroborate|verify)\b", re.IGNORECASE)


def without_support_claims(text: str) -> str:
    """``text`` without the sentences that only vouch for the sources and say nothing else (``_vouches_only``), and
    without those that speak of the answer and its sources in words about them alone (``about_the_answer``: "The
    answer supports sources [1] and [2][3].", "The answer is correct based on the information provided in the
    sources.", first sentences of Qwen2.5-Coder-0.5B reports on MuSiQue); the report's own Sources section and
    citation checks say what supports what. The numbers of a cited one go to the sentence before it on its line,
    which they cite ("Milvus has four levels. This is supported by the documents [1][2]." → "Milvus has four levels.
    [1][2]"). Headings, tables, code, list items, labels ("Sources:", "Answer: …") and other text are kept as written,
    and so is a text that would keep no words."""
    kept = []
    fenced = changed = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("#", "|", "```", "~~~")):
            kept.append(line)
            continue
        parts = sentences(line)  # a citation after a sentence's full stop belongs to that sentence
        item = bool(LIST_MARKER.match(line))  # "- Source documents [1]": a list's item names a thing
        left: list[str] = []
        for part in parts:
            numbers = cited_numbers(part)
            if not (_vouches_only(part)
                    or (not item and about_the_answer(part) and not part.rstrip(" *_\t").endswith((":", "：")))):
                left.append(part)
            elif numbers and left:  # "… four levels. This is supported by the documents [1][2].": they cite it
                new = [n for n in dict.fromkeys(numbers) if n not in cited_numbers(left[-1])]
                if new:
                    left[-1] = left[-1].rstrip() + " " + "".join(f"[{n}]" for n in new)
        dropped = left != parts
        changed = changed or dropped
        if left or not line.strip():
            kept.append("".join(left).strip() if dropped else line)
    out = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return out if changed and re.search(r"\w", strip_citations(out)) else text


def _vouches_only(sentence: str) -> bool:
    """``sentence`` claims that sources vouch (``_SUPPORT_CLAIM``) and says nothing else: "The answer is supported by
    all four sources." does; "The customs documents confirm the origin of the goods." states what they confirm."""
    claim = _SUPPORT_CLAIM.search(sentence)
    if claim is None:
        return False
    rest = f"{sentence[:claim.start()]} {sentence[claim.end():]}"
    return not content_words(rest) - ABOUT_ANSWER - {"four", "three", "two", "five", "six", "above", "statement"}


#: words that claim nothing by themselves (articles, auxiliaries, prepositions, pronouns, question words); negations
#: are not among them: "The sources do not say." says something
_FUNCTION = frozenset("a an the is are was were be been being am of in on at to by for with from as this that these "
                      "those it its and or but which who whom whose what where when how why than then there here has "
                      "have had do does did can could will would should may might must shall also only both each "
                      "every any all so such very more most into onto about over under between i we you he she they "
                      "him her them his their our your me us my s".split())


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can say something: every word (numbers and short words too, any script; "2.2" and
    "1,500" one word each), citations and ``_FUNCTION`` words aside, case folded."""
    return {w for w in re.findall(r"\d+(?:[.,:/-]\d+)*|\w+", strip_citations(text).casefold()) if w not in _FUNCTION}


#: the words by which a sentence speaks of the answer, the question or the sources as this report's own
ANCHORS = frozenset("answer answers question source sources".split())


def about_the_answer(sentence: str) -> bool:
    """``sentence`` speaks of the answer, the question or the sources (``ANCHORS``) and every word of it that can say
    something is about them (``ABOUT_ANSWER``): "The answer supports sources [1] and [2][3]." Not "The answer is 42
    [1].", "The sources do not say.", "It provides relevant passages as context [1]." (a retriever's, in a report on
    RAG), nor a labelled line ("Answer: Relevant passages")."""
    if ANSWER_LINE.match(sentence) or LABEL_PREFIX.match(sentence):
        return False
    mine = content_words(sentence)
    return bool(mine & ANCHORS) and mine <= ABOUT_ANSWER


#: shortest line (citations aside) that ``without_repeated_lines`` merges: "Yes." twice may be two answers
REPEAT_MIN_CHARS = 20


def without_repeated_lines(text: str) -> str:
    """``text`` with a line that says again what an earlier line said (the same words once citations, a leading
    bullet and case are set aside) merged into that line, its citations added there: Qwen2.5-Coder-0.5B's
    deep_research answer was one sentence three times, "[1] Haymo of Faversham … scholar." then the same after [2]
    and [3]. Lines in code fences and tables, and short lines, are kept as written."""
    lines = text.split("\n")
    first: dict[str, int] = {}
    cites: dict[int, list[int]] = {}
    drop: set[int] = set()
    fenced = False
    for at, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        body = " ".join(strip_citations(LIST_MARKER.sub("", line)).split()).casefold()
        if fenced or line.lstrip().startswith(("|", "```", "~~~")) or len(body) < REPEAT_MIN_CHARS:
            continue
        if body in first:
            drop.add(at)
            cites.setdefault(first[body], []).extend(cited_numbers(line))
        else:
            first[body] = at
    if not drop:
        return text
    out = []
    for at, line in enumerate(lines):
        if at in drop:
            continue
        if at in cites:
            own = cited_numbers(line)
            extra = [n for n in dict.fromkeys(cites[at]) if n not in own]
            if extra:
                merged = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(strip_citations(line).split()))
                line = f"{merged} " + "".join(f"[{n}]" for n in dict.fromkeys([*own, *extra]))
        out.append(line)
    return "\n".join(out)


def without_repeated_sentences(text: str) -> str:
    """``text`` with a sentence said again word for word (citations, case and spacing aside; at least
    ``REPEAT_MIN_CHARS``) left out where it comes again, unless it cites what it did not before: the bundled 1.5B
    model's deep_search report on the README's second example said its last three sentences five times in one
    paragraph until ``max_tokens`` (a helper's fresh clone, 2026-12-03). Lines in code fences and tables are kept as
    written."""
    seen: dict[str, set[int]] = {}
    out: list[str] = []
    fenced = changed = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("|", "```", "~~~")):
            out.append(line)
            continue
        kept = []
        parts = sentences(line) or [line]
        for part in parts:
            body = " ".join(strip_citations(part).split()).casefold()
            if len(body) >= REPEAT_MIN_CHARS and body in seen and set(cited_numbers(part)) <= seen[body]:
                changed = True  # said before, with these citations: nothing of it is lost
                continue
            seen.setdefault(body, set()).update(cited_numbers(part))
            kept.append(part)
        out.append("".join(kept).rstrip() if len(kept) != len(parts) else line)
    return "\n".join(out) if changed else text
