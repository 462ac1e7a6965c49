"""Where in a document a chunk is: the heading path above it ("Install › Linux").

A loader that knows a document's headings (Markdown, HTML, DOCX, EPUB) puts them in ``metadata["headings"]`` as
``[level, title]`` pairs in document order; the splitter finds each heading's line in the (normalised) text and gives
every chunk ``metadata["section"]``, the titles of the headings above the part of the chunk that holds most of its
text, outermost first. The
heading list itself is not stored with the chunks. A heading whose line is not found in the text (a loader that
dropped it, a title changed by normalisation beyond recognition) is left out, never guessed.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Sequence

HEADINGS = "headings"
SECTION = "section"
#: a table's Document: the source row of each text line (0 = a line that is no row), turned into each chunk's ROWS
LINE_ROWS = "line_rows"
ROWS = "rows"


def markdown_headings(text: str) -> list[list[Any]]:
    """``[level, title]`` of every heading (ATX ``#`` and setext) of a Markdown text, in order, as markdown-it parses
    it (a ``#`` line in a code fence is no heading)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            title = " ".join(tokens[i + 1].content.split())
            if title:
                out.append([int(token.tag[1:]), title])
    return out


def heading_offsets(text: str, headings: Sequence[Sequence[Any]]) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of each heading found as a line of ``text`` (after ``#`` marks, if any), searched
    in order from the previous one; headings not found are skipped."""
    from deepsearcher.ingest.normalize import normalize_text

    out, cursor = [], 0
    for level, title in headings:
        words = normalize_text(str(title)).split()
        if not words:
            continue
        line = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+)?" + r"\s+".join(map(re.escape, words)) + r"[ \t#]*$")
        found = line.search(text, cursor)
        if found:
            out.append((found.start(), int(level), " ".join(words)))
            cursor = found.end()
    return out


def section_paths(text: str, headings: Sequence[Sequence[Any]], pieces: Sequence[str]) -> list[list[str]]:
    """The heading path of each piece (the splitter's chunks of ``text``, in order): the path of the section that
    holds most of the piece's characters (a piece that ends one section and starts the next belongs to the one it
    says more of)."""
    marks = heading_offsets(text, headings)
    paths, cursor = [], 0
    for piece in pieces:
        start = text.find(piece[:200], cursor)
        start = cursor if start < 0 else start
        cursor = start + 1
        end = start + len(piece)
        inside = [offset for offset, _, _ in marks if start < offset < end]
        bounds = [start, *inside, end]
        widest = max(range(len(bounds) - 1), key=lambda i: bounds[i + 1] - bounds[i])
        paths.append(path_at(marks, bounds[widest]))
    return paths


def path_at(marks: Sequence[tuple[int, int, str]], offset: int) -> list[str]:
    """The titles of the headings in force at ``offset`` (each heading closes those of its level and below)."""
    stack: list[tuple[int, str]] = []
    for at, level, title in marks:
        if at > offset:
            break
        stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
    return [t for _, t in stack]


def row_ranges(text: str, line_rows: Sequence[int], pieces: Sequence[str]) -> list[list[int]]:
    """``[first, last]`` source rows of each piece (the rows its lines come from; ``[]`` when it holds none)."""
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    out, cursor = [], 0
    for piece in pieces:
        start = text.find(piece[:200], cursor)
        start = cursor if start < 0 else start
        cursor = start + 1
        first, last = bisect.bisect_right(starts, start) - 1, bisect.bisect_right(starts, start + len(piece) - 1) - 1
        rows = [row for row in line_rows[first:last + 1] if row]
        out.append([rows[0], rows[-1]] if rows else [])
    return out
