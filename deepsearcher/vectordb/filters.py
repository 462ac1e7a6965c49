"""A ``SearchFilter`` compiled to a Milvus boolean expression.

Outside text enters the expression only as a string literal built by ``quote_literal`` (and, in a ``LIKE`` pattern,
with ``%``/``_`` escaped first); front-matter keys are checked plain names (``SearchFilter``) and quoted the same way;
dates are numbers we compute. Filter templates (``filter_params``) would keep values out of the text altogether, but
Milvus Lite 3.2 refuses them ("unexpected character '{'"), so literals are escaped instead.

A path glob becomes a ``LIKE`` pattern that admits a superset (``*`` becomes ``%``, which crosses ``/``); the exact
glob is checked on the hits (``SearchFilter.admits``). Milvus cannot put a JSON path on the left of ``in``, so a list
of values becomes ``==`` joined by ``or``.
"""

from __future__ import annotations

import re

from deepsearcher.filters import FILE_TYPES, SearchFilter

_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_LIKE_ESCAPES = str.maketrans({"\\": "\\\\", "%": "\\%", "_": "\\_"})
_NUMBER = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?")


def quote_literal(value: str) -> str:
    """A Milvus string literal holding exactly ``value``: the grammar takes any character inside double quotes except
    ``"``, ``\\`` and line breaks, which are escaped (JSON-style ``\\uXXXX`` escapes are refused by Milvus Lite)."""
    return '"' + value.translate(_LITERAL_ESCAPES) + '"'


def like_pattern(glob: str) -> str:
    """The ``LIKE`` pattern (unquoted) admitting every source ``glob`` matches: wildcards to ``%``/``_``, literal
    ``%``, ``_`` and ``\\`` escaped; a relative glob may start anywhere."""
    out, i = [], 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            out.append("%")
            while i + 1 < len(glob) and glob[i + 1] == "*":
                i += 1
        elif char == "?":
            out.append("_")
        elif char == "[" and "]" in glob[i + 1:]:
            out.append("_")
            i = glob.index("]", i + 1)
        else:
            out.append(char.translate(_LIKE_ESCAPES))
        i += 1
    anchored = glob.startswith("/") or "://" in glob
    return ("" if anchored else "%") + "".join(out)


def compile_filter(where: SearchFilter | None, *, infix_like: bool = True) -> str:
    """The Milvus expression for ``where`` ("" for no filter): its conditions joined by ``and``.

    ``infix_like`` False (Milvus before 2.4, whose ``LIKE`` takes a prefix pattern only): path globs and file
    extensions are left to the caller's exact check on the hits (``pushed_down`` says whether it must fetch more).
    """
    if where is None or where.empty:
        return ""
    parts = []
    if where.paths and infix_like:
        parts.append(_any(f"source like {quote_literal(like_pattern(g))}" for g in where.paths))
    if where.types:
        parts.append(_any(_type_condition(kind, infix_like) for kind in where.types))
    low, high = where.date_bounds()
    if low is not None:
        parts.append(f'metadata["date"] >= {low!r}')
    if high is not None:
        parts.append(f'metadata["date"] <= {high!r}')
    for key, value in where.meta.items():
        field = f'metadata["front_matter"][{quote_literal(key)}]'
        parts.append(_any(f"{field} == {literal}" for literal in _value_literals(value)))
    return " and ".join(parts)


def missing_dates() -> str:
    """The expression for chunks with no stored date (loaded before dates were stored)."""
    return 'not exists metadata["date"]'


def pushed_down(where: SearchFilter | None, *, infix_like: bool) -> bool:
    """True when ``compile_filter`` says all of ``where`` (the store returns only chunks it admits)."""
    return where is None or infix_like or not (where.paths or where.types)


def _type_condition(kind: str, infix_like: bool = True) -> str:
    formats, extensions = FILE_TYPES[kind]
    terms = [f'metadata["format"] == {quote_literal(f)}' for f in formats]
    if infix_like:  # a file loaded without a format (by markitdown) is known by its extension
        terms += [f"source like {quote_literal('%' + e.translate(_LIKE_ESCAPES))}" for e in extensions]
    return "(" + " or ".join(terms) + ")"


def _value_literals(value: str) -> list[str]:
    """``value`` as a string literal, plus the number or boolean it spells (front matter keeps YAML's types)."""
    literals = [quote_literal(value)]
    if value in ("true", "false") or _NUMBER.fullmatch(value):
        literals.append(value)
    return literals


def _any(terms: object) -> str:
    items = list(terms)  # type: ignore[call-overload]
    return items[0] if len(items) == 1 else "(" + " or ".join(items) + ")"
