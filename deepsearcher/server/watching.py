"""The folders the server keeps in sync (``server.watch``): one ``ingest.watch.FolderWatch`` thread per folder,
started with the app and stopped with it. Every load a watch makes (the first sync and each change batch) goes
through the server's load queue, so it never runs beside an API load (admitted even when API loads fill the queue:
``WorkQueue.submit_own``), and is held to the allowed roots like one. A first sync that fails is logged and the
folder is not watched; a batch that fails is logged and tried again by the watch."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable, Optional, Sequence

from deepsearcher.errors import DeepSearcherError
from deepsearcher.ingest.watch import FolderWatch, WatchBatch
from deepsearcher.server.service import Service
from deepsearcher.settings import WatchedFolder
from deepsearcher.types import LoadSummary

log = logging.getLogger(__name__)

#: how long shutdown waits for a watch to finish the batch it is loading
STOP_WAIT_S = 30.0


def check_folders(service: Service) -> list[tuple[Path, WatchedFolder]]:
    """``server.watch`` with each path resolved, checked before the server starts (``AccessPolicy.watched_folders``).

    Raises:
        ConfigError: a watched path is not a folder, or lies outside ``server.allowed_roots``.
    """
    paths = service.policy.watched_folders(service.settings)
    return list(zip(paths, service.settings.server.watch))


class ServerWatches:
    """The server's folder watches: ``start`` with the app, ``stop`` before its store closes.

    Attributes:
        batches: every batch applied so far, in order (also logged).
        ready: the folders whose first sync is done (their changes are followed from then on).
    """

    def __init__(self, service: Service) -> None:
        self.service = service
        self.folders = check_folders(service)
        self.batches: list[WatchBatch] = []
        self.ready: list[Path] = []
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for path, entry in self.folders:
            thread = threading.Thread(target=self._run, args=(path, entry), daemon=True,
                                      name=f"deepsearcher-watch-{path.name}")
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(STOP_WAIT_S)

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``condition()`` holds, checked after every batch and first sync; False on timeout."""
        with self._changed:
            return self._changed.wait_for(condition, timeout)

    def _run(self, path: Path, entry: WatchedFolder) -> None:
        watch = FolderWatch(path, self._sync(path, entry), on_batch=self._record)
        try:
            watch.run(self._stop, on_ready=lambda summary: self._first_sync_done(path, summary))
        except Exception as exc:  # the first sync failed (a batch that fails is retried inside the watch)
            log.error("server.watch: %s is not kept in sync: %s", path, exc, exc_info=not isinstance(
                exc, (DeepSearcherError, OSError)))

    def _sync(self, path: Path, entry: WatchedFolder) -> Callable[[Optional[Sequence[str]]], LoadSummary]:
        def sync(only: Optional[Sequence[str]]) -> LoadSummary:
            future = self.service.loads.submit_own(self.service.load, [str(path)], entry.collection, None,
                                               keep_missing=entry.keep_missing, only=only or [str(path)])
            return future.result()

        return sync

    def _first_sync_done(self, path: Path, summary: LoadSummary) -> None:
        log.info("server.watch: %s synced (%d loaded, %d unchanged, %d removed); following its changes", path,
                 len(summary.loaded), len(summary.unchanged), len(summary.removed))
        with self._changed:
            self.ready.append(path)
            self._changed.notify_all()

    def _record(self, batch: WatchBatch) -> None:
        with self._changed:
            self.batches.append(batch)
            self._changed.notify_all()
