"""Sources to load: files, folders and glob patterns expanded to files, each turned into a ``SourceItem``.

A ``SourceItem`` is what the load pipeline consumes, whatever the source: its id (absolute POSIX path or final URL),
its version hash (content plus the split settings) and a ``load()`` that returns its Documents. URL sources are made
by ``deepsearcher.ingest.web`` from the crawler's pages.
"""

from __future__ import annotations

import functools
import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from deepsearcher.errors import IngestError
from deepsearcher.ingest.ids import file_hash
from deepsearcher.protocols import Loader
from deepsearcher.settings import LoaderSettings
from deepsearcher.types import Document

URL_PREFIXES = ("http://", "https://")


@dataclass
class SourceItem:
    """One source to load: its id, its version hash, and how to get its Documents.

    Attributes:
        source: absolute POSIX path or URL (the ``source`` stored with each chunk).
        version: hash of the content plus split settings; equal version = nothing to do.
        load: returns the Documents or raises ``SkipSource``.
    """

    source: str
    version: str
    load: Callable[[], list[Document]]


def is_url(text: str) -> bool:
    """True for an http(s) URL (the other inputs are paths or glob patterns)."""
    return text.startswith(URL_PREFIXES)


def expand_paths(inputs: Sequence[str], options: LoaderSettings) -> list[Path]:
    """Expand files, folders (recursive) and glob patterns into a sorted, de-duplicated list of files.

    Folders honour ``options.include`` / ``options.exclude`` glob patterns (matched against the path relative to the
    folder and against the file name).

    Raises:
        IngestError: a path does not exist or a pattern matches nothing (the message names every such input).
    """
    files: list[Path] = []
    missing: list[str] = []
    not_regular: list[str] = []
    for raw in inputs:
        path = Path(raw).expanduser()
        if any(ch in raw for ch in "*?["):
            matches = [Path(m) for m in glob.glob(str(path), recursive=True)]
            found = [m for m in matches if m.is_file()]
            found += [f for m in matches if m.is_dir() for f in _walk(m, options)]
            if not found:
                missing.append(raw)
            files.extend(found)
        elif path.is_dir():
            files.extend(_walk(path, options))
        elif path.is_file():
            files.append(path)
        elif os.path.lexists(path):
            not_regular.append(raw)
        else:
            missing.append(raw)
    if missing or not_regular:
        problems = ([f"not found: {', '.join(missing)}"] if missing else []) + (
            [f"not a regular file or folder (a device, pipe, or broken/looping link): {', '.join(not_regular)}"]
            if not_regular else [])
        raise IngestError("; ".join(problems), hint="check the paths; nothing was written")
    seen: dict[str, Path] = {}
    for f in files:
        seen.setdefault(f.resolve().as_posix(), f)
    return [seen[k] for k in sorted(seen)]


def _walk(folder: Path, options: LoaderSettings) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder)
        if any(_match(rel, pat) for pat in options.exclude):
            continue
        if options.include and not any(_match(rel, pat) for pat in options.include):
            continue
        yield path


def _match(rel: Path, pattern: str) -> bool:
    # PurePath.match matches from the right; "**/" prefixes also match top-level files
    return rel.match(pattern) or rel.match(pattern.removeprefix("**/")) or Path(rel.name).match(pattern)


def file_items(files: Iterable[Path], loader: Loader, split_signature: str) -> Iterator[SourceItem]:
    """SourceItems for local files; the version is the file's hash plus the loader/splitter settings."""
    for path in files:
        source = path.resolve().as_posix()
        yield SourceItem(source=source, version=file_hash(path, extra=split_signature),
                         load=functools.partial(loader.load, path))
