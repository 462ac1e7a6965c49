"""Watch latency: how long after a file is created, changed, renamed or deleted in a watched folder ``retrieve``
shows it (``deepsearcher load DIR --watch``; ``deepsearcher/ingest/watch.py``).

One run: a folder of ``--files`` Markdown files (so each batch's walk of the folder and scan of the stored sources
have something to do), loaded into a Milvus Lite file in a temporary folder, watched on a thread with the real
watcher; then ``--reps`` rounds of four operations, each timed from just before the file operation until a
``retrieve`` (dense, every chunk) returns the expected state, checked after every batch the watch reports:

* create: a new file is written whole (a temporary file renamed in, as editors save) -> its text is retrieved;
* change: that file is saved again with new text -> only the new text is retrieved;
* rename: it is renamed -> retrieved under the new name, not the old;
* delete: it is deleted -> no longer retrieved.

The embedder is the configured default (the bundled MiniLM, ONNX int8) unless ``--hash`` (the tests' hash embedder:
the watch and store overhead alone). Prints a Markdown table (p50 / max per operation, in seconds) and the load
average before and after, for docs/benchmarks.md.

    python scripts/bench_watch.py --files 200 --reps 10
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from deepsearcher.app import DeepSearcher  # noqa: E402
from deepsearcher.ingest.watch import FolderWatch, WatchBatch  # noqa: E402
from deepsearcher.settings import load_settings  # noqa: E402
from deepsearcher.testing import HashEmbedder  # noqa: E402
from deepsearcher.types import LoadSummary  # noqa: E402

COLLECTION = "watch_bench"
FAILURE_TIMEOUT_S = 120


def make_folder(root: Path, files: int) -> Path:
    folder = root / "docs"
    folder.mkdir()
    for i in range(files):
        (folder / f"note{i:04d}.md").write_text(f"# Note {i}\n\nLedger {i} of the archive lists item {i * 7}.\n",
                                                encoding="utf-8")
    return folder


def save(path: Path, text: str) -> None:
    """Write ``path`` whole: a temporary file beside the folder, renamed over it."""
    temp = path.parent.parent / f".{path.name}.tmp"
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


class Bench:
    """The watched folder, its app and the batches its watch reports."""

    def __init__(self, app: DeepSearcher, folder: Path, files: int) -> None:
        self.app, self.folder, self.top_k = app, folder, files + 10  # every chunk: one per file
        self.batches: "queue.Queue[WatchBatch]" = queue.Queue()

    def sync(self, only: Optional[Sequence[str]]) -> LoadSummary:
        return self.app.load([str(self.folder)], COLLECTION, "bench notes", only=only or [str(self.folder)])

    def texts(self) -> dict[str, str]:
        hits = self.app.retrieve("ledger archive", top_k=self.top_k, collections=[COLLECTION], mode="dense")
        return {Path(h.chunk.source).name: h.chunk.text for h in hits}

    def timed(self, operation: Callable[[], None], done: Callable[[dict[str, str]], bool]) -> float:
        """Seconds from just before ``operation`` until ``retrieve`` shows ``done`` (checked after each batch)."""
        start = time.perf_counter()
        operation()
        while True:
            self.batches.get(timeout=FAILURE_TIMEOUT_S)
            if done(self.texts()):
                return time.perf_counter() - start


def one_round(bench: Bench, i: int) -> dict[str, float]:
    folder = bench.folder
    new, moved = folder / f"new{i}.md", folder / f"moved{i}.md"
    first, second = f"Ledger new {i} first words of the archive.", f"Ledger new {i} second words of the archive."
    return {
        "create": bench.timed(lambda: save(new, first + "\n"), lambda t: t.get(new.name) == first),
        "change": bench.timed(lambda: save(new, second + "\n"), lambda t: t.get(new.name) == second),
        "rename": bench.timed(lambda: os.rename(new, moved), lambda t: moved.name in t and new.name not in t),
        "delete": bench.timed(moved.unlink, lambda t: moved.name not in t),
    }


def run(files: int, reps: int, hash_embedder: bool) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = make_folder(root, files)
        settings = load_settings(None, {"vector_db": {"uri": str(root / "milvus.db")}, "llm": None})
        embedder: Any = HashEmbedder(64, "hash-64") if hash_embedder else None
        with DeepSearcher(settings, embedder=embedder) as app:
            bench = Bench(app, folder, files)
            watch = FolderWatch(folder, bench.sync, on_batch=bench.batches.put)
            ready: "queue.Queue[LoadSummary]" = queue.Queue()
            stop = threading.Event()
            thread = threading.Thread(target=watch.run, args=(stop, ready.put), daemon=True)
            thread.start()
            ready.get(timeout=600)
            rounds = [one_round(bench, i) for i in range(reps)]
            stop.set()
            thread.join(60)
    return {op: [r[op] for r in rounds] for op in rounds[0]}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=200, help="files in the watched folder besides the test file")
    parser.add_argument("--reps", type=int, default=10, help="rounds of create/change/rename/delete")
    parser.add_argument("--hash", action="store_true", help="the tests' hash embedder instead of the default")
    args = parser.parse_args(argv)
    before = os.getloadavg()
    times = run(args.files, args.reps, args.hash)
    after = os.getloadavg()
    print(f"folder: {args.files} files; {args.reps} rounds; embedder: {'hash' if args.hash else 'default'}; "
          f"load average (1/5/15 min) before {before[0]:.2f}/{before[1]:.2f}/{before[2]:.2f}, "
          f"after {after[0]:.2f}/{after[1]:.2f}/{after[2]:.2f}; {os.cpu_count()} CPUs\n")
    print("| operation | p50 (s) | max (s) |\n|---|---:|---:|")
    for op, values in times.items():
        print(f"| {op} | {statistics.median(values):.2f} | {max(values):.2f} |")


if __name__ == "__main__":
    main()
