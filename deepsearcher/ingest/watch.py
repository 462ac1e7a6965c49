"""Folders kept in sync: file-system events, grouped into batches, each applied through the one load path.

``FolderWatch.run`` watches a folder with the operating system's file events (``watchfiles``: inotify on Linux,
FSEvents on macOS, ReadDirectoryChangesW on Windows; it polls only when ``WATCHFILES_FORCE_POLLING`` is set, for a
network mount whose changes made on other machines raise no local events), syncs the folder once (a normal load of
it), then applies each burst of changes as one batch: ``sync(changed paths)``, which the callers make
``DeepSearcher.load([folder], only=paths)``. So a batch follows the same version rules as a re-load
(``ingest.load.load_sources``): a changed file's new version is written and its old chunks deleted, an unchanged one
is left alone (same hash), a created file is added, and the removal rule (``remove_missing``) compares the stored
sources with a fresh walk of the whole folder, so deleted and renamed files (and folders) lose their chunks whatever
events the system reported for them.

Debouncing: a batch starts once no event has arrived for ``step_ms`` (an editor's write-then-rename is one batch),
or after ``debounce_ms`` of continuous events (a large copy is applied in pieces). Errors: a file that fails to load
is a skipped result in its batch (the pipeline's rule), never the end of the watch; a batch that fails as a whole
(the store down) is reported and tried again after ``retry_ms``, then at growing intervals, and at the next change.
The watched folder gone is such a batch; once a folder stands at its path again (moved back, or made anew: a new
folder the old watch cannot see into), that one is watched and synced whole.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from deepsearcher.errors import first_line
from deepsearcher.ingest.sources import display_path
from deepsearcher.types import FileResult, LoadSummary

log = logging.getLogger(__name__)

#: quiet time (ms) after the last event before a batch is applied
STEP_MS = 100
#: the longest (ms) a continuous burst of events is grouped before a batch is applied anyway
DEBOUNCE_MS = 1600
#: how long (ms) after a failed batch it is tried again (doubling, at most RETRY_MAX_MS), unless a change comes first
RETRY_MS = 2000
RETRY_MAX_MS = 120_000

#: the poll interval (ms) when polling is asked for (``force_polling``)
POLL_MS = 300

#: ``sync(None)``: the first, full load of the folder; ``sync(paths)``: a batch of changed paths (``display_path``)
Sync = Callable[[Optional[Sequence[str]]], LoadSummary]


@dataclass(frozen=True)
class WatchBatch:
    """What one batch of changes did (or why it failed as a whole: ``error``; its changes are tried again)."""

    folder: str
    added: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    skipped: tuple[FileResult, ...] = ()
    error: str = ""
    seconds: float = 0.0

    @property
    def did_something(self) -> bool:
        """False for a batch whose files were all unchanged (a save with the same bytes, a touched file)."""
        return bool(self.added or self.replaced or self.removed or self.skipped or self.error)

    def describe(self) -> str:
        """One line: ``added a.md · replaced b.md · removed c.md · skipped d.pdf (reason) · 0.4 s``."""
        if self.error:
            return f"batch failed, tried again later: {self.error}"
        parts = [f"{what} {', '.join(self._short(s) for s in sources)}" for what, sources in
                 (("added", self.added), ("replaced", self.replaced), ("removed", self.removed)) if sources]
        parts += [f"skipped {self._short(f.source)} ({first_line(f.reason)})" for f in self.skipped]
        return " · ".join(parts + [f"{self.seconds:.1f} s"])

    def _short(self, source: str) -> str:
        """A source relative to the watched folder (the line is about that folder)."""
        return source[len(self.folder) + 1:] if source.startswith(self.folder + "/") else source


@dataclass
class WatchTotals:
    """What a watch did so far, over all its batches (the summary when it ends)."""

    batches: int = 0
    added: int = 0
    replaced: int = 0
    removed: int = 0
    skipped: int = 0
    failed: int = 0

    def add(self, batch: WatchBatch) -> None:
        self.batches += 1
        self.failed += bool(batch.error)
        self.added += len(batch.added)
        self.replaced += len(batch.replaced)
        self.removed += len(batch.removed)
        self.skipped += len(batch.skipped)

    def describe(self) -> str:
        """``3 batches: 2 added, 1 replaced, 1 removed, 0 skipped, 0 failed``."""
        return (f"{self.batches} change batch{'' if self.batches == 1 else 'es'}: {self.added} added, "
                f"{self.replaced} replaced, {self.removed} removed, {self.skipped} skipped, {self.failed} failed")


def force_polling() -> bool:
    """Poll instead of using events: only when ``$WATCHFILES_FORCE_POLLING`` asks for it (watchfiles' own variable
    and values; its automatic polling on WSL is not followed, since WSL's own file systems have inotify)."""
    value = os.environ.get("WATCHFILES_FORCE_POLLING", "")
    return bool(value) and value.lower() not in {"false", "disable", "disabled"}


def folder_identity(path: str) -> Optional[tuple[int, int]]:
    """The folder at ``path`` as the file system knows it (device, inode), or None when no folder is there: a folder
    deleted and made again at the same path is another one."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _no_batch(batch: WatchBatch) -> None:
    """Default ``on_batch``: report nothing."""


def _no_ready(summary: LoadSummary) -> None:
    """Default ``on_ready``: nothing to do."""


@dataclass
class FolderWatch:
    """Keep one folder's collection in sync with the folder (module docstring).

    Attributes:
        folder: the watched folder.
        sync: loads the folder (``Sync``); it must raise only for a batch that failed as a whole.
        on_batch: receives every batch that did something.
        ignore: ``path -> True`` for paths whose events mean nothing (the Milvus Lite file inside the folder).
        totals: what the watch did so far (read it after ``run`` ends or is interrupted).
    """

    folder: Path
    sync: Sync
    on_batch: Callable[[WatchBatch], None] = _no_batch
    ignore: Callable[[str], bool] = lambda path: False
    step_ms: int = STEP_MS
    debounce_ms: int = DEBOUNCE_MS
    retry_ms: int = RETRY_MS
    totals: WatchTotals = field(default_factory=WatchTotals)
    _known: set[str] = field(default_factory=set)  # stored sources of the folder: tells added from replaced
    _failures: int = 0

    def run(self, stop: threading.Event | None = None,
            on_ready: Callable[[LoadSummary], None] = _no_ready) -> WatchTotals:
        """Start watching, sync the folder once (``on_ready`` gets that load's summary), then apply every change
        until ``stop`` is set. A folder deleted and made again (a build's output, ``rm -r docs && cp -r …``) is a new
        folder the old watch cannot see into: once one stands at the path, it is watched instead and synced whole.

        Raises:
            KeyboardInterrupt: a signal (Ctrl-C) arrived while waiting for changes, or inside a batch.
            FileNotFoundError: the folder does not exist.
            DeepSearcherError: the first sync failed (nothing is watched then).
        """
        # RustNotify (watchfiles' documented Rust backend) rather than watchfiles.watch: its events are registered
        # when it is built, so the first sync and on_ready come after the watch is in place and nothing is missed
        from watchfiles._rust_notify import RustNotify

        root = display_path(self.folder)
        again = False  # the folder at root was made again: the new one is synced whole
        while True:
            identity = folder_identity(root)
            try:
                notify = RustNotify([root], False, force_polling(), POLL_MS, True, True)
            except FileNotFoundError:
                if not again:
                    raise
                # gone again before it could be watched: wait for it (or for stop)
                if stop is None:
                    time.sleep(self.retry_ms / 1000)
                elif stop.wait(self.retry_ms / 1000):
                    return self.totals
                continue
            with notify:
                if again:
                    log.info("watch %s: the folder was made again; watching the new one", root)
                else:
                    first = self.sync(None)
                    self._remember(first)
                    on_ready(first)
                if self._follow(notify, root, stop, identity, resync=again):
                    return self.totals
            again = True

    def _follow(self, notify: Any, root: str, stop: threading.Event | None, identity: Optional[tuple[int, int]],
                resync: bool = False) -> bool:
        """Apply the changes ``notify`` reports, batch by batch, until ``stop`` is set (a signal: KeyboardInterrupt).
        A failed batch stays pending: it is tried again with the next change, or when its retry time has come.
        ``resync``: sync the whole folder first. Returns True when stopped, False when a folder stands at ``root``
        again after the watched one (``identity``) was seen gone, or another one stands there now."""
        from watchfiles import Change, DefaultFilter

        noise = DefaultFilter()  # editors' swap and backup files, .git, __pycache__
        # the whole folder as a batch: its path is the one changed path (sync(None) is the first load, which the
        # CLI shows with its progress and options)
        pending: set[str] = {root} if resync else set()
        retry_at = 0.0
        lost = False  # the watched folder was seen gone: one found at root after that is watched anew
        while True:
            if pending and time.monotonic() >= retry_at:
                pending, retry_at = self._apply(root, pending)
            raw = notify.watch(self.debounce_ms, self.step_ms, self.retry_ms, stop)
            if raw == "stop":
                return True
            if raw == "signal":
                raise KeyboardInterrupt
            if isinstance(raw, set) and any(p == root and Change(c) is Change.deleted for c, p in raw):
                lost = True
            now = folder_identity(root)
            if now is None:
                lost = True
            elif lost or now != identity:  # another folder (its inode number may be the old one's, reused), which
                return False  # the old watch sees nothing of: the caller watches it anew
            if isinstance(raw, set):
                pending |= {p for change, p in raw if noise(Change(change), p) and not self.ignore(p)}
                retry_at = 0.0  # a change: what failed is tried again now

    def _apply(self, root: str, pending: set[str]) -> tuple[set[str], float]:
        """Load one batch; returns what stays pending (all of it when the batch failed) and when to retry it."""
        start = time.perf_counter()
        try:
            summary = self.sync(sorted({display_path(Path(p)) for p in pending}))
        except Exception as exc:  # the store or the load queue, not a file (files fail as skipped results)
            log.debug("watch batch of %s failed", root, exc_info=True)
            error = first_line(exc)
            if not Path(root).is_dir():  # the load's "not found" says less than this
                error = (f"the watched folder {root} is gone (moved or deleted); its chunks are kept, and it is "
                         "watched again when it is back")
            self._report(WatchBatch(root, error=error, seconds=time.perf_counter() - start))
            self._failures += 1
            delay = min(self.retry_ms * 2 ** (self._failures - 1), RETRY_MAX_MS) / 1000
            return pending, time.monotonic() + delay
        self._failures = 0
        batch = self._batch(root, summary, time.perf_counter() - start)
        if batch.did_something:
            self._report(batch)
        return set(), 0.0

    def _batch(self, root: str, summary: LoadSummary, seconds: float) -> WatchBatch:
        """The batch's changes from its load summary; a loaded file is "replaced" when it was stored before."""
        loaded = [f.source for f in summary.files if f.status == "loaded"]
        batch = WatchBatch(root, added=tuple(s for s in loaded if s not in self._known),
                           replaced=tuple(s for s in loaded if s in self._known),
                           removed=tuple(r.source for r in summary.removed),
                           skipped=tuple(f for f in summary.files if f.status == "skipped"), seconds=seconds)
        self._remember(summary)
        return batch

    def _remember(self, summary: LoadSummary) -> None:
        self._known |= {f.source for f in summary.files if f.status in ("loaded", "unchanged")}
        self._known -= {r.source for r in summary.removed}

    def _report(self, batch: WatchBatch) -> None:
        self.totals.add(batch)
        log.info("watch %s: %s", batch.folder, batch.describe())
        self.on_batch(batch)
