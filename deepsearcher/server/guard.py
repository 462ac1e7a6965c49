"""The checks every HTTP request passes before the app reads its body: host, token, cross-site, size.

A plain ASGI middleware (``RequestGuard``), outermost in the app, so that nothing below it has read a byte of the
body when it answers:

1. **Host** (loopback servers only): the ``Host`` header must name a loopback address, which blocks DNS-rebinding
   pages in a browser. 403.
2. **Token**: every ``/api/*``, ``/v1/*`` and ``/mcp`` path except ``/api/health`` needs
   ``Authorization: Bearer <token>`` when the server has one (always off loopback). Checked before the body is read
   or parsed: an unauthenticated 200 MB body gets its 401 at once and is never read, and malformed JSON without a
   token is 401, not 422. 401.
3. **Cross-site writes**: a state-changing request (POST, PUT, PATCH, DELETE) is refused when the browser marks it
   ``Sec-Fetch-Site: cross-site`` or ``same-site`` (403), or when its body is not declared ``application/json``
   (415). A foreign page can send a "simple" cross-origin POST (no preflight) only with a form or text content
   type, so requiring JSON leaves it nothing to send, whatever FastAPI version parses the body (FastAPI < 0.132
   parsed a body without a Content-Type as JSON).
4. **Body size**: a declared ``Content-Length`` above ``server.max_body_mb`` is refused at once, and a chunked body
   is counted as it is read and stopped past the cap. 413.

Sources: OWASP CSRF Prevention Cheat Sheet (Fetch Metadata, "Employing custom request headers for AJAX/API" —
a JSON content type forces a CORS preflight); the W3C Fetch Metadata Request Headers spec.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, MutableMapping

from deepsearcher.server.security import AccessPolicy, Refused, is_loopback_host

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
PUBLIC_API = {"/api/health"}
PROTECTED_PREFIXES = ("/api/", "/v1/", "/mcp")
"""Paths that need the token: the JSON API, the OpenAI-compatible endpoint and the MCP endpoint."""
JSON_TYPES = {"application/json"}


class RequestGuard:
    """ASGI middleware applying the module's checks to every HTTP request.

    Args:
        app: the ASGI app to protect.
        policy: token and loopback rules.
        max_body_bytes: the largest request body accepted.
    """

    def __init__(self, app: ASGIApp, *, policy: AccessPolicy, max_body_bytes: int) -> None:
        self.app = app
        self.policy = policy
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            self.check(scope["method"], scope["path"], headers)
        except Refused as exc:
            # A small declared body is read and dropped before the answer, so the connection closes cleanly: closing
            # while the client's body is still arriving makes the kernel reset the connection, and the client may see
            # "connection reset" instead of the answer. Anything larger (or chunked) is never read.
            drain = _small_declared_body(headers)
            if drain:
                await _drain(receive)
            await _answer(send, exc, close=not drain)
            return
        await self._capped(scope, receive, send)

    def check(self, method: str, path: str, headers: dict[str, str]) -> None:
        """Refuse a request by its method, path and headers alone.

        Raises:
            Refused: 403 (host, cross-site), 401 (token), 415 (not JSON), 413 or 400 (Content-Length).
        """
        if self.policy.loopback:
            host = headers.get("host", "")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host and not is_loopback_host(name):
                raise Refused(403, f"host {host!r} is not a loopback name",
                              hint="open the page as http://127.0.0.1:<port>/ or http://localhost:<port>/")
        if path.startswith(PROTECTED_PREFIXES) and path not in PUBLIC_API:
            self.policy.check_token(headers.get("authorization"))
        if method in STATE_CHANGING:
            site = headers.get("sec-fetch-site", "").strip().lower()
            if site in {"cross-site", "same-site"}:
                raise Refused(403, f"cross-site request refused (Sec-Fetch-Site: {site})",
                              hint="call the API from its own page or from a program, not from another site")
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media not in JSON_TYPES:
                raise Refused(415, f"the body must be JSON (Content-Type: application/json), not {media or 'none'!r}")
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise Refused(400, "invalid Content-Length")
            if int(declared) > self.max_body_bytes:
                raise self._too_large()

    def _too_large(self) -> Refused:
        return Refused(413, f"request body larger than {self.max_body_bytes / 1e6:g} MB (server.max_body_mb)",
                       hint="send fewer or shorter inputs")

    async def _capped(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app with a body counter: past the cap the app's reading fails, and whatever answer it makes of
        that (FastAPI versions differ: 400, 422 or an exception) is replaced by one 413."""
        seen = 0
        too_large = self._too_large()
        answered = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise BodyTooLarge(too_large.message)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if seen <= self.max_body_bytes:
                await send(message)
            elif not answered and message["type"] == "http.response.start":
                answered = True
                await _answer(send, too_large)

        try:
            await self.app(scope, counted, guarded_send)
        except BodyTooLarge:
            if not answered:
                await _answer(send, too_large)


class BodyTooLarge(Exception):
    """A request body passed ``server.max_body_mb`` while the app was reading it."""


DRAIN_LIMIT_BYTES = 64 * 1024
"""A refused request whose declared body is at most this size has the body read and dropped before the answer."""


def _small_declared_body(headers: dict[str, str]) -> bool:
    declared = headers.get("content-length", "").strip()
    return declared.isdigit() and int(declared) <= DRAIN_LIMIT_BYTES


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of a request body (at most ``DRAIN_LIMIT_BYTES``, by the caller's check)."""
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return


async def _answer(send: Send, exc: Refused, *, close: bool = True) -> None:
    """Send the JSON error body every endpoint uses (``ErrorBody``).

    Args:
        close: add ``Connection: close`` — the server then closes the connection instead of reading (and dropping)
            a body that was left unread.
    """
    body = json.dumps({"detail": exc.message, "hint": exc.hint, "type": "Refused"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    if exc.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
