"""Folders kept in sync (issue #23 item 4): the real watcher (watchfiles' file-system events), real files on disk,
Milvus Lite in tmp_path, the hash embedder.

Every step waits for the watch's own report of a batch (a queue the watch fills), with FAILURE_TIMEOUT_S bounding
only a failed test; nothing sleeps, and no assertion depends on how fast the machine is.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import pytest

from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.ingest.watch import FolderWatch, WatchBatch
from deepsearcher.settings import load_settings
from deepsearcher.testing import HashEmbedder
from deepsearcher.types import LoadSummary
from tests.integration.server_support import FAILURE_TIMEOUT_S

pytestmark = pytest.mark.integration

COLLECTION = "watched"


def put(path: Path, data: str | bytes) -> None:
    """Write a file whole, as an editor's save does (a new file renamed over the old): the watch never sees it half
    written, however the machine schedules this thread, so each change is exactly one version."""
    staging = path.parent.parent / ".staging"
    staging.mkdir(exist_ok=True)
    temp = staging / path.name
    temp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(temp, path)


@dataclass
class Watching:
    """A running watch of ``folder`` and what the tests read from it."""

    app: Any
    folder: Path
    watch: FolderWatch
    first: LoadSummary
    batches: "queue.Queue[WatchBatch]"
    seen: list[WatchBatch] = field(default_factory=list)

    def until(self, done: Callable[[], bool]) -> list[WatchBatch]:
        """The batches reported until ``done()`` holds (checked before each wait and after each batch)."""
        got: list[WatchBatch] = []
        while not done():
            try:
                got.append(self.batches.get(timeout=FAILURE_TIMEOUT_S))
            except queue.Empty:
                raise AssertionError(f"no change batch in {FAILURE_TIMEOUT_S} s; stored: {self.stored()}") from None
            self.seen.append(got[-1])
        return got

    def stored(self) -> dict[str, str]:
        """File name (relative to the folder) -> text, of every chunk ``retrieve`` returns."""
        hits = self.app.retrieve("ledger lantern archive", top_k=100, collections=[COLLECTION], mode="dense")
        return {Path(h.chunk.source).relative_to(self.folder.resolve()).as_posix(): h.chunk.text for h in hits}


def start_watch(tmp_path: Path, sync_wrapper: Callable[[Any], Any] | None = None,
                **options: Any) -> Iterator[Watching]:
    """A folder with one file, a DeepSearcher on Milvus Lite with the hash embedder, and its watch on a thread."""
    from deepsearcher.app import DeepSearcher

    folder = tmp_path / "docs"
    folder.mkdir()
    put(folder / "first.md", "The first ledger names the lantern archive.\n")
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None})
    app = DeepSearcher(settings, embedder=HashEmbedder(64, "hash-64"))

    def sync(only: Optional[Sequence[str]]) -> LoadSummary:
        return app.load([str(folder)], COLLECTION, "watched notes", only=only or [str(folder)])

    batches: "queue.Queue[WatchBatch]" = queue.Queue()
    watch = FolderWatch(folder, sync_wrapper(sync) if sync_wrapper else sync, on_batch=batches.put, **options)
    ready: "queue.Queue[LoadSummary]" = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=watch.run, args=(stop, ready.put), daemon=True)
    thread.start()
    try:
        first = ready.get(timeout=FAILURE_TIMEOUT_S)
        yield Watching(app, folder, watch, first, batches)
    finally:
        stop.set()
        thread.join(FAILURE_TIMEOUT_S)
        app.close()


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[Watching]:
    yield from start_watch(tmp_path)


def test_created_changed_renamed_and_deleted_files_are_reflected_in_retrieve(watching: Watching) -> None:
    w, docs = watching, watching.folder
    assert [f.status for f in w.first.files] == ["loaded"] and w.stored() == {
        "first.md": "The first ledger names the lantern archive."}

    put(docs / "second.md", "A second ledger lists the brass keys.\n")
    w.until(lambda: "second.md" in w.stored())
    assert w.seen[-1].added == (str((docs / "second.md").resolve()),)

    put(docs / "first.md", "The first ledger was rewritten in green ink.\n")
    w.until(lambda: w.stored()["first.md"] == "The first ledger was rewritten in green ink.")
    assert w.seen[-1].replaced == (str((docs / "first.md").resolve()),) and not w.seen[-1].added

    os.rename(docs / "second.md", docs / "renamed.md")
    w.until(lambda: "second.md" not in w.stored() and "renamed.md" in w.stored())
    assert w.stored()["renamed.md"] == "A second ledger lists the brass keys."

    (docs / "first.md").unlink()
    w.until(lambda: "first.md" not in w.stored())
    assert w.stored() == {"renamed.md": "A second ledger lists the brass keys."}
    totals = w.watch.totals
    assert (totals.added, totals.replaced, totals.removed, totals.skipped, totals.failed) == (2, 1, 2, 0, 0)
    assert any("removed first.md" in b.describe() for b in w.seen)


def test_a_folder_moved_in_and_then_deleted_is_added_and_removed_whole(watching: Watching, tmp_path: Path) -> None:
    w = watching
    outside = tmp_path / "incoming"
    (outside / "deep").mkdir(parents=True)
    (outside / "one.md").write_text("Incoming ledger one.\n", encoding="utf-8")
    (outside / "deep" / "two.md").write_text("Incoming ledger two.\n", encoding="utf-8")

    os.rename(outside, w.folder / "incoming")  # one event for the folder, none for its files
    w.until(lambda: {"incoming/one.md", "incoming/deep/two.md"} <= w.stored().keys())

    shutil.rmtree(w.folder / "incoming")
    w.until(lambda: w.stored().keys() == {"first.md"})


def test_a_broken_file_is_reported_and_the_watch_goes_on(watching: Watching) -> None:
    w, docs = watching, watching.folder
    put(docs / "broken.pdf", b"%PDF-1.7\n1 0 obj <<>> garbage \x00\x01\x02 endobj\n")
    w.until(lambda: any(b.skipped for b in w.seen))
    skipped = next(b for b in w.seen if b.skipped).skipped
    assert [Path(f.source).name for f in skipped] == ["broken.pdf"] and "unreadable PDF" in skipped[0].reason
    assert "skipped broken.pdf (unreadable PDF" in next(b for b in w.seen if b.skipped).describe()

    put(docs / "after.md", "The ledger written after the broken file.\n")
    w.until(lambda: "after.md" in w.stored())
    assert set(w.stored()) == {"first.md", "after.md"} and w.watch.totals.skipped >= 1


def test_a_batch_that_fails_as_a_whole_is_reported_and_tried_again(tmp_path: Path) -> None:
    calls: list[Optional[Sequence[str]]] = []

    def failing_once(sync: Callable[..., LoadSummary]) -> Callable[..., LoadSummary]:
        def wrapped(only: Optional[Sequence[str]]) -> LoadSummary:
            calls.append(only)
            if len(calls) == 2:  # the first batch after the first sync
                raise ProviderError("the vector store failed: connection refused", hint="start it")
            return sync(only)
        return wrapped

    for w in start_watch(tmp_path, failing_once, retry_ms=50):
        put(w.folder / "later.md", "A later ledger.\n")
        w.until(lambda: any(b.added for b in w.seen))  # on the reports: the retry may be done before this looks
        assert "later.md" in w.stored()
        assert w.seen[0].error == "the vector store failed: connection refused"
        assert w.seen[0].describe().startswith("batch failed, tried again later")
        assert w.seen[-1].added == (str((w.folder / "later.md").resolve()),)
        assert w.watch.totals.failed == 1 and calls[1] == calls[2]  # the same paths, tried again


def test_a_watched_folder_that_goes_away_is_named_and_its_chunks_kept(watching: Watching, tmp_path: Path) -> None:
    moved = tmp_path / "moved-away"
    os.rename(watching.folder, moved)
    failed = watching.until(lambda: any(b.error for b in watching.seen))[-1]
    root = str(watching.folder.resolve())
    assert failed.describe() == (f"batch failed, tried again later: the watched folder {root} is gone (moved or "
                                 "deleted); its chunks are kept, and it is watched again when it is back")
    os.rename(moved, watching.folder)
    assert watching.stored() == {"first.md": "The first ledger names the lantern archive."}
    put(watching.folder / "back.md", "The ledger came back with the lantern archive.\n")  # the same folder, watched
    watching.until(lambda: "back.md" in watching.stored())


def test_a_watched_folder_deleted_and_made_again_is_watched_anew(tmp_path: Path) -> None:
    """A build's output or ``rm -r docs && cp -r new docs``: the folder at the path is another one, which the old
    watch cannot see into. Once the watch finds the old one gone, the new one is synced whole and followed."""
    calls: list[Optional[Sequence[str]]] = []

    def recorded(sync: Callable[..., LoadSummary]) -> Callable[..., LoadSummary]:
        def wrapped(only: Optional[Sequence[str]]) -> LoadSummary:
            calls.append(only)
            return sync(only)
        return wrapped

    for w in start_watch(tmp_path, recorded, retry_ms=50):
        shutil.rmtree(w.folder)
        w.until(lambda: any(b.error for b in w.seen))  # the deletion's batch: the folder is gone
        staged = tmp_path / "new-docs"
        staged.mkdir()
        put(staged / "second.md", "The second ledger names the lantern archive.\n")
        os.rename(staged, w.folder)
        resynced = w.until(lambda: w.stored() == {"second.md": "The second ledger names the lantern archive."})
        folder = w.folder.resolve()
        assert any(b.added == (str(folder / "second.md"),) and b.removed == (str(folder / "first.md"),)
                   for b in resynced)
        put(w.folder / "third.md", "A third ledger.\n")  # a change inside the new folder is seen
        w.until(lambda: "third.md" in w.stored())
        # the new folder is synced as a batch of its own path: sync(None) is the first load only (the CLI shows that
        # one with its progress bar and load options)
        assert calls.count(None) == 1 and [str(folder)] in calls


def test_a_watched_folder_replaced_at_once_is_watched_anew(tmp_path: Path) -> None:
    """Deleted and made again before any batch ran: whichever way the watch meets it, the new folder ends stored and
    followed."""
    for w in start_watch(tmp_path, retry_ms=50):
        staged = tmp_path / "new-docs"
        staged.mkdir()
        put(staged / "second.md", "The second ledger names the lantern archive.\n")
        shutil.rmtree(w.folder)
        os.rename(staged, w.folder)
        w.until(lambda: w.stored() == {"second.md": "The second ledger names the lantern archive."})
        put(w.folder / "third.md", "A third ledger.\n")
        w.until(lambda: "third.md" in w.stored())


# --- server.watch -----------------------------------------------------------------------------------------------------
def server_settings(tmp_path: Path, watched: Path) -> Any:
    return load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
                                "server": {"allowed_roots": [str(tmp_path / "allowed")],
                                           "watch": [{"path": str(watched), "collection": COLLECTION}]}})


def test_the_server_keeps_its_watched_folders_in_sync(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    docs = tmp_path / "allowed" / "docs"
    docs.mkdir(parents=True)
    put(docs / "first.md", "The first ledger names the lantern archive.\n")
    settings = server_settings(tmp_path, docs)
    with DeepSearcher(settings, embedder=HashEmbedder(64, "hash-64")) as searcher:
        app = create_app(settings, searcher=searcher)
        watches = app.state.watches
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert watches.wait_for(lambda: watches.ready, FAILURE_TIMEOUT_S)
            put(docs / "new.md", "A new ledger arrived at the server.\n")
            assert watches.wait_for(lambda: any(b.added for b in watches.batches), FAILURE_TIMEOUT_S)
            hits = client.post("/api/retrieve", json={"query": "ledger", "collections": [COLLECTION],
                                                      "top_k": 10, "mode": "dense"}).json()
    assert sorted(Path(h["chunk"]["source"]).name for h in hits) == ["first.md", "new.md"]


def test_a_watched_folder_outside_the_allowed_roots_is_refused_at_startup(tmp_path: Path) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    (tmp_path / "allowed").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    settings = server_settings(tmp_path, elsewhere)
    with DeepSearcher(settings, embedder=HashEmbedder(64, "hash-64")) as searcher:
        with pytest.raises(ConfigError, match="outside server.allowed_roots"):
            create_app(settings, searcher=searcher)
