"""Citations: number the chunks given to the model and verify the ``[n]`` it wrote.

The one home of what counts as a citation (``find_citations``, used by the report step, the web page's HTML
(``server/markdown.py``) and the evaluation metrics) and of a chunk's location as citations show it (``location``).
The report's Markdown, with its Sources list, is ``report_markdown``.

Every ``[n]`` in a report must resolve to a chunk retrieved in this run (paper-qa verifies its citation keys the same
way). Numbers outside ``1..len(chunks)`` are removed and counted; the remaining ones are renumbered in order of
first appearance, so a report cites ``[1]``, ``[2]``, … and its Sources section lists exactly those chunks. Ranges
(``[1-3]``) and lists (``[1, 2]``, ``【1】``, full-width ``［1］``) are understood and rewritten as ``[1][2][3]``.

A bracketed number is a citation only **in citation position**, and never inside code:

- text in inline code (`` `results[2]` ``) or a fenced block (```` ``` ```` / ``~~~``) is left exactly as written;
- a marker right after a word with no space counts only after a plain word ("process[1]", "数据库[1]", "the
  capital.[1]" after its full stop), not after
  a code-like name (``results_2[1]``, ``obj.items[1]``, ``myList[1]``, a one-letter name, a name also written with
  ``[0]`` somewhere, which marks it as an index) or a closing bracket or parenthesis (``f(x)[1]``, ``a[0][1]``);
- a marker followed by ``(`` (a Markdown link), ``=``, ``.name`` or ``[`` (more indexing) is not a citation.

Other bracketed text is never rewritten.

A bracketed number that is a value, not a source, is kept as written and never counted as an unknown citation:

- a year or a span of years (``in [2024]``, ``[2019-2024]``: every number 1000–2999) is never a citation — no
  run shows the model a thousand chunks;
- a decimal or version (``see [1.2]``, ``[3.10.1]``) is never a citation (``CITATION_RE`` needs whole numbers);
- a number with no chunk behind it (``[10]`` when 3 chunks were shown) right after a word that takes a number
  (``step [10]``, ``version [4]``, ``Table [12]``, ``Schritt [5]``; ``VALUE_WORDS``) is a value and kept.

Any other number with no chunk behind it (``Moon [9].``, ``see [10]`` with 3 sources) stands where a citation
stands and points at a source the reader cannot follow: it is removed and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from deepsearcher.types import Chunk, Hit, OtherSource, Source

_SEP = r"\s*(?:,|，|;|、|-|–|and)\s*"
#: a bracketed citation candidate: ``[1]``, ``[1, 2]``, ``[1-3]``, ``【1】``, ``［1］``; group 1 holds the numbers. Whether it is
#: a citation depends on where it stands (``find_citations``).
CITATION_RE = re.compile(rf"[\[【［]\s*(\d{{1,4}}(?:{_SEP}\d{{1,4}})*)\s*[\]】］]")
_RANGE_RE = re.compile(r"(\d+)\s*[-–]\s*(\d+)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_TICKS_RE = re.compile(r"`+")
_WORD_BEFORE = re.compile(r"[A-Za-z0-9_.$]+$")
_INDEXED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s?\[\s*0\s*\]")
_CODE_AFTER = re.compile(r"\(|\s*=(?!=)|\.[A-Za-z_]|\[")
MAX_RANGE = 50
YEARS = range(1000, 3000)
#: words after which an out-of-range bracketed number is a value, not a citation (lower case; several languages)
VALUE_WORDS = frozenset("""
    step steps version versions v section sections chapter chapters figure fig table tables page pages line lines
    item items equation eq eqs formula rule article art paragraph par level phase stage grade no number nr year
    schritt abschnitt kapitel abbildung tabelle seite zeile gleichung jahr
    étape section chapitre figure tableau ligne équation année
    paso sección capítulo figura tabla página línea ecuación año
    passo seção capítulo figura tabela página linha equação ano
    шаг шаге раздел разделе глава главе рисунок рисунке таблица таблице страница странице строка строке год году
""".split())
_LAST_WORD = re.compile(r"(\w+)\.?\s*$")
#: characters before a bracket read for the word it follows (a longer word is cut: still a word)
NEAR = 200


@dataclass(frozen=True)
class Marker:
    """One citation found in a text: ``text[start:end]`` is the marker, ``numbers`` what it cites (ranges
    expanded, as written, repeats kept)."""

    start: int
    end: int
    numbers: list[int]


@dataclass(frozen=True)
class Verified:
    """An answer with its citations checked.

    Attributes:
        text: the answer with unknown citations removed and the rest renumbered ``1..len(cited)``.
        cited: the original (1-based) numbers of the cited chunks, in order of first appearance; ``cited[i]`` is
            cited as ``[i + 1]`` in ``text``.
        removed: citation numbers removed because no chunk had them.
    """

    text: str
    cited: list[int]
    removed: int


def citation_numbers(group: str) -> list[int]:
    """The numbers of one citation's group 1 (``"1, 3-5"`` -> [1, 3, 4, 5]; ranges over ``MAX_RANGE`` are not
    expanded)."""
    out: list[int] = []
    for part in re.split(r"\s*(?:,|，|;|、|and)\s*", group):
        span = _RANGE_RE.fullmatch(part.strip())
        if span:
            lo, hi = int(span.group(1)), int(span.group(2))
            if lo <= hi and hi - lo <= MAX_RANGE:
                out.extend(range(lo, hi + 1))
                continue
            out.extend([lo, hi])
        elif part.strip().isdigit():
            out.append(int(part))
    return out


def code_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every fenced code block (to its closing fence, or the end of the text) and inline code
    span (a run of backticks to the next run of the same length, CommonMark's rule) in Markdown ``text``."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        fence = _FENCE_RE.search(text, pos)
        end = fence.start() if fence else len(text)
        spans += _inline_code(text, pos, end)
        if fence is None:
            return spans
        close = re.compile(rf"^ {{0,3}}{re.escape(fence.group(1)[0])}{{{len(fence.group(1))},}}[ \t]*$",
                           re.MULTILINE).search(text, text.find("\n", fence.end()) + 1 or len(text))
        stop = close.end() if close and text.find("\n", fence.end()) != -1 else len(text)
        spans.append((fence.start(), stop))
        pos = stop


def _inline_code(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        opening = _TICKS_RE.search(text, pos, end)
        if opening is None:
            return spans
        closing = next((m for m in _TICKS_RE.finditer(text, opening.end(), end)
                        if len(m.group()) == len(opening.group())), None)
        if closing is None:
            pos = opening.end()
            continue
        spans.append((opening.start(), closing.end()))
        pos = closing.end()


def find_citations(text: str) -> list[Marker]:
    """The citations in ``text``, in order: bracketed numbers in citation position outside code (module
    docstring)."""
    code = code_spans(text)
    indexed = {m.group(1) for m in _INDEXED.finditer(_blank(text, code))}
    markers: list[Marker] = []
    for match in CITATION_RE.finditer(text):
        if any(a <= match.start() < b for a, b in code):
            continue
        if all(n in YEARS for n in citation_numbers(match.group(1))):
            continue  # a year or a span of years (module docstring)
        chained = bool(markers) and markers[-1].end == match.start()
        if not chained and not _citation_position(text, match.start(), indexed):
            continue
        if _CODE_AFTER.match(text, match.end()) and not CITATION_RE.match(text, match.end()):
            if chained:
                markers.pop()
            continue
        markers.append(Marker(match.start(), match.end(), citation_numbers(match.group(1))))
    return markers


def without_code(text: str) -> str:
    """``text`` with its code (``code_spans``) replaced by spaces: what it says in prose, at the same positions."""
    return _blank(text, code_spans(text))


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with the given spans replaced by spaces (same length)."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _citation_position(text: str, start: int, indexed: set[str]) -> bool:
    if start == 0:
        return True
    before = text[start - 1]
    if before in ")]}>`'\"":
        return False
    word = _WORD_BEFORE.search(text, max(0, start - NEAR), start)  # a window: from 0 every marker rescans the text
    if word is None or before.isspace():
        return True  # after a space, punctuation, or a letter of a script without ASCII words (CJK, Cyrillic…)
    name = word.group()
    if name.endswith(".") and name[:-1].isalpha() and len(name) > 2:
        return True  # after a sentence's full stop: "… the capital.[1]", "Brewing Co.[2]"
    code_like = (len(name) < 2 or not name.isalpha() or name in indexed
                 or any(a.islower() and b.isupper() for a, b in zip(name, name[1:])))
    return not code_like


def replace_citations(text: str, replace: Callable[[Marker], str]) -> str:
    """``text`` with each citation (``find_citations``) replaced by ``replace(marker)``."""
    out: list[str] = []
    pos = 0
    for marker in find_citations(text):
        out += [text[pos:marker.start], replace(marker)]
        pos = marker.end
    return "".join(out) + text[pos:]


def cited_numbers(text: str) -> list[int]:
    """Citation numbers in ``text``, in order of appearance, repeats kept."""
    return [n for marker in find_citations(text) for n in marker.numbers]


#: a sentence's closing punctuation (Latin, CJK, Devanagari), where a citation goes before
_STOPS = re.compile(r"\s*[.!?。！？…।॥]+$")
#: a sentence wrapped whole in quotes, emphasis or brackets ('"…notebooks."', "**…notebooks.**"): the number goes after
_WRAPPED = re.compile(r"^\s*(\*{1,3}|_{1,3}|[\"“‘'(])(?=\S).*?\S(\*{1,3}|_{1,3}|[\"”’')])$", re.DOTALL)
_PAIRS = {"\"": "\"", "“": "”", "‘": "’", "'": "'", "(": ")"}


def cite_sentence(sentence: str, numbers: Sequence[int]) -> str:
    """``sentence`` with citations of those ``numbers`` it does not cite yet: before its closing punctuation, or
    after the quotes or emphasis that wrap it whole; its trailing whitespace (a Markdown hard break, the space before
    the next sentence) kept. The one placement rule of every step that adds a number to a sentence (``support``,
    ``filler``)."""
    new = [n for n in dict.fromkeys(numbers) if n not in cited_numbers(sentence)]
    if not new:
        return sentence
    marks = "".join(f"[{n}]" for n in new)
    body = sentence.rstrip()
    trail = sentence[len(body):]
    wrapped = _WRAPPED.match(body)
    if wrapped and (wrapped[1] == wrapped[2] or _PAIRS.get(wrapped[1]) == wrapped[2]):
        return f"{body} {marks}{trail}"
    inner = body.rstrip("*_\"”’')")
    end = body[len(inner):]
    stops = _STOPS.search(inner)
    if stops is None:
        return f"{inner} {marks}{end}{trail}"
    return f"{inner[:stops.start()]} {marks}{inner[stops.start():].lstrip()}{end}{trail}"


def folded(text: str) -> str:
    """``text`` for comparing with other text: whitespace runs made one space, case folded."""
    return " ".join(text.split()).casefold()


def strip_citations(text: str) -> str:
    """``text`` without its citation markers, whitespace collapsed."""
    return " ".join(replace_citations(text, lambda marker: " ").split())


def verify_citations(text: str, count: int) -> Verified:
    """Check and renumber the ``[n]`` citations in ``text`` against ``count`` numbered chunks (1..count).

    Returns:
        ``Verified``; ``removed`` counts each invalid number once per occurrence.
    """
    order: dict[int, int] = {}
    removed = 0

    def replace(marker: Marker) -> str:
        nonlocal removed
        if not any(1 <= n <= count for n in marker.numbers) and value_context(text, marker.start):
            return text[marker.start:marker.end]  # "step [10]": a value, not a source
        valid: list[int] = []
        for n in marker.numbers:
            if 1 <= n <= count:
                if n not in valid:
                    valid.append(n)
            else:
                removed += 1
        for n in valid:
            order.setdefault(n, len(order) + 1)
        return "".join(f"[{order[n]}]" for n in valid)

    new = replace_citations(text, replace)
    if removed:
        code = code_spans(new)
        new = _outside(new, code, lambda part: re.sub(r"[ \t]{2,}", " ",
                                                      re.sub(r"[ \t]+([.,;:!?。，])", r"\1", part)))
    return Verified(new.strip(), list(order), removed)


def value_context(text: str, start: int) -> bool:
    """True when the bracket at ``start`` follows a word that takes a number (``VALUE_WORDS``: "step [10]")."""
    word = _LAST_WORD.search(text, max(0, start - NEAR), start)
    return word is not None and word.group(1).lower() in VALUE_WORDS


def _outside(text: str, spans: Sequence[tuple[int, int]], fix: Callable[[str], str]) -> str:
    """Apply ``fix`` to the parts of ``text`` outside ``spans`` ("claim [7]." became "claim ." — close the gap,
    but never inside code)."""
    out: list[str] = []
    pos = 0
    for a, b in spans:
        out += [fix(text[pos:a]), text[a:b]]
        pos = b
    return "".join(out) + fix(text[pos:])


def cited_sources(verified: Verified, hits: Sequence[Hit]) -> list[Source]:
    """Sources for the renumbered citations (``hits[n - 1]`` was shown to the model as ``[n]``)."""
    return [Source(i, hits[n - 1].chunk, hits[n - 1].collection, hits[n - 1].also_in)
            for i, n in enumerate(verified.cited, start=1)]


def consulted_sources(hits: Sequence[Hit]) -> list[Source]:
    """All chunks given to the model, numbered as in the prompt (used when an answer cites nothing)."""
    return [Source(i, h.chunk, h.collection, h.also_in) for i, h in enumerate(hits, start=1)]


def location(chunk: Chunk | OtherSource) -> str:
    """File or URL of a chunk (or of another copy of its text) with the place in it, as a citation shows it:
    "guide.md › Install › Linux", "deck.pptx, slide 4", "book.xlsx, sheet Prices", "paper.pdf, p. 3"."""
    where = place(chunk)
    if not where:
        return chunk.source
    return f"{chunk.source} {where}" if where.startswith(SECTION_MARK) else f"{chunk.source}, {where}"


SECTION_MARK = "›"


def place(chunk: Chunk | OtherSource) -> str:
    """Where in its document a chunk is: "› Install › Linux" (its heading path), "slide 4", "sheet Prices, rows 2–9",
    "p. 3", or "" when the document has no places (a plain text file, a web page without headings)."""
    metadata = getattr(chunk, "metadata", None) or {}
    kind = metadata.get("format")
    if kind == "pptx" and chunk.page is not None:
        return f"slide {chunk.page}"
    if kind == "xlsx" and metadata.get("sheet"):
        rows = metadata.get("rows") or []
        span = "" if len(rows) != 2 else f", row {rows[0]}" if rows[0] == rows[1] else f", rows {rows[0]}–{rows[1]}"
        return f"sheet {metadata['sheet']}{span}"
    section = metadata.get("section")
    if isinstance(section, list) and section:
        heading = f" {SECTION_MARK} ".join(str(title) for title in section)
        return f"{SECTION_MARK} {heading}" + (f", p. {chunk.page}" if chunk.page is not None else "")
    return f"p. {chunk.page}" if chunk.page is not None else ""


def cites_any(text: str) -> bool:
    """True when ``text`` holds at least one citation."""
    return bool(find_citations(text))
