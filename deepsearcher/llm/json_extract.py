"""Find the JSON value a model meant as its answer, wherever it put it, and validate it against the step's schema.

Small models wrap their JSON in prose that itself holds brackets ("Chunks [2] and [4] answer the question.
{"relevant": [2, 4]}"), so the first ``[`` or ``{`` is not the answer. Every candidate is collected instead:

1. the whole reply, when it is JSON;
2. the contents of each code fence;
3. every balanced top-level ``{…}`` / ``[…]`` in the text (string-aware), and an unbalanced one that runs to the end
   (a reply cut off mid-JSON);

each parsed strictly, else repaired by ``json-repair`` (single quotes, Python literals, trailing commas, a missing
tail), with full-width punctuation normalised. ``parse_reply`` keeps the candidates that validate against the schema
and prefers, in order: a JSON object (the form every prompt asks for) over a bare list or string, one that parsed
without repair, and the last one in the text (models reason first and answer last). So ``[2]`` in the prose above
loses to the object after it.

List items given as one-field objects (``{"sub_queries": [{"query": "x"}]}``, ``{"relevant": [{"id": 2}]}``) are
unwrapped by the schemas with ``unwrap_items``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

from deepsearcher.errors import LLMOutputError

T = TypeVar("T", bound=BaseModel)

_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_FULL_WIDTH = str.maketrans({
    "\uff0c": ",", "\u3001": ",", "\uff1a": ":", "\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
    "\uff3b": "[", "\uff3d": "]", "\uff5b": "{", "\uff5d": "}", "\u300c": '"', "\u300d": '"', "\uff02": '"',
    "\uff07": "'",
})
#: keys whose value is taken from a multi-field list item (``{"id": 2, "reason": "…"}`` -> 2), in this order
ITEM_KEYS = ("query", "sub_query", "question", "id", "chunk", "number", "index", "n", "name", "collection", "text",
             "value")


@dataclass(frozen=True)
class Candidate:
    """One JSON value found in a reply.

    Attributes:
        value: the parsed value.
        strict: parsed by ``json.loads`` as written (no repair).
        position: where it starts in the reply (later = preferred).
        closed: its brackets balance (False: it runs to the end of the reply, so a cut-off reply ends inside it).
        open_string: it runs to the end of the reply inside a string ("follow_up": "What is the capital of): that
            string was not finished, whatever the finish reason says.
    """

    value: Any
    strict: bool
    position: int
    closed: bool = True
    open_string: bool = False


def candidates(text: str) -> list[Candidate]:
    """Every JSON value in ``text`` (reasoning already removed), in the order described in the module docstring."""
    out: list[Candidate] = []
    for variant in dict.fromkeys((text, text.translate(_FULL_WIDTH))):
        stripped = variant.strip()
        try:
            out.append(Candidate(json.loads(stripped), True, len(variant)))  # the whole reply wins ties on position
            continue
        except json.JSONDecodeError:
            pass
        for fence in _FENCE_RE.finditer(variant):
            out.extend(_parsed(fence.group(1), fence.start(1), closed=True))
        for start, end, closed, open_string in spans(variant):
            out.extend(_parsed(variant[start:end], start, closed, open_string))
    return out


def _parsed(raw: str, position: int, closed: bool, open_string: bool = False) -> list[Candidate]:
    try:
        return [Candidate(json.loads(raw), True, position, closed)]
    except json.JSONDecodeError:
        pass
    try:
        value = json_repair.loads(raw)
    except Exception:  # json-repair raises assorted errors on hopeless input: not a candidate
        return []
    if value == "" or value is None:
        return []
    return [Candidate(value, False, position, closed, open_string)]


def spans(text: str) -> list[tuple[int, int, bool, bool]]:
    """``(start, end, balanced, in_string)`` of every top-level ``{…}`` / ``[…]`` in ``text``; a value still open at
    the end of the text ends there (``balanced`` False; ``in_string`` when it ends inside a string). Strings
    (double-quoted, or single-quoted after a structural character) are skipped, so brackets inside them do not
    count."""
    found: list[tuple[int, int, bool, bool]] = []
    i = 0
    while i < len(text):
        if text[i] not in "[{":
            i += 1
            continue
        end, in_string = _close(text, i)
        if end is None:
            found.append((i, len(text), False, in_string))
            break
        if end < 0:  # a stray closing bracket: this opening starts nothing
            i += 1
            continue
        found.append((i, end, True, False))
        i = end
    return found


def _close(text: str, start: int) -> tuple[int | None, bool]:
    """End (exclusive) of the value opened at ``start`` (None when it stays open; -1 on a mismatched bracket), and
    whether the text ended inside a string."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'" and (ch == '"' or _opens_single_quote(text, i)):
            quote = ch
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack or stack[-1] != ch:
                return -1, False
            stack.pop()
            if not stack:
                return i + 1, False
    return None, quote is not None


def _opens_single_quote(text: str, i: int) -> bool:
    """A ``'`` starts a string only after a structural character (so "it's" inside prose does not)."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "[{,:"


def _preference(c: Candidate) -> tuple[bool, bool, int]:
    return isinstance(c.value, dict), c.strict, c.position


def extract_json(text: str) -> Any:
    """The JSON value a reply most likely meant (no schema: see ``parse_reply`` for the schema-aware choice).

    Raises:
        LLMOutputError: no JSON object or array in the reply (retryable).
    """
    found = candidates(text)
    if not found:
        raise LLMOutputError("the reply contains no JSON object or array", raw=text,
                             hint="the model should answer with JSON only")
    return max(found, key=_preference).value


def drop_last_leaf(value: Any) -> Any:
    """``value`` without the last thing written: the last item of the last list, or the last key of an object
    (recursively). What a reply cut at its token limit ended inside cannot be trusted ("receipt upload dead")."""
    if isinstance(value, dict) and value:
        key = list(value)[-1]
        inner = value[key]
        if isinstance(inner, (list, dict)) and inner:
            return {**value, key: drop_last_leaf(inner)}
        return {k: v for k, v in value.items() if k != key}
    if isinstance(value, list) and value:
        last = value[-1]
        if isinstance(last, (list, dict)) and last:
            return [*value[:-1], drop_last_leaf(last)]
        return value[:-1]
    return value


def parse_reply(text: str, schema: type[T], *, cut_off: bool = False) -> T:
    """The candidate of ``text`` that validates as ``schema``, by the preference in the module docstring.

    Args:
        text: the reply with reasoning removed.
        schema: the step's reply model.
        cut_off: the reply stopped at its token limit: a candidate that runs to the end of the reply loses its last
            item (``drop_last_leaf``) before it is validated. One that ends inside a string loses it whatever the
            finish reason (a server that says "stop", or none, for a reply cut mid-string).

    Raises:
        LLMOutputError: no JSON, or no candidate matches the schema (the message lists the validation errors of the
            most likely one).
    """
    found = candidates(text)
    if not found:
        raise LLMOutputError("the reply contains no JSON object or array", raw=text,
                             hint="the model should answer with JSON only")
    valid: list[tuple[Candidate, T]] = []
    first_error: ValidationError | None = None
    for cand in sorted(found, key=_preference, reverse=True):
        value = drop_last_leaf(cand.value) if (cut_off and not cand.closed) or cand.open_string else cand.value
        try:
            valid.append((cand, schema.model_validate(value)))
        except ValidationError as exc:
            first_error = first_error or exc
    if valid:
        return valid[0][1]
    assert first_error is not None
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in first_error.errors()[:5])
    raise LLMOutputError(f"the JSON does not match the expected shape: {problems}", raw=text) from first_error


def unwrap_items(value: Any) -> Any:
    """A list whose items are objects becomes the list of their values: a one-field object gives its only value,
    a larger one the value of the first key in ``ITEM_KEYS`` (``[{"query": "x"}]`` -> ``["x"]``,
    ``[{"id": 2, "reason": "…"}]`` -> ``[2]``). Anything else is returned unchanged. For ``mode="before"``
    validators of list fields."""
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for item in value:
        if isinstance(item, dict) and len(item) == 1:
            out.append(next(iter(item.values())))
        elif isinstance(item, dict):
            key = next((k for k in ITEM_KEYS if k in item), None)
            out.append(item[key] if key is not None else item)
        else:
            out.append(item)
    return out
