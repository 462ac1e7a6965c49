"""JSON and JSONL: one Document per record, text and records found by a path, dropped records counted by reason.

Path syntax (``text_path``): dot-separated keys; ``[]`` after a key (or alone, for a top-level array) means "each
element". Everything up to the last ``[]`` that is followed by more keys names the records; the rest names the text
inside a record. Examples: ``text`` (records are the top-level array, or each JSONL line), ``data[].body``,
``response.docs[].content.body``, ``text.body`` (a nested object in each record).

A text value may be a string or a list of strings (joined with blank lines, as paragraphs); anything else drops the
record with a counted reason. When the default path finds no records and the top-level object holds exactly one
array of objects (``{"data": [...]}``, ``{"items": [...]}``), its elements are used as the records.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from deepsearcher.ingest.formats.text import decode
from deepsearcher.errors import SkipSource
from deepsearcher.types import Document

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JsonExtraction:
    """Documents from one JSON/JSONL file and the records that gave none.

    Attributes:
        documents: one Document per usable record (``metadata["record"]`` = its index).
        skipped: reason -> number of records dropped for it (e.g. ``{"text is a number": 1}``).
    """

    documents: list[Document]
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())


def extract_json(data: bytes, source: str, *, title: str = "", text_path: str = "text",
                 title_path: str | None = "title", lines: bool | None = None,
                 charset: str | None = None) -> JsonExtraction:
    """Parse JSON (one value) or JSONL (one value per line) and take each record's text at ``text_path``.

    Args:
        lines: True for JSONL, False for JSON, None to try JSON first and fall back to JSONL.
        charset: a declared charset (HTTP header); else the bytes' encoding is detected.

    Raises:
        SkipSource: invalid JSON, or no record has text (the reason names the counts and the path to set).
    """
    roots, bad_lines = _parse(decode(data, charset)[0], lines)
    record_path, inner = split_path(text_path)
    skipped: Counter[str] = Counter()
    if bad_lines:
        skipped["invalid JSON line"] += bad_lines
    # without a record path, a top-level array's elements are the records (implicit "[]")
    records = [r for root in roots for r in (_walk(root, record_path) if record_path else
                                             root if isinstance(root, list) else [root])]
    if not record_path and len(roots) == 1 and isinstance(roots[0], dict) and _get(roots[0], inner) is None:
        records = _wrapped_records(roots[0], inner) or records
    docs = []
    for index, record in enumerate(records):
        text, reason = _text_of(record, inner)
        if reason:
            skipped[reason] += 1
            continue
        rec_title = _get(record, split_path(title_path)[1]) if title_path and isinstance(record, dict) else None
        docs.append(Document(text=text, source=source, title=str(rec_title) if rec_title else f"{title}#{index}",
                             metadata={"format": "json", "record": index}))
    if skipped:
        log.info("%s: %s", source, describe_skipped(skipped, len(records)))
    if not docs:
        detail = describe_skipped(skipped, len(records)) if records else "no records found"
        raise SkipSource(f"no JSON record has text at {text_path!r} ({detail}); set loader.json_text_path")
    return JsonExtraction(documents=docs, skipped=dict(skipped))


def describe_skipped(skipped: Mapping[str, int], total: int | None = None) -> str:
    """``"2 of 4 records skipped: text is an object (1), text is a number (1)"`` (without "of N" when ``total`` is
    None)."""
    parts = ", ".join(f"{reason} ({n})" for reason, n in sorted(skipped.items()))
    count = sum(skipped.values())
    of = f" of {total}" if total is not None else ""
    return f"{count}{of} record{'s' if (total or count) != 1 else ''} skipped: {parts}"


def split_path(path: str | None) -> tuple[list[str], list[str]]:
    """Split a path into (record steps, text keys); ``[]`` steps are kept as ``"[]"``."""
    steps: list[str] = []
    for key in (path or "").split("."):
        if not key:
            continue
        name, fan = (key[:-2], True) if key.endswith("[]") else (key, False)
        steps += ([name] if name else []) + (["[]"] if fan else [])
    last = max((i for i, s in enumerate(steps) if s == "[]" and i < len(steps) - 1), default=-1)
    return steps[: last + 1], steps[last + 1:]


def _parse(text: str, lines: bool | None) -> tuple[list[Any], int]:
    if lines is not True:
        try:
            value = json.loads(text)
            return [value], 0
        except json.JSONDecodeError as exc:
            if lines is False or "\n" not in text.strip():
                raise SkipSource(f"invalid JSON ({exc.msg} at line {exc.lineno})") from exc
    values, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError:
                bad.append(number)  # one bad line must not lose the file's other records
    if not values:
        raise SkipSource(f"invalid JSON on every line (first: line {bad[0] if bad else 1})")
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" …" if len(bad) > 10 else "")
        log.debug("invalid JSON on line %s", shown)
    return values, len(bad)


def _walk(value: Any, steps: list[str]) -> list[Any]:
    if not steps:
        return [value]
    head, rest = steps[0], steps[1:]
    if head == "[]":
        return [r for item in value for r in _walk(item, rest)] if isinstance(value, list) else []
    return _walk(value[head], rest) if isinstance(value, dict) and head in value else []


def _get(value: Any, keys: list[str]) -> Any:
    for key in keys:
        if key == "[]":
            return value
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _wrapped_records(root: dict[str, Any], inner: list[str]) -> list[Any]:
    arrays = [v for v in root.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    if len(arrays) == 1 and any(_get(x, inner) is not None for x in arrays[0]):
        return arrays[0]
    return []


def _text_of(record: Any, inner: list[str]) -> tuple[str, str | None]:
    if isinstance(record, str):
        return (record, None) if record.strip() else ("", "record is an empty string")
    value = _get(record, inner) if isinstance(record, dict) else None
    if value is None:
        return "", "no text at the path" if isinstance(record, dict) else f"record is a {_kind(record)}"
    if isinstance(value, str):
        return (value, None) if value.strip() else ("", "text is empty")
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n\n".join(value), None
    return "", f"text is {'an' if _kind(value)[0] in 'aeiou' else 'a'} {_kind(value)}"


def _kind(value: Any) -> str:
    return {dict: "object", list: "list of non-strings", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)
