"""An httpx client whose every connection goes to an address the policy allows, within one deadline per request.

Where the checks sit: httpx hands connections to httpcore, and httpcore opens them through a *network backend*
(public API since httpcore 0.17: ``httpcore.NetworkBackend.connect_tcp(host, port, ...)``). ``GuardedBackend``
resolves the host **once** with ``AddressPolicy.vet`` (every address checked), then asks httpcore's own
``SyncBackend`` to connect to the vetted address literal, so no second DNS lookup happens between the check and the
connect (DNS rebinding has no window). TLS still verifies and sends SNI for the URL's host name, because httpcore
calls ``start_tls(server_hostname=<the URL's host>)`` on the stream we return, and httpx sends the Host header from
the URL; only the socket's peer is pinned. Every connection of the client, whatever caused it (a start URL, a
redirect hop, a link, robots.txt), takes this path; pooled keep-alive connections were vetted when opened.

httpx offers no public way to give its default transport a network backend (encode/httpx PR #3749 is open), so
``GuardedTransport`` is a small ``httpx.BaseTransport`` over ``httpcore.ConnectionPool`` (both public APIs), mapping
httpcore's exceptions to httpx's as httpx's own transport does.

Deadline: ``request_deadline(seconds)`` sets, for the current thread, one wall-clock deadline that every socket
operation of the request respects (connect, TLS handshake, each write and read); the stream wrapper passes
``min(timeout, time left)`` to every call and raises a timeout once the time is up. Trickled headers or bodies
therefore end at the deadline, not ``timeout`` after the last byte. DNS resolution itself is bounded only by the
system resolver's own timeouts (resolv.conf), as ``getaddrinfo`` cannot be interrupted.

Proxies: none. The client ignores HTTP(S)_PROXY/ALL_PROXY (and .netrc): through a proxy the address connected to is
the proxy's, and the proxy resolves the target itself, so the policy could only check a name, which DNS rebinding
defeats.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
import typing
from typing import Iterable, Iterator

import httpcore
import httpx

from deepsearcher.net.policy import AddressPolicy

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deepsearcher_http_deadline", default=None)


@contextlib.contextmanager
def request_deadline(seconds: float) -> Iterator[float]:
    """Within the block, every socket operation of this thread ends by ``now + seconds`` (monotonic clock)."""
    deadline = time.monotonic() + seconds
    token = _DEADLINE.set(deadline)
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


def _time_left(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` capped by the current deadline; raises ``expired`` when the deadline has passed."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the request deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the request deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: typing.Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _time_left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore network backend: resolve once, check every address with the policy, connect to a vetted one.

    Args:
        policy: the address policy (``AddressPolicy.vet`` raises ``AddressRefused``, which propagates unchanged).
    """

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[typing.Any] | None = None) -> httpcore.NetworkStream:
        try:
            addresses = self.policy.vet(host, port)
        except UnicodeError as exc:
            raise httpcore.ConnectError(f"invalid host name {host!r}: {exc}") from None
        except OSError as exc:  # socket.gaierror: the name does not resolve
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from None
        failure: Exception | None = None
        for address in addresses:  # in the resolver's order, like socket.create_connection
            try:
                stream = self._inner.connect_tcp(address, port, _time_left(timeout, httpcore.ConnectTimeout),
                                                 local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _DeadlineStream(stream)
        assert failure is not None  # vet() never returns an empty list
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[typing.Any] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("Unix sockets are never used for fetched URLs")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


# httpcore exception -> httpx exception, most specific first (what httpx's own HTTPTransport maps)
_EXCEPTIONS: list[tuple[type[Exception], type[httpx.HTTPError]]] = [
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException), (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError), (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError), (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError), (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
]


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for source, target in _EXCEPTIONS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            with _httpx_errors():
                close()


class GuardedTransport(httpx.BaseTransport):
    """httpx transport over an ``httpcore.ConnectionPool`` that connects through ``GuardedBackend``.

    Args:
        policy: the address policy.
        max_connections: connections open at once (and kept alive).
    """

    def __init__(self, policy: AddressPolicy, max_connections: int) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=max_connections,
            max_keepalive_connections=max_connections, network_backend=GuardedBackend(policy))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                             target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _httpx_errors():
            response = self._pool.handle_request(core)
        assert isinstance(response.stream, Iterable)
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_ResponseStream(response.stream), extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()


def guarded_client(policy: AddressPolicy, *, timeout_s: float, max_connections: int,
                   headers: dict[str, str] | None = None) -> httpx.Client:
    """An httpx client for fetching URLs from outside: policy at connect time, no proxies, no automatic redirects.

    Use ``request_deadline(timeout_s)`` around each request (and the reading of its body) for the wall-clock limit;
    ``timeout_s`` here is also httpx's per-operation timeout.
    """
    return httpx.Client(transport=GuardedTransport(policy, max_connections), headers=headers,
                        timeout=httpx.Timeout(timeout_s), follow_redirects=False, trust_env=False)
