"""Run a blocking query in a worker thread and hand its typed events to the event loop as Server-Sent Events.

The agent loop is synchronous (LLM calls, embedding, Milvus). Each query runs on a thread of a small pool owned by
the app, so the event loop keeps answering other requests; the query's ``on_event`` callback crosses into the loop
with ``call_soon_threadsafe``. When the client goes away, the next event the query emits raises ``QueryCancelled``
in the worker, which ends the run early instead of spending LLM tokens on nobody.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from concurrent.futures import Executor
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping

from sse_starlette import ServerSentEvent

from deepsearcher.errors import DeepSearcherError, without_hint
from deepsearcher.events import Event, EventCallback, QueryReport
from deepsearcher.types import Report

log = logging.getLogger(__name__)

REPORT_EVENT = QueryReport.kind
ERROR_EVENT = "error"


class QueryCancelled(Exception):
    """Raised inside the worker when the client that asked has disconnected."""


_DONE = object()


def error_payload(exc: BaseException, redact: Callable[[str], str] = str) -> dict[str, Any]:
    """The JSON body of an ``error`` event (the same shape as an HTTP error body); ``redact`` hides configured
    endpoints (``AccessPolicy.redact``)."""
    if isinstance(exc, DeepSearcherError):
        return {"detail": redact(without_hint(exc)), "hint": redact(exc.hint) if exc.hint else exc.hint,
                "type": type(exc).__name__}
    return {"detail": f"unexpected error ({type(exc).__name__}); see the server log", "hint": None,
            "type": "InternalError"}


def event_payload(event: Event, finish: Callable[[Report], dict[str, Any]], lines: bool = True) -> dict[str, Any]:
    """The JSON of an event's SSE frame: its fields (the report's JSON with its rendered forms, for ``query.report``)
    and, when asked (``lines``), the event in words (``Event.describe``), which the web page shows as the CLI prints
    them."""
    data = finish(event.report) if isinstance(event, QueryReport) else event.data
    return {**data, "lines": event.describe()} if lines else data


def sse(kind: str, data: Mapping[str, Any], seq: int) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(data, ensure_ascii=False, default=str), event=kind, id=str(seq))


def stream_events(executor: Executor, run: Callable[[EventCallback], Report],
                  finish: Callable[[Report], dict[str, Any]],
                  redact: Callable[[str], str] = str, lines: bool = False) -> AsyncIterator[ServerSentEvent]:
    """Start the query now and return the stream of its events, in the order they were emitted, then its report,
    or an ``error`` event.

    Args:
        executor: where the query runs; its ``submit`` may refuse (``workers.Busy``), which this raises before any
            response has started.
        run: ``on_event -> Report``; called on a worker thread.
        finish: the report's JSON with its rendered forms (Markdown, HTML).
        redact: hides configured endpoints in error details.
        lines: each event's data also holds its words (``event_payload``).

    Every event is ``event: <kind>`` with ``data: <JSON>`` and an increasing ``id``. The stream always ends with
    exactly one ``query.report`` or one ``error`` event. Must be called on the event loop.
    """
    running = start_run(executor, run)
    return _events(running, lambda event: event_payload(event, finish, lines), redact)


class Running:
    """A query started on a worker thread: its events cross into the event loop through ``queue``; ``cancelled``
    is set when the consumer stops listening, which ends the run at its next event (``QueryCancelled``)."""

    def __init__(self, queue: "asyncio.Queue[Any]", future: "asyncio.Future[Report]",
                 cancelled: threading.Event) -> None:
        self.queue, self.future, self.cancelled = queue, future, cancelled

    async def events(self) -> AsyncIterator[Event]:
        """The run's events in order, always ending with exactly one ``QueryReport``; raises the run's error after
        the events emitted before it. Stopping early (the client left) cancels the run."""
        saw_report = False
        try:
            while (item := await self.queue.get()) is not _DONE:
                if isinstance(item, QueryReport):
                    if saw_report:
                        continue
                    saw_report = True
                yield item
            report = await self.future
            if not saw_report:
                yield QueryReport(report)
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop listening: the run ends at its next event, its outcome is retrieved (never logged as lost)."""
        self.cancelled.set()
        self.future.add_done_callback(_consume)


def start_run(executor: Executor, run: Callable[[EventCallback], Report]) -> Running:
    """Submit ``run(on_event)`` to ``executor`` now (``workers.Busy`` is raised here, before any response starts)
    and return the handle whose ``events()`` streams it. Must be called on the event loop."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    cancelled = threading.Event()

    def post(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the server is shutting down
            cancelled.set()

    def on_event(event: Event) -> None:
        if cancelled.is_set():
            raise QueryCancelled("the client disconnected")
        post(event)

    def work() -> Report:
        try:
            return run(on_event)
        finally:
            post(_DONE)

    return Running(queue, asyncio.wrap_future(executor.submit(work)), cancelled)


def log_failure(exc: BaseException) -> None:
    """Log a failed run: a library error in one line, anything else with its trace (never sent to the client)."""
    if not isinstance(exc, DeepSearcherError):
        log.error("query failed", exc_info=exc)
    else:
        log.warning("query failed: %s", exc)


async def _events(running: Running, payload: Callable[[Event], dict[str, Any]],
                  redact: Callable[[str], str]) -> AsyncIterator[ServerSentEvent]:
    seq = 0
    try:
        async for event in running.events():
            seq += 1
            # every frame redacted, the report too (its web search note may quote a provider's error)
            yield sse(event.kind, _redacted(payload(event), redact), seq)
    except Exception as exc:  # the run failed: tell the client in-band, never as a trace
        log_failure(exc)
        yield sse(ERROR_EVENT, error_payload(exc, redact), seq + 1)
    finally:
        running.stop()


async def run_attended(executor: Executor, run: Callable[[EventCallback], Report],
                       receive: Callable[[], Awaitable[Mapping[str, Any]]]) -> Report | None:
    """Run a query for a ``stream: false`` request and return its report, or None when the client left first.

    The request's body has been read, so the next ASGI message is ``http.disconnect``; once it arrives the run is
    cancelled like a stream whose client went away (its next event raises ``QueryCancelled``), so a caller cannot
    queue long reports and walk away while they spend LLM tokens.

    Raises:
        workers.Busy: the executor refused the job (before anything ran).
    """
    cancelled = threading.Event()

    def on_event(_: Event) -> None:
        if cancelled.is_set():
            raise QueryCancelled("the client disconnected")

    future: asyncio.Future[Any] = asyncio.wrap_future(executor.submit(run, on_event))
    watcher: asyncio.Future[Any] = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({future, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not future.done():
            cancelled.set()
            future.add_done_callback(_consume)
        watcher.cancel()
    return future.result() if not cancelled.is_set() else None


async def _disconnected(receive: Callable[[], Awaitable[Mapping[str, Any]]]) -> None:
    """Return once the client has disconnected."""
    while (await receive()).get("type") != "http.disconnect":
        pass


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """An event's data with every string passed through ``redact``: events carry provider messages (a search
    provider's error may name its base URL with credentials, or echo its key), and the caller is not the operator."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    return value


def _consume(future: "asyncio.Future[Any]") -> None:
    """Retrieve a finished future's exception so asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()
