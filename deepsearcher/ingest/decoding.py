"""Bounded reading of HTTP bodies: Content-Encoding undone with output limits, the decoded size capped.

httpx decodes bodies itself (``Response.iter_bytes``), but without output limits: its gzip/deflate decoders call
``zlib`` ``decompress(data)`` with no ``max_length`` (a 64 KB read can become ~64 MB), and its zstd and brotli ones
inflate a whole read at once (a 6 KB zstd body became 200 MB in one call). Here the raw bytes (``iter_raw``) go
through pull decoders, each asked for at most ``CHUNK`` bytes at a time by the stage after it, using the libraries'
own output limits: ``zlib.decompressobj().decompress(data, max_length)``, zstandard's ``stream_reader`` (with the
8 MB window RFC 9659 sets for the ``zstd`` content coding), and brotli's ``process(data, output_buffer_limit=...)``
(brotli >= 1.2). Stacked encodings (``Content-Encoding: gzip, zstd``) are undone in reverse order, at most
``MAX_ENCODINGS`` of them (curl's limit). Memory is therefore the cap plus a few chunks and decoder windows, whatever
the compression ratio.
"""

from __future__ import annotations

import zlib
from typing import Any, Iterable, Iterator, Protocol, cast

CHUNK = 64 * 1024
MAX_ENCODINGS = 5  # curl's MAX_ENCODE_STACK
ZSTD_MAX_WINDOW = 8 * 1024 * 1024  # RFC 9659 section 3: zstd content coding windows are at most 8 MB

try:  # optional libraries: an encoding is only advertised (Accept-Encoding) when it can be decoded with limits
    import zstandard
except ModuleNotFoundError:  # pragma: no cover - zstandard comes with the crawler's dependencies
    zstandard = None  # type: ignore[assignment]
try:
    import brotli
except ModuleNotFoundError:  # pragma: no cover
    brotli = None


class Readable(Protocol):
    def read(self, size: int = -1) -> bytes: ...


class DecodingError(Exception):
    """The body cannot be decoded (corrupt data, or an encoding this reader does not support)."""


class BodyTooLarge(Exception):
    """The body (on the wire or decoded) is larger than the limit; ``limit`` is in bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit} bytes")
        self.limit = limit


def supported_encodings() -> list[str]:
    """Content codings this reader decodes with output limits, best first (for Accept-Encoding)."""
    names = []
    if zstandard is not None:
        names.append("zstd")
    if brotli is not None and _brotli_has_limits():
        names.append("br")
    return names + ["gzip", "deflate"]


def accept_encoding() -> str:
    """The Accept-Encoding header value that matches ``supported_encodings``."""
    return ", ".join(supported_encodings())


def _brotli_has_limits() -> bool:
    try:
        brotli.Decompressor().process(b"", output_buffer_limit=1)
    except TypeError:  # brotli < 1.2 has no output limit: never ask for br
        return False
    except brotli.error:
        return True
    return True


class _Chunks:
    """``read(n)`` over an iterator of byte chunks (the raw body), counting the bytes on the wire."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""
        self._limit = limit
        self.wire_bytes = 0

    def read(self, size: int = -1) -> bytes:
        while not self._buffer:
            chunk = next(self._chunks, None)
            if chunk is None:
                return b""
            self.wire_bytes += len(chunk)
            if self.wire_bytes > self._limit:
                raise BodyTooLarge(self._limit)
            self._buffer = chunk
        size = len(self._buffer) if size < 0 else size
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


class _Zlib:
    """gzip (also concatenated members) or deflate (zlib-wrapped, or raw as some servers send it)."""

    def __init__(self, source: Readable, encoding: str) -> None:
        self._source = source
        self._gzip = encoding == "gzip"
        self._wbits = zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS
        self._d = zlib.decompressobj(self._wbits)
        self._tail = b""
        self._started = False
        self._done = False

    def read(self, size: int = -1) -> bytes:
        size = CHUNK if size < 0 else size
        while not self._done:
            if not self._tail:
                self._tail = self._source.read(CHUNK)
                if not self._tail:
                    self._done = True
                    return self._d.flush()  # input exhausted: only what zlib still holds (< one window)
            out = self._inflate(size)
            if self._d.eof:
                rest = self._d.unused_data
                self._tail = b""
                if self._gzip and rest.strip(b"\0"):  # another gzip member follows (RFC 1952 2.2)
                    self._d, self._tail = zlib.decompressobj(self._wbits), rest
                else:
                    self._done = True
            if out:
                return out
        return b""

    def _inflate(self, size: int) -> bytes:
        try:
            try:
                out = self._d.decompress(self._tail, size)
            except zlib.error:
                if self._gzip or self._started:
                    raise
                self._wbits = -zlib.MAX_WBITS  # "deflate" sent without the zlib header
                self._d = zlib.decompressobj(self._wbits)
                out = self._d.decompress(self._tail, size)
        except zlib.error as exc:
            raise DecodingError(f"corrupt {'gzip' if self._gzip else 'deflate'} body: {exc}") from None
        self._started = True
        self._tail = self._d.unconsumed_tail
        return out


class _Brotli:
    def __init__(self, source: Readable) -> None:
        self._source = source
        self._d = brotli.Decompressor()

    def read(self, size: int = -1) -> bytes:
        size = CHUNK if size < 0 else size
        try:
            while True:
                # pending output first: brotli may hold more than the last limit let out, even when it would
                # accept more input (its limit rounds up to whole 32 KB blocks)
                out = self._d.process(b"", output_buffer_limit=size)
                if out or self._d.is_finished():
                    return out
                data = self._source.read(CHUNK)
                if not data:
                    return b""  # truncated stream: keep what was decoded, like the other codings
                out = self._d.process(data, output_buffer_limit=size)
                if out:
                    return out
        except brotli.error as exc:
            raise DecodingError(f"corrupt br body: {exc}") from None


class _Zstd:
    def __init__(self, source: Readable) -> None:
        decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
        self._reader = decompressor.stream_reader(cast(Any, source), read_size=CHUNK, read_across_frames=True)

    def read(self, size: int = -1) -> bytes:
        try:
            return self._reader.read(CHUNK if size < 0 else size)
        except zstandard.ZstdError as exc:
            raise DecodingError(f"corrupt zstd body: {exc}") from None


def decoded_reader(raw: Iterable[bytes], content_encoding: str | None, wire_limit: int) -> Readable:
    """A ``read(n)`` reader of the decoded body.

    Args:
        raw: the body as received (``httpx.Response.iter_raw()``).
        content_encoding: the Content-Encoding header value (codings in the order they were applied), or None.
        wire_limit: bytes on the wire at most; more raises ``BodyTooLarge`` while reading.

    Raises:
        DecodingError: an unsupported coding, or more than ``MAX_ENCODINGS`` of them (raised here, before reading).
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > MAX_ENCODINGS:
        raise DecodingError(f"more than {MAX_ENCODINGS} content encodings ({content_encoding})")
    reader: Readable = _Chunks(raw, wire_limit)
    for coding in reversed(codings):  # the last one applied is undone first
        if coding in ("gzip", "x-gzip", "deflate"):
            reader = _Zlib(reader, "deflate" if coding == "deflate" else "gzip")
        elif coding == "zstd" and "zstd" in supported_encodings():
            reader = _Zstd(reader)
        elif coding == "br" and "br" in supported_encodings():
            reader = _Brotli(reader)
        else:
            raise DecodingError(f"unsupported content encoding {coding!r}")
    return reader


def read_capped(reader: Readable, limit: int, *, truncate: bool = False) -> bytes:
    """Read a decoded body of at most ``limit`` bytes.

    Args:
        truncate: keep the first ``limit`` bytes and stop reading (robots.txt), instead of raising.

    Raises:
        BodyTooLarge: more than ``limit`` bytes and not ``truncate`` (also raised by the wire count of
            ``decoded_reader``).
        DecodingError: corrupt compressed data.
    """
    body = bytearray()
    while True:
        chunk = reader.read(min(CHUNK, limit + 1 - len(body)))
        if not chunk:
            return bytes(body)
        body += chunk
        if len(body) > limit:
            if truncate:
                return bytes(body[:limit])
            raise BodyTooLarge(limit)
