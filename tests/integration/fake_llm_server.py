"""A scripted OpenAI-compatible server on 127.0.0.1 (``http.server`` in a thread) that speaks one server family's wire
behaviour: each route answers from a script the test writes, so every behaviour is reproduced exactly, with no
timing involved.

A ``Script`` maps ``(method, path)`` to a handler ``(request) -> Reply``; ``/v1/chat/completions`` replies are
taken in order from ``chats`` (the last repeats). Every request is recorded with the number of chat requests in
flight when it arrived, so a test can assert that requests were never concurrent.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """One HTTP reply: a JSON body, or a raw SSE body (``sse``); ``wait`` is an event the handler waits for (at
    most 30 s) before answering."""

    status: int = 200
    body: Any = None
    sse: str | None = None
    wait: threading.Event | None = None


@dataclass
class Seen:
    method: str
    path: str
    body: Any
    in_flight: int
    index: int  #: 0-based among the chat requests (-1 for other routes)


Handler = Callable[[Seen], Reply]


def completion(content: str, *, reasoning: str | None = None, finish: str = "stop") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}


def chunk(finish: str | None = None, **delta: Any) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def stream(*chunks: dict[str, Any], done: bool = True, raw: str = "") -> str:
    """An SSE body: ``data:`` per chunk, then ``raw`` lines as given, then ``data: [DONE]``."""
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + raw
    return body + ("data: [DONE]\n\n" if done else "")


def full_stream(text: str) -> str:
    """A complete streamed reply of ``text``."""
    return stream(chunk(role="assistant"), chunk(content=text), chunk(finish="stop"))


#: llama-cpp-python's server interrupting a streamed reply: the role chunk, then [DONE] with no finish reason
CUT_STREAM = stream(chunk(role="assistant"))


@dataclass
class FakeLLMServer:
    """The scripted server; use as a context manager (``base_url`` is its ``…/v1``)."""

    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    chats: list[Reply | Handler] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def chat_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.path == "/v1/chat/completions"]

    def _answer(self, seen: Seen) -> Reply:
        if seen.index >= 0:
            planned = self.chats[min(seen.index, len(self.chats) - 1)]
            return planned(seen) if callable(planned) else planned
        handler = self.routes.get((seen.method, seen.path))
        return handler(seen) if handler else Reply(404, {"detail": "Not Found"})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                chat = self.path == "/v1/chat/completions"
                with server._lock:
                    if chat:
                        server._in_flight += 1
                        server.max_in_flight = max(server.max_in_flight, server._in_flight)
                    index = len(server.chat_requests) if chat else -1
                    seen = Seen(method, self.path, json.loads(raw) if raw else None, server._in_flight, index)
                    server.seen.append(seen)
                try:
                    reply = server._answer(seen)
                    if reply.wait is not None:
                        reply.wait.wait(30)
                finally:  # before the reply is sent: the client cannot have sent its next request yet
                    if chat:
                        with server._lock:
                            server._in_flight -= 1
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a read timeout the test provoked)

            def _send(self, reply: Reply) -> None:
                if reply.sse is not None:
                    data, kind = reply.sse.encode(), "text/event-stream"
                else:
                    data, kind = json.dumps(reply.body).encode(), "application/json"
                self.send_response(reply.status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        return Handler


def ok(data: Any) -> Handler:
    return lambda seen: Reply(200, data)
