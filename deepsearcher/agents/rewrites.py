"""One rule for every rewrite of cited text: a citation may stay only on a claim that carried it before.

A long report's editing pass, and beast mode writing over earlier answers, return text that already carries
``[n]`` citations. Checking only that each number exists lets a rewrite exchange two valid numbers or move a
sentence under another citation, so "price X [1]" ends up resolving to the file about something else. So each
rewritten sentence is traced to the sentence it came from in the draft the rewriting call was shown:

- sentences are compared by their words (citations removed, case-folded; words of three or more letters, and each
  Han/kana/Hangul character as a word): the share of the rewritten sentence's words found in a draft sentence;
- a rewritten sentence **comes from** every draft sentence sharing at least ``SAME`` (0.5) of its words; it may cite
  only numbers those sentences cited (a sentence merged from two keeps both);
- a sentence that comes from none is new text (an introduction, a conclusion, a summary). With ``new_claims`` it may
  cite a number only when it and a draft sentence carrying that number share at least ``RELATED`` (0.2) of the
  words of either;
  without it (beast mode, whose new sentences cite evidence items directly) it is not checked.

A sentence that breaks the rule is put back as drafted (the draft sentence that shares most of its words), or left
out when it comes from none; the caller adds a note to the report (``moved_note``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pysbd

from deepsearcher.agents.citations import cited_numbers, strip_citations

SAME = 0.5
RELATED = 0.2
_CITES = r"(?:\s*[\[【［]\d[\d,\s\-–]*[\]】］])*"
#: what can close a sentence after its full stop: emphasis, a bracket, a quote ("… one local file.** It was …")
_CLOSERS = r"[*_)\"”’']{0,3}"
_END = re.compile(rf"[.!?]{_CLOSERS}{_CITES}(?=\s|$)|[。！？।॥]{_CLOSERS}{_CITES}")
#: a label in emphasis opening its sentence ("**Strong.** It is strict [1]."): part of that sentence
_BOLD_LABEL = re.compile(r"^\s*[*_]{1,3}[^*_\s]+(?:\s+[^*_\s]+){0,2}[.!?][*_]{1,3}$")
#: words on each side of a full stop that pysbd is shown to tell an abbreviation from a sentence's end
_CONTEXT = 6
#: characters on each side of a full stop those words are taken from
_NEAR = 300
#: letters with their combining marks: Devanagari, Bengali … Sinhala ("मिल्वस" is one word, not "म", "ल", "वस")
LETTER = r"(?:[^\W\d_]|[\u0300-\u036f\u0900-\u0dff])"
#: scripts written without spaces between words (Thai, Lao, Myanmar, Khmer): compared by runs of three letters
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+")
#: Chinese, Japanese and Korean: compared by pairs of characters ("企鹅", "开发"); one character alone counts too
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_WORDS = re.compile(rf"{LETTER}{{3,}}")
#: frequent English words that tie no claim to another (other languages: their longer words carry the claim)
_STOP = frozenset("the and for with this that are was were has have from its into also which their these those "
                  "than then there about been can not but all any our you".split())


@dataclass(frozen=True)
class Moved:
    """A rewritten sentence citing what its draft did not: ``cited`` numbers, ``allowed`` the draft's numbers for
    it, ``origin`` the draft sentence it came from ("" for new text)."""

    sentence: str
    cited: list[int]
    allowed: list[int]
    origin: str


@dataclass(frozen=True)
class Checked:
    """A rewrite with the rule applied: ``text`` with every moved citation undone, ``moved`` what was undone."""

    text: str
    moved: list[Moved]


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` line by line, each a substring of its line: a sentence ends at . ! ? 。 ！ ？ with
    the citations right after it ("levels. [1] All …" gives "levels. [1]"), followed by a space or the line's end —
    except where pysbd's rules read the full stop as an abbreviation's or an initial's ("J. K. Rowling", "O.F.M.",
    "U.S. Army", "e.g."). A full stop with a citation after it always ends one."""
    out: list[str] = []
    for line in text.splitlines():
        pos = 0
        parts: list[str] = []
        for end in _END.finditer(line):
            parts.append(line[pos:end.end()])
            pos = end.end()
        parts.append(line[pos:])
        merged: list[str] = []
        for part in parts:
            if merged and (_abbreviation_ends(merged[-1], part) or _BOLD_LABEL.match(merged[-1])):
                merged[-1] += part
            else:
                merged.append(part)
        out += merged
    return [s for s in out if s.strip()]


def _abbreviation_ends(before: str, after: str) -> bool:
    """``before`` ends at a full stop that does not end a sentence, as pysbd reads the words around it (a few on
    each side: its rules are slow on long text, and they look no further)."""
    if not before.endswith(".") or not after.strip():
        return False
    first = after.split()[0]
    near = before[-_NEAR:].split()  # the end of a sentence merged so far: its whole text would make this quadratic
    if first[0].islower() or (first[0].isdigit() and near[-1][:-1].isalpha()):
        return True  # "ca. 1200", "Vol. 2", "e.g. the": a sentence starts with a capital, not after a word a number
    left = " ".join(near[-_CONTEXT:])
    window = f"{left} {' '.join(after[:_NEAR].split()[:_CONTEXT])}"
    # a Segmenter keeps the text it is segmenting on itself: one per call, as agents run in threads
    ends, at = set(), 0
    for segment in pysbd.Segmenter(language="en", clean=False).segment(window):
        at += len(segment)
        ends.add(at)
    return not ends & {len(left), len(left) + 1}


#: words about an answer and its sources rather than about the question: "The answer supports sources [1] and [2].",
#: "The answer is correct based on the information provided in the sources." claim nothing a source could hold
#: (Qwen2.5-Coder-0.5B wrote both as reports' first sentences on MuSiQue)
ABOUT_ANSWER = frozenset("answer answers source sources document documents passage passages information provided "
                         "provide provides support supports supported state states stated according comes given "
                         "explanation directly corresponds text question details mentioned mentions correct accurate "
                         "based context additional relevant".split())


def words(sentence: str) -> set[str]:
    """The words two sentences are compared by (module docstring): a word of three letters or more (with its
    combining marks); in Chinese, Japanese and Korean each pair of characters; in Thai and other scripts written
    without spaces each run of three letters."""
    text = strip_citations(sentence)
    shingles = {run[i:i + 3] for run in _UNSPACED.findall(text) for i in range(max(1, len(run) - 2))}
    pairs = {run[i:i + 2] for run in CJK.findall(text) for i in range(max(1, len(run) - 1))}
    spaced = CJK.sub(" ", _UNSPACED.sub(" ", text))
    return ({w.casefold() for w in _WORDS.findall(spaced)} | shingles | pairs) - _STOP


def overlap(sentence: set[str], other: set[str]) -> float:
    """Share of ``sentence``'s words found in ``other`` (0.0 for a sentence without words)."""
    return len(sentence & other) / len(sentence) if sentence else 0.0


def check_rewrite(draft: str, rewritten: str, *, new_claims: bool = True) -> Checked:
    """Apply the rule of the module docstring to ``rewritten`` against the ``draft`` its call was shown."""
    drafted = [(s, words(s), set(cited_numbers(s))) for s in sentences(draft)]
    moved: list[Moved] = []
    out: list[str] = []
    for line in rewritten.splitlines(keepends=True):
        fixed = line
        for sentence in sentences(line):
            problem = _moved(sentence, drafted, new_claims)
            if problem is not None:
                moved.append(problem)
                fixed = fixed.replace(sentence.strip(), problem.origin.strip(), 1)
        out.append(fixed)
    if not moved:
        return Checked(rewritten, [])
    text = "\n".join(re.sub(r"[ \t]{2,}", " ", line).rstrip() for line in "".join(out).splitlines())
    return Checked(re.sub(r"\n{3,}", "\n\n", text).strip(), moved)


def _moved(sentence: str, drafted: list[tuple[str, set[str], set[int]]], new_claims: bool) -> Moved | None:
    cited = cited_numbers(sentence)
    if not cited:
        return None
    mine = words(sentence)
    scored = [(overlap(mine, w), s, c) for s, w, c in drafted]
    sources = [(score, s, c) for score, s, c in scored if score >= SAME]
    if sources:
        allowed = set().union(*(c for _, _, c in sources))
        origin = max(sources, key=lambda t: t[0])[1]
    elif new_claims:  # a summary is long and a draft sentence short: either may hold the other's words
        allowed = set().union(*(c for _, w, c in drafted if max(overlap(mine, w), overlap(w, mine)) >= RELATED))
        origin = ""
    else:
        return None
    if set(cited) <= allowed:
        return None
    return Moved(sentence.strip(), sorted(set(cited)), sorted(allowed), origin.strip())


def moved_note(moved: list[Moved], step: str) -> str:
    """The report's note on citations a rewrite moved (``step``: "the editing pass", "the final answer")."""
    kept = sum(1 for m in moved if m.origin)
    dropped = len(moved) - kept
    parts = []
    if kept:
        parts.append(f"{kept} kept as drafted")
    if dropped:
        parts.append(f"{dropped} left out")
    return (f"*Note: {step} put citations on {len(moved)} sentence(s) whose claims were not tied to those sources "
            f"before ({', '.join(parts)}).*")
