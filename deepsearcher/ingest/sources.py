"""Sources to load: files, folders and glob patterns expanded to files, each turned into a ``SourceItem``.

A ``SourceItem`` is what the load pipeline consumes, whatever the source: its id (absolute POSIX path or final URL),
its version hash (content plus the split settings) and a ``load()`` that returns its Documents. URL sources are made
by ``deepsearcher.ingest.web`` from the crawler's pages.

Expansion rules (``expand_paths``):

- an input that exists is taken literally, even when its name holds ``*``, ``?`` or ``[`` (``notes[1].md``);
- a folder is walked recursively without descending into linked folders (as ``pathlib.rglob`` does), filtered by
  ``loader.include`` / ``loader.exclude``;
- a glob pattern is matched with bash-like rules (``wcmatch``: ``*`` stays within a folder and skips dot files,
  ``**`` spans folders); ``**`` descends into linked folders, as Python's ``glob`` does; a folder the pattern
  matches is loaded like a folder; ``..`` after the first wildcard is refused;
- every folder is entered once per input, recognised by its (device, inode), so a link to a parent folder (``s1 ->
  .``) or a bind-mount loop ends instead of recursing forever, and each file is found once; the walk uses its own stack, so depth is bounded by
  the file system's path length (a folder 1,200 levels deep is walked like any other), never by Python's recursion
  limit;
- a folder that cannot be listed (permissions, removed meanwhile, a name too long) is reported as a skipped source
  with the reason; the rest of the load goes on;
- ``allowed(path)``, when given (the HTTP server's roots), is asked about every file found, *before* deciding that an
  input matched nothing: a file it refuses counts as not found, so an answer never tells whether a path outside the
  roots exists.

Idea of the (device, inode) check: GNU find's and ``os.walk(followlinks=True)``'s documented loop caveat; the same
rule as KWSys' "each directory symlink traversed once".
"""

from __future__ import annotations

import functools
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from deepsearcher.errors import IngestError
from deepsearcher.ingest.ids import file_hash
from deepsearcher.protocols import Loader
from deepsearcher.ingest.options import LoaderOptions
from deepsearcher.types import Document, FileResult

log = logging.getLogger(__name__)

URL_PREFIXES = ("http://", "https://")
WILDCARDS = "*?["

#: ``path -> True`` when the file may be loaded (the HTTP server's allowed roots)
PathAllowed = Callable[[Path], bool]


@dataclass
class SourceItem:
    """One source to load: its id, its version hash, and how to get its Documents.

    Attributes:
        source: absolute POSIX path or URL (the ``source`` stored with each chunk).
        version: hash of the content plus split settings; equal version = nothing to do.
        load: returns the Documents or raises ``SkipSource``.
        error: why the source cannot be loaded, found before loading (unreadable, removed meanwhile); the pipeline
            lists it as skipped with this reason. "" = none.
        stream: for a large plain-text file, returns None or a function giving its text in pieces
            (``BuiltinLoader.stream``): the pipeline then never holds the whole file. None = always ``load``.
    """

    source: str
    version: str
    load: Callable[[], list[Document]]
    error: str = ""
    stream: Callable[[], Callable[[], Iterator[Document]] | None] | None = None


@dataclass
class Expansion:
    """Files found for some inputs, and the folders that could not be listed.

    Attributes:
        files: sorted, de-duplicated (by real path) files.
        skipped: one skipped ``FileResult`` per folder that could not be listed, with the reason.
    """

    files: list[Path] = field(default_factory=list)
    skipped: list[FileResult] = field(default_factory=list)


def is_url(text: str) -> bool:
    """True for an http(s) URL (the other inputs are paths or glob patterns)."""
    return text.startswith(URL_PREFIXES)


def os_reason(exc: OSError) -> str:
    """A short reason for a file-system error: "permission denied", "no such file or directory (removed during
    the load?)", ..."""
    text = (exc.strerror or type(exc).__name__).lower()
    if isinstance(exc, FileNotFoundError):
        text += " (removed during the load?)"
    return text


def expand_paths(inputs: Sequence[str], options: LoaderOptions, allowed: PathAllowed | None = None) -> Expansion:
    """Expand files, folders (recursive) and glob patterns into files (see the module rules).

    Args:
        inputs: paths, folders or glob patterns.
        options: ``include`` / ``exclude`` glob patterns for folders (matched against the path relative to the
            folder and against the file name).
        allowed: ``path -> bool``; files it refuses are treated as absent.

    Raises:
        IngestError: an input does not exist or matches nothing, is not a regular file or folder, or is a pattern
            with ``..`` after a wildcard (the message names every such input; nothing was written).
    """
    found = Expansion()
    missing: list[str] = []
    not_regular: list[str] = []
    bad_patterns: list[str] = []
    other_schemes: list[str] = []
    for raw in inputs:
        path = Path(raw).expanduser()
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+://", raw) and not os.path.lexists(path):
            other_schemes.append(raw)  # "ftp://…", "s3://…": a URL, not a path that happens to be missing
            continue
        files: list[Path] = []
        if not os.path.lexists(path) and any(ch in raw for ch in WILDCARDS):
            if ".." in _pattern_parts(path)[1]:
                bad_patterns.append(raw)
                continue
            files = list(_glob(path, options, found.skipped, allowed))
        elif path.is_dir():
            files = list(_walk(path, options, found.skipped, allowed=allowed))
        elif path.is_file():
            files = [path]
        elif os.path.lexists(path):
            not_regular.append(raw)
            continue
        kept = [f for f in files if allowed is None or allowed(f)]
        if len(kept) < len(files):
            log.info("%d file(s) of %r are outside the allowed folders; not loaded", len(files) - len(kept), raw)
        if not kept and not path.is_dir():
            missing.append(raw)
        found.files.extend(kept)
    problems = ([f"not found: {', '.join(missing)}"] if missing else []) + (
        [f"not a regular file or folder (a device, pipe, or broken/looping link): {', '.join(not_regular)}"]
        if not_regular else []) + (
        [f"'..' after a wildcard is not supported: {', '.join(bad_patterns)}"] if bad_patterns else []) + (
        [f"only http:// and https:// URLs can be loaded: {', '.join(other_schemes)}"] if other_schemes else [])
    if problems:
        raise IngestError("; ".join(problems), hint=("download the file and load it from disk; " if other_schemes
                                                     else "") + "check the paths; nothing was written")
    by_real: dict[str, Path] = {}
    for f in found.files:
        by_real.setdefault(os.path.realpath(f), f)
    found.files = [by_real[k] for k in sorted(by_real)]
    return found


def _pattern_parts(path: Path) -> tuple[Path, list[str]]:
    """(the folder before the first wildcard component, the components from there on)."""
    parts = path.parts
    first = next(i for i, part in enumerate(parts) if any(ch in part for ch in WILDCARDS))
    return Path(*parts[:first]) if first else Path("."), list(parts[first:])


def _glob(pattern: Path, options: LoaderOptions, skipped: list[FileResult],
          allowed: PathAllowed | None) -> Iterator[Path]:
    """Files matching ``pattern``; a matched folder yields its files (folder rules) and is not searched further."""
    from wcmatch.glob import GLOBSTAR, globmatch

    base, rest = _pattern_parts(pattern)
    if not base.is_dir():
        return
    rel_pattern = "/".join(rest)
    max_depth = None if "**" in rest else len(rest)

    def matches(rel: str) -> bool:
        return bool(globmatch(rel, rel_pattern, flags=GLOBSTAR))

    def descend(rel: str, depth: int) -> bool:
        return (max_depth is None or depth < max_depth) and not matches(rel)

    seen: set[tuple[int, int]] = set()
    for entry, rel, is_dir in _tree(base, seen, skipped, follow_links=True, descend=descend, allowed=allowed):
        if is_dir and matches(rel):
            yield from _walk(entry, options, skipped, seen, allowed)
        elif not is_dir and matches(rel):
            yield entry


def _walk(folder: Path, options: LoaderOptions, skipped: list[FileResult],
          seen: set[tuple[int, int]] | None = None, allowed: PathAllowed | None = None) -> Iterator[Path]:
    """Files below ``folder`` (linked folders not followed), filtered by ``include`` / ``exclude``."""
    for path, rel, is_dir in _tree(folder, set() if seen is None else seen, skipped, follow_links=False,
                                   allowed=allowed, report_odd=lambda rel: in_scope(Path(rel), options)):
        if not is_dir and in_scope(Path(rel), options):
            yield path


def in_scope(rel: Path, options: LoaderOptions) -> bool:
    """Whether a file at ``rel`` (relative to a loaded folder) is loaded by the folder's ``include`` / ``exclude``
    rules: the walk asks it of each file found, and a re-load asks it of each stored source below the folder."""
    if any(_match(rel, pat) for pat in options.exclude):
        return False
    return not options.include or any(_match(rel, pat) for pat in options.include)


def _tree(root: Path, seen: set[tuple[int, int]], skipped: list[FileResult], *, follow_links: bool,
          descend: Callable[[str, int], bool] | None = None, allowed: PathAllowed | None = None,
          report_odd: Callable[[str], bool] | None = None) -> Iterator[tuple[Path, str, bool]]:
    """Walk ``root`` depth-first with an explicit stack: yields (path, path relative to root, is a folder).

    Each folder is entered once per ``seen`` set, recognised by (device, inode). Regular files and folders only
    (files through links included); pipes, sockets, devices and broken links are left out. ``descend(rel, depth)``
    decides whether a folder at ``depth`` (1 = a child of ``root``) is entered; default: always. A folder
    ``allowed`` refuses (outside the server's roots, through a link) is neither entered nor yielded. A broken link,
    pipe, socket or device whose relative path ``report_odd`` accepts is listed in ``skipped`` with what it is.
    """
    try:
        key = _dir_key(root)
    except OSError as exc:
        skipped.append(FileResult(display_path(root), "skipped", f"folder not readable: {os_reason(exc)}"))
        return
    if key in seen:
        return
    seen.add(key)
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack:
        folder, rel, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(FileResult(display_path(folder), "skipped", f"folder not readable: {os_reason(exc)}"))
            continue
        below: list[tuple[Path, str, int]] = []
        for entry in entries:
            path, name = folder / entry.name, f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=follow_links)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if not (is_dir or is_file):
                odd = _odd_kind(entry) if report_odd is not None and report_odd(name) else None
                if odd:
                    where = f"{display_path(folder)}/{readable_name(entry.name)}"  # the link, not its target
                    skipped.append(FileResult(where, "skipped", odd))
                continue
            if is_dir and allowed is not None and not allowed(path):
                continue
            yield path, name, is_dir
            if is_dir and (descend is None or descend(name, depth + 1)):
                try:
                    child = _dir_key(path)
                except OSError as exc:
                    skipped.append(FileResult(display_path(path), "skipped",
                                              f"folder not readable: {os_reason(exc)}"))
                    continue
                if child not in seen:
                    seen.add(child)
                    below.append((path, name, depth + 1))
        stack.extend(reversed(below))


def _odd_kind(entry: os.DirEntry[str]) -> str | None:
    """What a walked entry that is neither a file nor a folder is, as a skip reason; None for a link to a folder
    (linked folders are not followed, by design)."""
    try:
        if entry.is_symlink():
            return None if os.path.exists(entry.path) else "broken link (its target does not exist)"
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError as exc:
        return f"not readable: {os_reason(exc)}"
    kind = ("pipe" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
    return f"not a regular file (a {kind})"


def _dir_key(path: Path) -> tuple[int, int]:
    """(device, inode) of a folder, following links. Raises OSError when it cannot be read."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _match(rel: Path, pattern: str) -> bool:
    # PurePath.match matches from the right; "**/" prefixes also match top-level files
    return rel.match(pattern) or rel.match(pattern.removeprefix("**/")) or Path(rel.name).match(pattern)


def display_path(path: Path) -> str:
    """The id of a local source: its real absolute POSIX path; bytes that are not UTF-8 in a name are shown as
    ``\\xNN`` (so the id can be stored and printed, and is the same on every run)."""
    return readable_name(os.path.realpath(path).replace(os.sep, "/"))


def readable_name(name: str) -> str:
    """A file name (or path) as text: bytes that are not UTF-8 (Python holds them as lone surrogates) shown as
    ``\\xNN``, the way ``display_path`` shows them in the source id."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def file_title(path: Path) -> str:
    """The title a file gets when its content names none: its name without the suffix (``readable_name``)."""
    return readable_name(path.stem)


def file_items(files: Iterable[Path], loader: Loader, split_signature: str) -> Iterator[SourceItem]:
    """SourceItems for local files; the version is the file's hash plus the loader/splitter settings.

    A file that cannot be read now (permissions, removed since it was listed, a name too long) becomes an item with
    ``error`` set: skipped with the reason, never the end of the load.
    """
    for path in files:
        source = display_path(path)
        try:
            version = file_hash(path, extra=split_signature)
        except OSError as exc:
            yield SourceItem(source=source, version="", load=list, error=f"cannot read: {os_reason(exc)}")
            continue
        stream = getattr(loader, "stream", None)
        yield SourceItem(source=source, version=version, load=functools.partial(loader.load, path),
                         stream=functools.partial(stream, path) if callable(stream) else None)
