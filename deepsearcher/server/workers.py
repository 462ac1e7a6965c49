"""Bounded work queues for the server's long jobs (loads, queries), apart from Starlette's shared thread pool.

A job that waits must not hold a thread other requests need: before this, 45 loads waiting for the load lock filled
Starlette's 40-thread pool and ``/api/health``, ``/api/collections`` and the page stopped answering. Each kind of
long job now has its own ``WorkQueue``: a fixed number of worker threads and a bounded number of waiting jobs; one
more is refused at once (``Busy``, answered 429 with ``Retry-After``) instead of piling up.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

T = TypeVar("T")

RETRY_AFTER_S = 30  # what a refused caller is told to wait; loads and queries take tens of seconds


class Busy(Exception):
    """A work queue is full; ``str(exc)`` says which. Answered 429 with ``Retry-After: RETRY_AFTER_S``."""


class WorkQueue(Executor):
    """A thread pool whose queue is bounded: ``workers`` jobs run, at most ``max_waiting`` wait, more are refused.

    Args:
        workers: threads (jobs running at once).
        max_waiting: jobs that may wait for a thread.
        name: thread-name prefix, also used in the ``Busy`` message ("loads", "queries").
    """

    def __init__(self, workers: int, max_waiting: int, name: str) -> None:
        self.name = name
        self.limit = workers + max_waiting
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=f"deepsearcher-{name}")
        self._lock = threading.Lock()
        self._admitted = 0

    @property
    def admitted(self) -> int:
        """Jobs running or waiting now."""
        return self._admitted

    def reserve(self) -> "Place":
        """Take a place for one job now, when its request arrives, and run the job on it later (``Place.submit``)
        or give it back (``Place.cancel``). A request that takes its place before its checks (collections, the LLM)
        is refused at once when the queue is full: counted only at submit, a burst on a loaded machine was all
        admitted to those checks and timed out there instead of being answered 429.

        Raises:
            Busy: ``workers + max_waiting`` jobs (or places) are already taken.
        """
        with self._lock:
            if self._admitted >= self.limit:
                raise Busy(f"too many {self.name} in progress ({self.limit} running or waiting); try again later")
            self._admitted += 1
        return Place(self)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Queue ``fn(*args, **kwargs)`` (``reserve`` and its place's ``submit`` at once).

        Raises:
            Busy: ``workers + max_waiting`` jobs are already running or waiting.
        """
        return self.reserve().submit(fn, *args, **kwargs)

    def submit_own(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Queue one of the server's own jobs (a folder watch's load), admitted even when the queue is full: each
        watch has at most one job at a time, so they are bounded by ``server.watch``, and a busy API never makes a
        watch drop a change. It still runs in turn, on the same workers."""
        with self._lock:
            self._admitted += 1
        return Place(self).submit(fn, *args, **kwargs)

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


class Place(Executor):
    """One admitted place in a ``WorkQueue`` (``WorkQueue.reserve``): runs one job, or is given back.

    An ``Executor``, so the query streaming code takes it where it takes the queue."""

    def __init__(self, queue: WorkQueue) -> None:
        self._queue = queue
        self._held = True
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` on the queue's workers in this place; the place is freed when it ends.

        Raises:
            RuntimeError: the place already ran a job or was given back.
        """
        self._take()
        try:
            future = self._queue._pool.submit(fn, *args, **kwargs)
        except BaseException:
            self._queue._release()
            raise
        future.add_done_callback(lambda _: self._queue._release())
        return future

    def cancel(self) -> None:
        """Give the place back if no job ran in it (the request failed its checks, or ended before submitting);
        nothing once a job was submitted (it frees the place when it ends)."""
        with self._lock:
            held, self._held = self._held, False
        if held:
            self._queue._release()

    def _take(self) -> None:
        with self._lock:
            if not self._held:
                raise RuntimeError("a queue place runs one job")
            self._held = False
