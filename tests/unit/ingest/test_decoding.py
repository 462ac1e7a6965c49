"""Bounded body decoding: every content coding, stacks of them, caps, corrupt and unsupported input."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
import zstandard

from deepsearcher.ingest.decoding import (
    CHUNK, MAX_ENCODINGS, BodyTooLarge, DecodingError, accept_encoding, decoded_reader, read_capped)

TEXT = b"<p>" + b"Mallard ducks dabble in shallow ponds. " * 5000 + b"</p>"  # ~200 KB


def encode(coding: str, data: bytes) -> bytes:
    if coding == "gzip":
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "raw-deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if coding == "br":
        return brotli.compress(data)
    if coding == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    raise ValueError(coding)


def chunks(data: bytes, size: int = 1000) -> list[bytes]:
    """The body as a server might send it, in small pieces (decoders must carry state across them)."""
    return [data[i:i + size] for i in range(0, len(data), size)]


def decode(body: bytes, header: str | None, limit: int = 10_000_000, truncate: bool = False) -> bytes:
    return read_capped(decoded_reader(chunks(body), header, limit), limit, truncate=truncate)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_each_coding_round_trips(coding: str) -> None:
    assert decode(encode(coding, TEXT), coding) == TEXT
    assert decode(encode(coding, TEXT), coding.upper() + " ") == TEXT  # names are case-insensitive


def test_identity_x_gzip_raw_deflate_and_concatenated_gzip_members() -> None:
    assert decode(TEXT, None) == TEXT and decode(TEXT, "identity") == TEXT
    assert decode(encode("gzip", TEXT), "x-gzip") == TEXT
    assert decode(encode("raw-deflate", TEXT), "deflate") == TEXT  # servers that omit the zlib header
    assert decode(gzip.compress(b"first ") + gzip.compress(b"second"), "gzip") == b"first second"


def test_stacked_codings_are_undone_in_reverse_order() -> None:
    body = encode("zstd", encode("br", encode("gzip", TEXT)))
    assert decode(body, "gzip, br, zstd") == TEXT
    with pytest.raises(DecodingError):
        decode(body, "zstd, br, gzip")  # the wrong order is corrupt data, not a crash


def test_unsupported_and_too_many_codings_are_refused_before_reading() -> None:
    with pytest.raises(DecodingError, match="unsupported content encoding 'compress'"):
        decoded_reader([], "compress", 100)
    with pytest.raises(DecodingError, match=f"more than {MAX_ENCODINGS}"):
        decoded_reader([], ", ".join(["gzip"] * (MAX_ENCODINGS + 1)), 100)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_corrupt_data_is_a_decoding_error(coding: str) -> None:
    body = encode(coding, TEXT)[:4] + b"\xff" * 200  # a valid start, then garbage
    with pytest.raises(DecodingError, match=f"corrupt {coding}"):
        decode(body, coding)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_bombs_stop_at_the_cap_after_reading_little(coding: str) -> None:
    """50 MB of zeros compress to a few KB; decoding stops one chunk past a 1 MB cap, never inflating the rest."""
    bomb = encode(coding, bytes(50_000_000))
    pulled: list[int] = []

    def wire():
        for piece in chunks(bomb, 4096):
            pulled.append(len(piece))
            yield piece

    reader = decoded_reader(wire(), coding, 10_000_000)
    with pytest.raises(BodyTooLarge):
        read_capped(reader, 1_000_000)
    assert sum(pulled) < len(bomb) // 10 + 8192  # most of the compressed body was never even read
    assert len(reader.read(CHUNK)) <= CHUNK + 65536  # and each further read stays bounded


def test_every_read_is_bounded_even_for_one_huge_compressed_chunk() -> None:
    reader = decoded_reader([encode("zstd", bytes(200_000_000))], "zstd", 10_000_000)
    assert all(len(reader.read(CHUNK)) <= CHUNK for _ in range(20))


def test_truncate_keeps_the_first_bytes() -> None:
    assert decode(encode("gzip", TEXT), "gzip", limit=1000, truncate=True) == TEXT[:1000]


def test_wire_bytes_are_capped_too() -> None:
    with pytest.raises(BodyTooLarge):
        read_capped(decoded_reader(chunks(TEXT), None, 50_000), 10_000_000)


def test_accept_encoding_names_only_what_can_be_decoded_with_limits() -> None:
    assert accept_encoding() == "zstd, br, gzip, deflate"
