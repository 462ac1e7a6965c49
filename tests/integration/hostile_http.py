"""A hostile HTTP server for crawler security tests: bombs, trickles and redirects, on any local address.

It speaks HTTP/1.0 and closes every connection, so each request of a crawl opens (and the crawler vets) a new one.
Routes (GET; the query string carries the parameters):

  /page                     a small HTML page with main text
  /secret                   the "internal" page, with the words INTERNAL-SECRET-4242
  /links?u=URL              a page linking to URL
  /redirect?to=URL          302 to URL
  /bomb?enc=E&mb=N          N MB of spaces in a <p>, compressed with E (gzip, deflate, br, zstd, or a stack such as
                            "gzip, zstd" in the order applied); the body is a few KB
  /slowhead?every=S&for=T   the status line, then one header byte every S s for T s
  /slowbody?every=S&for=T   headers, then one body byte every S s for T s
  /reason?code=N&phrase=P   status N with the reason phrase P (default 404 "Not Found [/red]")
  /titled?title=T           a page whose <title> is T (HTML-escaped)
  /hold                     nothing until the test sets ``release`` (``held`` is set when one arrives), then 404
  /robots.txt               per ``robots``: none (404), ok, gzbomb:N, slow:S:T, redirect:URL, chain (endless
                            redirects /robots-0 -> /robots-1 -> ...), hold (a first byte, then nothing until
                            ``release``; then allow all)
Every request is recorded (path with query, Host header) in ``requests``.
"""

from __future__ import annotations

import functools
import html
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: the longest a /hold request waits for ``release`` (only a failed test gets there)
HOLD_LIMIT_S = 120
TEXT = ("Hostile probe page. This paragraph has enough words for trafilatura to treat it as the main text of the "
        "page, which it needs before it extracts anything at all from an article body.")


def page(title: str, text: str = TEXT, link: str | None = None) -> bytes:
    anchor = f'<p><a href="{link}">next</a></p>' if link else ""
    return (f"<!doctype html><html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
            f"<p>{text}</p>{anchor}</article></body></html>").encode()


def _spaces(mb: int, head: bytes = b"<!doctype html><html><body><p>", tail: bytes = b"</p></body></html>"):
    yield head
    block = b" " * 1_000_000
    for _ in range(mb):
        yield block
    yield tail


def _compress(coding: str, parts) -> bytes:
    """One coding applied to an iterable of byte parts, streamed (the plain text never sits in memory)."""
    if coding in ("gzip", "deflate"):
        c = zlib.compressobj(9, zlib.DEFLATED, 31 if coding == "gzip" else 15)
        return b"".join(c.compress(p) for p in parts) + c.flush()
    if coding == "zstd":
        import zstandard
        c = zstandard.ZstdCompressor(level=19).compressobj()
        return b"".join(c.compress(p) for p in parts) + c.flush()
    if coding == "br":
        import brotli
        c = brotli.Compressor(quality=5)
        return b"".join(c.process(p) for p in parts) + c.finish()
    raise ValueError(coding)


@functools.lru_cache(maxsize=16)
def bomb(codings: str, mb: int, robots: bool = False) -> bytes:
    """N MB of spaces (an HTML page, or comment lines for robots.txt) with the codings applied in order."""
    parts = _spaces(mb, b"# ", b"\nUser-agent: *\nAllow: /\n") if robots else _spaces(mb)
    body = _compress(codings.split(",")[0].strip(), parts)
    for coding in codings.split(",")[1:]:
        body = _compress(coding.strip(), [body])
    return body


class HostileServer:
    """Serve the routes above on ``host`` (port 0 = a free one) in a daemon thread until ``close()``."""

    def __init__(self, host: str = "127.0.0.1", robots: str = "none", port: int = 0) -> None:
        self.host = host
        self.robots = robots
        self.requests: list[tuple[str, str]] = []
        self.held, self.release = threading.Event(), threading.Event()  # the /hold route
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                server.requests.append((self.path, self.headers.get("Host", "")))
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                try:
                    server.route(self, parts.path, query)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the crawler hung up (a deadline or a cap): that is the point

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [urlsplit(p).path for p, _ in self.requests]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    # --- routes ----------------------------------------------------------------------------------------------------
    @staticmethod
    def send(h: BaseHTTPRequestHandler, body: bytes, status: int = 200, ctype: str = "text/html; charset=utf-8",
             **headers: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            h.send_header(key.replace("_", "-"), value)
        h.end_headers()
        h.wfile.write(body)

    def route(self, h: BaseHTTPRequestHandler, path: str, q: dict[str, str]) -> None:
        if path == "/robots.txt" or path.startswith("/robots-"):
            return self.robots_txt(h, path)
        if path == "/page":
            return self.send(h, page("probe page"))
        if path == "/secret":
            return self.send(h, page("internal", "INTERNAL-SECRET-4242 " + TEXT))
        if path == "/links":
            return self.send(h, page("link page", link=q["u"]))
        if path == "/redirect":
            return self.send(h, b"", 302, Location=q["to"])
        if path == "/bomb":
            codings = q.get("enc", "gzip")
            return self.send(h, bomb(codings, int(q.get("mb", "200"))), Content_Encoding=codings)
        if path == "/reason":
            h.send_response(int(q.get("code", "404")), q.get("phrase", "Not Found [/red]"))
            h.send_header("Content-Length", "0")
            h.end_headers()
            return None
        if path == "/titled":
            return self.send(h, page(html.escape(q.get("title", "[/red]"))))
        if path == "/hold":
            self.held.set()
            self.release.wait(HOLD_LIMIT_S)
            return self.send(h, b"not found", 404, "text/plain")
        if path in ("/slowhead", "/slowbody"):
            return self.trickle(h, path == "/slowhead", float(q.get("every", "0.3")), float(q.get("for", "20")))
        return self.send(h, b"not found", 404, "text/plain")

    def trickle(self, h: BaseHTTPRequestHandler, in_headers: bool, every: float, total: float) -> None:
        body = page("slow")
        if in_headers:
            h.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
        else:
            h.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + body[:100])
        start = time.monotonic()
        while time.monotonic() - start < total:
            h.wfile.flush()
            time.sleep(every)
            h.wfile.write(b"a" if in_headers else b" ")
        h.wfile.write(b"\r\nContent-Type: text/html\r\n\r\n" + body if in_headers else body[100:])

    def robots_txt(self, h: BaseHTTPRequestHandler, path: str) -> None:
        mode, _, arg = self.robots.partition(":")
        if mode == "ok":
            return self.send(h, b"User-agent: *\nAllow: /\n", ctype="text/plain")
        if mode == "gzbomb":
            return self.send(h, bomb("gzip", int(arg), robots=True), ctype="text/plain", Content_Encoding="gzip")
        if mode == "redirect":
            return self.send(h, b"", 302, Location=arg)
        if mode == "chain":
            n = int(path.rsplit("-", 1)[1]) + 1 if path.startswith("/robots-") else 0
            return self.send(h, b"", 302, Location=f"/robots-{n}")
        if mode == "hold":  # the first bytes, then nothing until the test sets ``release``; then allow all
            h.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n#")
            h.wfile.flush()
            self.held.set()
            self.release.wait(HOLD_LIMIT_S)
            h.wfile.write(b"\nUser-agent: *\nAllow: /\n")
            return None
        if mode == "slow":
            every, total = (float(x) for x in arg.split(":"))
            h.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
            start = time.monotonic()
            while time.monotonic() - start < total:
                h.wfile.write(b"#")
                h.wfile.flush()
                time.sleep(every)
            h.wfile.write(b"\nUser-agent: *\nDisallow: /\n")
            return None
        return self.send(h, b"not found", 404, "text/plain")
