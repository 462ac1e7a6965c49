"""A real HTTP server on 127.0.0.1 (or another loopback address; free port, own thread) that serves a dict of routes
and records every request."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import urlsplit


@dataclass
class Route:
    """One response: status, headers and body; ``handler`` (if set) builds it from the request instead."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    handler: Callable[["Request"], "Route"] | None = None


@dataclass
class Request:
    """A request the server received."""

    method: str
    path: str  # with the query string
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def html(title: str, body: str, *, charset: str | None = "utf-8") -> Route:
    """An HTML page; ``charset=None`` sends ``text/html`` with no charset parameter."""
    text = f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
    ctype = "text/html" + (f"; charset={charset}" if charset else "")
    return Route(text.encode(charset or "utf-8"), headers={"Content-Type": ctype})


def json_route(data: Any, status: int = 200) -> Route:
    return Route(json.dumps(data).encode(), status, {"Content-Type": "application/json"})


class Site:
    """Serve ``routes`` (path -> Route; the query string is ignored for matching) until ``close()``.

    Args:
        routes: what to serve; unknown paths get a 404.
        host: the host name used in ``url()`` ("127.0.0.1", or "localhost" to be another host of the same machine).
        bind: the address listened on (e.g. "127.0.0.2", which address-policy tests declare public); ``host``
            defaults to it.
    """

    def __init__(self, routes: dict[str, Route], host: str | None = None, bind: str = "127.0.0.1") -> None:
        self.routes = routes
        self.host = host or bind
        self.requests: list[Request] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                req = Request(self.command, self.path, dict(self.headers), self.rfile.read(length) if length else b"")
                site.requests.append(req)
                route = site.routes.get(urlsplit(self.path).path) or Route(b"not found", 404)
                if route.handler is not None:
                    route = route.handler(req)
                self.send_response(route.status)
                for key, value in route.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self.server = ThreadingHTTPServer((bind, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def paths(self) -> list[str]:
        """Paths requested (without query), in order, robots.txt excluded."""
        return [urlsplit(r.path).path for r in self.requests if r.path != "/robots.txt"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
