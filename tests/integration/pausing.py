"""Interrupting a load at a known point instead of racing it (``deepsearcher/ingest/pause.py``).

A test starts the load with ``pause_env``, waits with ``wait_until_paused`` until the process that writes the batches
has written the n-th one and stopped there, then sends its signal: the load is always cut at the same point,
however fast or slow the machine is.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from deepsearcher.ingest.pause import PAUSE_VAR

#: bounds only a failure (the load died or hangs before the pause point); a passing test never waits for it
FAILURE_TIMEOUT_S = 900


def pause_env(env: dict[str, str], marker: Path, after_batch: int = 1) -> dict[str, str]:
    """``env`` plus the variable that pauses the load after its ``after_batch``-th written batch."""
    return {**env, PAUSE_VAR: f"{after_batch}:{marker}"}


def without_pause(env: dict[str, str]) -> dict[str, str]:
    """``env`` with no pause (for the re-run of a paused load)."""
    return {k: v for k, v in env.items() if k != PAUSE_VAR}


def wait_until_paused(marker: Path, process: subprocess.Popen) -> None:
    """Return once ``marker`` exists (the load is paused); fail with its stderr if ``process`` ended first."""
    deadline = time.monotonic() + FAILURE_TIMEOUT_S
    while not marker.exists():
        if process.poll() is not None:
            _, err = process.communicate()
            raise AssertionError(f"the load ended (exit {process.returncode}) before its pause point: {err}")
        assert time.monotonic() < deadline, f"the load did not reach its pause point in {FAILURE_TIMEOUT_S} s"
        time.sleep(0.1)


def resume(process: subprocess.Popen) -> None:
    """Let a paused load go on (SIGUSR1; SIGINT would interrupt it there instead)."""
    process.send_signal(signal.SIGUSR1)
