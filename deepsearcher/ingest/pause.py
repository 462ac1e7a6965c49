"""A test-only pause at one named point of a load: right after a process has written its n-th batch (``write_batch``,
which both ingestion engines call).

A test that interrupts a load must not race it: a load can finish before a Ctrl-C sent "once rows appear" arrives.
With ``DEEPSEARCHER_TEST_PAUSE_AFTER_BATCH=<n>:<path>`` in its environment, the process that writes the n-th batch
creates the file ``path`` (its pid inside) and then waits for a signal: SIGINT interrupts the load there
(KeyboardInterrupt, as a Ctrl-C anywhere else would), SIGUSR1 lets it go on. Off the main thread (a Ray writer) no
signal is delivered: it waits until the process is stopped. The test waits for the file, then sends the signal, so
the load is always interrupted (or watched) at the same point. Unset (always, outside the tests) it costs one
environment look-up per batch.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

PAUSE_VAR = "DEEPSEARCHER_TEST_PAUSE_AFTER_BATCH"

_batches_written = 0
_SIGNALS = {signal.SIGINT, signal.SIGUSR1} if hasattr(signal, "SIGUSR1") else {signal.SIGINT}


def after_batch_written() -> None:
    """Count a written batch; at the batch named by ``$DEEPSEARCHER_TEST_PAUSE_AFTER_BATCH``, say so and wait.

    Raises:
        KeyboardInterrupt: SIGINT arrived during the pause (as it would have anywhere else in the load).
        ValueError: the variable is not ``<n>:<path>``.
    """
    global _batches_written
    spec = os.environ.get(PAUSE_VAR)
    if not spec:
        return
    count, marker = _pause_at(spec)
    _batches_written += 1
    if _batches_written != count:
        return
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        _say_paused(marker)
        threading.Event().wait()  # no signal reaches this thread: wait until the process is stopped
    # blocked before the marker appears, so a signal sent once the test sees it is pending, never lost
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        _say_paused(marker)
        received = signal.sigwait(_SIGNALS)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    if received == signal.SIGINT:
        raise KeyboardInterrupt


def _pause_at(spec: str) -> tuple[int, Path]:
    count, sep, path = spec.partition(":")
    if not (sep and count.isdigit() and int(count) > 0 and path):
        raise ValueError(f"{PAUSE_VAR}={spec!r} is not <n>:<path> (pause after the n-th written batch, n >= 1)")
    return int(count), Path(path)


def _say_paused(marker: Path) -> None:
    partial = marker.with_name(marker.name + ".part")  # renamed into place: the test never reads half a file
    partial.write_text(str(os.getpid()), encoding="utf-8")
    partial.replace(marker)
