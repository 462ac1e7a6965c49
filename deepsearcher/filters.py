"""Metadata filters on retrieval: which chunks a search may return (source path globs, file types, a document-date
range, front-matter keys).

The filter is typed here and compiled to the store's own filter language by the store
(``deepsearcher.vectordb.filters.compile_filter`` for Milvus), so outside text (a glob, a front-matter value) only
ever becomes an escaped literal, never expression syntax. ``SearchFilter.admits`` is the same rule in Python: the
exact check applied to every hit (a path glob's ``*`` stays within one folder, which SQL ``LIKE`` cannot say) and
the whole rule for stores without a filter language.

Dates: ``metadata["date"]`` of a chunk is the document's own date where the file states one (a Markdown front matter
``date``), else the file's modification time, in seconds since the epoch (UTC); ``metadata["mtime"]`` is the
modification time. Chunks loaded before deepsearcher stored dates have neither and never match a date range.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from deepsearcher.types import Chunk

#: file type -> (the loaders' ``metadata["format"]`` values, file name extensions)
FILE_TYPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pdf": (("pdf",), (".pdf",)),
    "markdown": (("markdown",), (".md", ".markdown")),
    "html": (("html",), (".html", ".htm")),
    "docx": (("docx",), (".docx",)),
    "pptx": (("pptx",), (".pptx",)),
    "xlsx": (("xlsx",), (".xlsx",)),
    "epub": (("epub",), (".epub",)),
    "text": (("text",), (".txt",)),
    "json": (("json",), (".json", ".jsonl")),
}
TYPE_ALIASES = {"md": "markdown", "htm": "html", "txt": "text", "jsonl": "json"}
_META_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


class SearchFilter(BaseModel):
    """Which chunks a search may return; every given condition must hold (within one condition, any value).

    Attributes:
        paths: source path globs (``contracts/2025/**``, ``*.pdf``): ``**`` spans folders, ``*`` and ``?`` stay
            within one; a glob not starting with ``/`` (or a URL scheme) matches the end of the path.
        types: file types (``pdf``, ``md``, ``docx``, ``pptx``, ``xlsx``, ``html``, ``epub``, ``txt``, ``json``).
        since: documents dated on or after this day (UTC).
        until: documents dated on or before this day (UTC).
        meta: front-matter ``key -> value`` pairs (compared as text; ``draft=false`` matches a YAML ``false``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: tuple[Annotated[str, StringConstraints(max_length=1000)], ...] = Field(
        default=(), max_length=50, description="source path globs, e.g. contracts/2025/**")
    types: tuple[str, ...] = Field(default=(), max_length=20, description="file types, e.g. pdf, md, docx")
    since: dt.date | None = Field(default=None, description="document date on or after (YYYY-MM-DD)")
    until: dt.date | None = Field(default=None, description="document date on or before (YYYY-MM-DD)")
    meta: dict[str, Annotated[str, StringConstraints(max_length=1000)]] = Field(
        default_factory=dict, max_length=20, description="front-matter key -> value")

    @field_validator("paths")
    @classmethod
    def _check_paths(cls, paths: tuple[str, ...]) -> tuple[str, ...]:
        for glob in paths:
            if not glob.strip() or "\x00" in glob:
                raise ValueError(f"empty or NUL path glob {glob!r}: give a glob such as 'contracts/2025/**'")
        return tuple(_plain_glob(glob) for glob in paths)

    @field_validator("types")
    @classmethod
    def _check_types(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for kind in types:
            name = TYPE_ALIASES.get(kind.strip().lower().lstrip("."), kind.strip().lower().lstrip("."))
            if name not in FILE_TYPES:
                raise ValueError(f"unknown file type {kind!r}: use one of "
                                 f"{', '.join(sorted({*FILE_TYPES, *TYPE_ALIASES}))}")
            out.append(name)
        return tuple(out)

    @field_validator("meta")
    @classmethod
    def _check_meta(cls, meta: dict[str, str]) -> dict[str, str]:
        for key in meta:
            if not _META_KEY.fullmatch(key):
                raise ValueError(f"front-matter key {key!r} is not a plain name (letters, digits, _ . -, up to 64)")
        return meta

    @model_validator(mode="after")
    def _check_range(self) -> "SearchFilter":
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}, so no document can match: "
                             "swap the two days")
        return self

    @property
    def empty(self) -> bool:
        return not (self.paths or self.types or self.since or self.until or self.meta)

    @property
    def dated(self) -> bool:
        """The filter has a date range (chunks without a date never match it)."""
        return self.since is not None or self.until is not None

    def date_bounds(self) -> tuple[float | None, float | None]:
        """``(lowest, highest)`` epoch seconds admitted (``until`` includes its whole day), None = open."""
        low = _epoch(self.since) if self.since else None
        high = _epoch(self.until + dt.timedelta(days=1)) - 0.001 if self.until else None
        return low, high

    def admits(self, chunk: Chunk) -> bool:
        """The filter in Python: True when ``chunk`` meets every condition."""
        meta = chunk.metadata or {}
        if self.paths and not any(path_matches(glob, chunk.source) for glob in self.paths):
            return False
        if self.types and not any(_is_type(kind, chunk.source, meta) for kind in self.types):
            return False
        if self.dated and not _in_range(meta.get("date"), *self.date_bounds()):
            return False
        front = meta.get("front_matter") or {}
        return all(key in front and meta_text(front[key]) == value for key, value in self.meta.items())

    def describe(self) -> str:
        """The filter in words, for notices and the report ("path contracts/2025/**, type pdf, since 2025-01-01")."""
        parts = [*(f"path {p}" for p in self.paths), *(f"type {t}" for t in self.types)]
        parts += [f"since {self.since}"] if self.since else []
        parts += [f"until {self.until}"] if self.until else []
        parts += [f"{k}={v}" for k, v in self.meta.items()]
        return ", ".join(parts)


def parse_meta(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["key=value", ...]`` (the CLI's ``--meta``) as a mapping.

    Raises:
        ValueError: a pair without ``=``.
    """
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--meta {pair!r} is not key=value (e.g. --meta status=final)")
        out[key.strip()] = value.strip()
    return out


def _plain_glob(glob: str) -> str:
    """A glob as the user meant it: a leading ``./`` (the current folder, as a shell completes it) dropped, since
    a relative glob already matches the end of a path; a trailing ``/`` (a folder) as everything below it."""
    while glob.startswith("./"):
        glob = glob[2:]
    if glob.endswith("/") and glob.strip("/"):
        glob += "**"
    return glob or "**"


def meta_text(value: Any) -> str:
    """A front-matter value as the text a filter compares with (YAML booleans as ``true``/``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def path_matches(glob: str, source: str) -> bool:
    """True when ``source`` (an absolute POSIX path or URL) matches ``glob``; a relative glob matches any tail of
    whole path segments (``contracts/**`` matches ``/home/a/contracts/x.pdf``)."""
    pattern = glob_regex(glob)
    if glob.startswith("/") or "://" in glob:
        return pattern.fullmatch(source) is not None
    parts = source.split("/")
    return any(pattern.fullmatch("/".join(parts[i:])) for i in range(len(parts)))


def glob_regex(glob: str) -> re.Pattern[str]:
    """The regular expression of a path glob: ``**`` any characters, ``*`` any but ``/``, ``?`` one but ``/``,
    ``[...]`` a set (as ``fnmatch``)."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1:]:
            end = glob.index("]", i + 1)
            out.append(fnmatch.translate(glob[i:end + 1])[4:-3])  # "(?s:[...])\Z" -> "[...]"
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _is_type(kind: str, source: str, meta: dict[str, Any]) -> bool:
    formats, extensions = FILE_TYPES[kind]
    return meta.get("format") in formats or source.lower().endswith(extensions)


def _in_range(value: Any, low: float | None, high: float | None) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def _epoch(day: dt.date) -> float:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()
