"""Helpers for the HTTP server tests: a hash embedder, a scripted research run, and uvicorn on a free port."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from deepsearcher.testing import HashEmbedder  # noqa: F401  (re-exported for the server tests)
from deepsearcher.testing.scripted import chunk_numbers

#: bounds a wait for an event only when the test has already failed (a passing test never reaches it)
FAILURE_TIMEOUT_S = 120
QUESTION = "What is Milvus Lite?"
DESCRIPTION = "Notes on vector search: Milvus Lite and hybrid retrieval."
ANSWER = ("Milvus Lite is the embedded edition of the Milvus vector database that runs inside a Python process "
          "and stores everything in one local file [1].\n\n- It needs **no server** [1].\n"
          "- It was first built by penguins on the Moon [1].")  # a claim its source does not hold: the page's note

OUTLINE_QUESTIONS = ["What is Milvus Lite?", "Where does Milvus Lite store its data?", "Does it need a server?"]
DOCS = {
    "milvus.md": "# Milvus Lite\n\nMilvus Lite is the embedded edition of the Milvus vector database. It runs inside "
                 "a Python process and stores everything in one local file, so it needs no server.\n",
    "rag.md": "# Retrieval-augmented generation\n\nRetrieval-augmented generation answers questions from retrieved "
              "text chunks and cites the sources it used.\n",
}


def write_corpus(root: Path) -> tuple[Path, Path]:
    """Make ``root/allowed/docs`` (two Markdown files and a symlink leading out) and ``root/outside/secret.txt``.

    Returns:
        (allowed root, outside folder).
    """
    allowed, outside = root / "allowed", root / "outside"
    (allowed / "docs").mkdir(parents=True)
    outside.mkdir()
    for name, text in DOCS.items():
        (allowed / "docs" / name).write_text(text, encoding="utf-8")
    (outside / "secret.txt").write_text("TOP SECRET: the launch code is 0000.\n", encoding="utf-8")
    (allowed / "docs" / "escape.txt").symlink_to(outside / "secret.txt")
    return allowed, outside


def responder(gate: threading.Event | None = None, slow_word: str = "slowly",
              arrived: threading.Event | None = None) -> Callable[[Sequence[Any]], str]:
    """A scripted model that answers by step, whatever order concurrent queries call it in.

    A question containing ``slow_word`` sets ``arrived`` (the query is running, inside the model call) and waits for
    ``gate`` before its decomposition reply.
    """

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Break the question"):
            if gate is not None and slow_word in prompt:
                if arrived is not None:
                    arrived.set()
                assert gate.wait(FAILURE_TIMEOUT_S), "the test never released the slow query"
            return json.dumps({"sub_queries": [QUESTION]})
        if prompt.startswith("Choose the collections"):
            return json.dumps({"collections": ["docs"]})
        if "numbered text chunks" in prompt:
            return json.dumps({"relevant": chunk_numbers(prompt)[:1]})
        if "Search queries already run" in prompt:
            return json.dumps({"gap_queries": []})
        if prompt.startswith("Answer the question below"):
            return ANSWER
        if prompt.startswith("Choose the best strategy"):
            return json.dumps({"agent": "deep_search"})
        if prompt.startswith("Below is a sample of a document collection"):  # a load without a description
            return DESCRIPTION
        # DeepResearch: search once, then answer citing the first item; the evaluator accepts
        if prompt.startswith("You are researching"):
            if "Knowledge gathered so far (cite an item as [n]):\n(nothing yet)" in prompt:
                return json.dumps({"action": "search", "queries": [QUESTION]})
            return json.dumps({"action": "answer", "answer": ANSWER})
        if prompt.startswith("Decide which checks"):
            return json.dumps({"definitive": True, "attribution": True})
        if prompt.startswith("You are a strict reviewer"):
            return json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
        # long reports: a two-section outline, sections written from their sources, an editing pass that keeps them
        if prompt.startswith("Plan the table of contents"):
            return json.dumps({"title": "Milvus Lite", "sections": [
                {"title": f"Part {i}", "question": q} for i, q in enumerate(OUTLINE_QUESTIONS, start=1)]})
        if prompt.startswith("Write the section"):
            return "Milvus Lite runs inside a Python process [1]."
        if prompt.startswith("Below is the draft"):
            draft = prompt.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]
            return f"## Introduction\n\nAbout Milvus Lite [1].\n\n{draft}\n\n## Conclusion\n\nDone [1]."
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")

    return reply


def scripted_llm(gate: threading.Event | None = None, calls: int = 400, arrived: threading.Event | None = None) -> Any:
    from deepsearcher.testing.scripted import ScriptedChatModel

    return ScriptedChatModel([responder(gate, arrived=arrived)] * calls)


@dataclass(frozen=True)
class StreamWatch:
    """One query stream of the server: ``closed`` is set once the server stopped streaming it (the client went away,
    or the stream ended), ``finished`` once its run returned or raised."""

    closed: threading.Event
    finished: threading.Event


def watch_query_streams(monkeypatch: Any) -> list[StreamWatch]:
    """Watch every query stream the server starts from now on (in order), so a test waits for these moments instead
    of sleeping. Wraps ``server.streaming._events``, which receives each stream's ``Running`` (its cancel flag and
    run future)."""
    from deepsearcher.server import streaming

    real = streaming._events
    watched: list[StreamWatch] = []

    def spy(running: Any, *rest: Any) -> Any:
        finished = threading.Event()
        running.future.add_done_callback(lambda _: finished.set())
        watched.append(StreamWatch(running.cancelled, finished))
        return real(running, *rest)

    monkeypatch.setattr(streaming, "_events", spy)
    return watched


class LiveServer:
    """uvicorn serving ``app`` on ``host`` (default 127.0.0.1) at a free port, in a background thread."""

    def __init__(self, app: Any, host: str = "127.0.0.1") -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + FAILURE_TIMEOUT_S  # readiness; the bound only ends a failed start
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Parse Server-Sent Events from text lines: yields ``{"event", "id", "data"}`` (data JSON-decoded)."""
    frame: dict[str, Any] = {}
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield {"event": frame.get("event", "message"), "id": frame.get("id"), "data": json.loads("\n".join(data))}
            frame, data = {}, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        else:
            frame[field] = value
    if data:
        yield {"event": frame.get("event", "message"), "id": frame.get("id"), "data": json.loads("\n".join(data))}
