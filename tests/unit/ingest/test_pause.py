"""The tests' pause point of a load (``ingest/pause.py``): the n-th written batch stops there until a signal."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from deepsearcher.ingest import pause
from deepsearcher.ingest.pause import PAUSE_VAR, after_batch_written

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pause after the 2nd batch written from now on; the marker file it makes."""
    monkeypatch.setattr(pause, "_batches_written", 0)
    monkeypatch.setenv(PAUSE_VAR, f"2:{tmp_path / 'paused'}")
    return tmp_path / "paused"


def _signal_once_paused(marker: Path, signum: int) -> threading.Thread:
    """A thread that sends ``signum`` to the main thread once ``marker`` exists (the pause has begun)."""

    def run() -> None:
        deadline = time.monotonic() + 60  # only a broken pause gets there
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(threading.main_thread().ident or 0, signum)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_named_batch_pauses_until_sigusr1_lets_it_go_on(marker: Path) -> None:
    after_batch_written()
    assert not marker.exists()  # batch 1 goes on
    thread = _signal_once_paused(marker, signal.SIGUSR1)
    after_batch_written()  # batch 2 waits here for the signal
    thread.join()
    assert marker.read_text(encoding="utf-8") == str(os.getpid())
    after_batch_written()  # later batches go on


def test_sigint_during_the_pause_is_a_keyboard_interrupt_there(marker: Path) -> None:
    after_batch_written()
    thread = _signal_once_paused(marker, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        after_batch_written()
    thread.join()


def test_unset_it_never_pauses_and_a_bad_value_names_the_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PAUSE_VAR, raising=False)
    for _ in range(3):
        after_batch_written()
    monkeypatch.setenv(PAUSE_VAR, "first:/tmp/x")
    with pytest.raises(ValueError, match=r"is not <n>:<path>"):
        after_batch_written()
