"""``deepsearcher load DIR --watch`` in a subprocess: it loads, says it is watching, prints one line per change batch,
and Ctrl-C (SIGINT) ends it with the totals and exit 130; what it wrote is in the Milvus Lite file.

The CLI uses a hash embedder from a plugin written into tmp_path (as tests/integration/test_plugins.py does), so it
starts in seconds. The test reads the CLI's output line by line and acts only on the lines it waits for; the bound
of each wait (FAILURE_TIMEOUT_S) ends only a failed test.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

from deepsearcher.testing import HashEmbedder
from tests.integration.pausing import pause_env, wait_until_paused
from tests.integration.server_support import FAILURE_TIMEOUT_S
from tests.integration.test_plugins import env_with_plugin

pytestmark = pytest.mark.integration

PLUGIN = textwrap.dedent('''
    """A hash embedder for the CLI watch test."""
    from pydantic import Field

    from deepsearcher.settings import ProviderOptions
    from deepsearcher.testing import HashEmbedder


    class WatchHashOptions(ProviderOptions):
        dimension: int = Field(32, gt=0, description="Vector length.")


    def register(registry):
        registry.register("embedding", "watch_hash", lambda o: HashEmbedder(o.dimension, f"watch-hash-{o.dimension}"),
                          WatchHashOptions, description="Hash embedder (tests).")
''')


class Lines:
    """The lines a process writes to one stream, read on a thread so that a wait can have a bound."""

    def __init__(self, stream: "subprocess.IO[str]") -> None:  # type: ignore[name-defined]
        self.queue: "queue.Queue[str | None]" = queue.Queue()
        self.all: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: "subprocess.IO[str]") -> None:  # type: ignore[name-defined]
        for line in stream:
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def wait_for(self, wanted: Callable[[str], bool]) -> str:
        """The first line (from here on) for which ``wanted`` holds."""
        while True:
            try:
                line = self.queue.get(timeout=FAILURE_TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(f"no such line in {FAILURE_TIMEOUT_S} s; got: {self.all}") from None
            if line is None:
                raise AssertionError(f"the output ended first; got: {self.all}")
            self.all.append(line)
            if wanted(line):
                return line


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return env_with_plugin(tmp_path, "ds_watch_hash", PLUGIN, "watch_hash", columns=300)


@pytest.fixture
def watcher(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], Lines, Path]]:
    yield from start_cli(tmp_path, env)


def start_cli(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], Lines, Path]]:
    """``deepsearcher load docs --watch`` on a folder with one file, its stdout read line by line."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "first.md").write_text("The first ledger names the lantern archive.\n", encoding="utf-8")
    (tmp_path / "config.yaml").write_text("vector_db: {uri: ./milvus.db}\nllm: null\n"
                                          "embedding: {provider: watch_hash, dimension: 48}\n", encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "deepsearcher.cli", "load", str(docs), "-c", "notes", "-d",
                                "Ledgers", "--watch"], cwd=tmp_path, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield process, Lines(process.stdout), docs  # type: ignore[arg-type]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(FAILURE_TIMEOUT_S)


def test_load_watch_follows_changes_and_ends_on_ctrl_c_with_its_totals(watcher, tmp_path: Path) -> None:
    process, out, docs = watcher
    out.wait_for(lambda line: line.startswith("Watching ") and "(Ctrl-C to stop)" in line)

    staged = tmp_path / "new.md"
    staged.write_text("A new ledger lists the brass keys.\n", encoding="utf-8")
    os.replace(staged, docs / "new.md")  # whole, as an editor saves
    assert out.wait_for(lambda line: " added " in line).split(" ", 1)[1].startswith("added new.md · ")

    (docs / "first.md").unlink()
    assert out.wait_for(lambda line: " removed " in line).split(" ", 1)[1].startswith("removed first.md · ")

    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=FAILURE_TIMEOUT_S)
    assert process.returncode == 130, err
    assert "Stopped watching" in err and "2 change batches: 1 added, 0 replaced, 1 removed, 0 skipped" in err
    assert "Traceback" not in err

    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    reader = tmp_path / "reader.yaml"  # the CLI's config names the plugin's embedder; the hash embedder is passed in
    reader.write_text(f"vector_db: {{uri: {tmp_path / 'milvus.db'}}}\nllm: null\n", encoding="utf-8")
    settings = load_settings(str(reader))
    with DeepSearcher(settings, embedder=HashEmbedder(48, "watch-hash-48")) as app:
        hits = app.retrieve("ledger", top_k=10, collections=["notes"], mode="dense")
    assert [(Path(h.chunk.source).name, h.chunk.text) for h in hits] == [
        ("new.md", "A new ledger lists the brass keys.")]


def test_load_watch_needs_one_folder(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "a.md").write_text("text\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "deepsearcher.cli", "load", str(tmp_path / "a.md"), "--watch"],
                          cwd=tmp_path, env=env, text=True, capture_output=True, timeout=FAILURE_TIMEOUT_S)
    assert done.returncode == 1 and "--watch keeps one folder in sync" in done.stderr


def test_sigterm_ends_the_watch_with_its_totals_and_143(watcher) -> None:
    process, out, _ = watcher
    out.wait_for(lambda line: line.startswith("Watching "))
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=FAILURE_TIMEOUT_S)
    assert process.returncode == 143, err
    assert "Stopped watching" in err and "0 change batches" in err and "Traceback" not in err


def test_ctrl_c_inside_a_batch_ends_cleanly_and_a_plain_load_finishes_it(tmp_path: Path, env: dict[str, str]) -> None:
    marker = tmp_path / "paused"
    for process, out, docs in start_cli(tmp_path, pause_env(env, marker, after_batch=2)):  # 1: the first load
        out.wait_for(lambda line: line.startswith("Watching "))
        staged = tmp_path / "new.md"
        staged.write_text("A new ledger lists the brass keys.\n", encoding="utf-8")
        os.replace(staged, docs / "new.md")
        wait_until_paused(marker, process)  # the batch has written new.md's chunks and waits there
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=FAILURE_TIMEOUT_S)
        assert process.returncode == 130, err
        assert "Stopped watching" in err and "a batch cut short is finished by the next load" in err
        assert "Traceback" not in err

        again = subprocess.run([sys.executable, "-m", "deepsearcher.cli", "load", str(docs), "-c", "notes", "--json"],
                               cwd=tmp_path, env=env, text=True, capture_output=True, timeout=FAILURE_TIMEOUT_S)
        assert again.returncode == 0, again.stderr
        statuses = {Path(f["source"]).name: f["status"] for f in json.loads(again.stdout)["files"]}
        assert statuses == {"first.md": "unchanged", "new.md": "unchanged"}  # the batch's write was whole


def test_ctrl_c_in_the_first_load_is_said_as_a_stopped_load(tmp_path: Path, env: dict[str, str]) -> None:
    """Cut before any watching began, the run says what a stopped load says (what it kept, how to resume), not
    "Stopped watching … 0 change batches"."""
    marker = tmp_path / "paused"
    for process, _, _ in start_cli(tmp_path, pause_env(env, marker, after_batch=1)):  # 1: the first load's batch
        wait_until_paused(marker, process)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=FAILURE_TIMEOUT_S)
        err = " ".join(err.split())
        assert process.returncode == 130, err
        assert "Interrupted." in err and "Re-run the same command to resume; nothing is duplicated." in err
        assert "Stopped watching" not in err and "Traceback" not in err
