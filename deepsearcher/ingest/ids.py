"""Content-derived identifiers, so that re-loading upserts instead of duplicating."""

from __future__ import annotations

import hashlib
from pathlib import Path


def chunk_id(source: str, title: str, page: int | None, text: str) -> str:
    """Primary key of a chunk: 32 hex chars of SHA-256 over (source, title, page, text).

    The same chunk of the same source always gets the same id, so an upsert of an unchanged chunk is a no-op and an
    interrupted load that is run again writes no duplicates. Identical text in two sources gives two ids (each is
    cited separately).
    """
    h = hashlib.sha256()
    for part in (source, title, "" if page is None else str(page), text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:32]


def file_hash(path: Path, *, extra: str = "") -> str:
    """SHA-256 (32 hex chars) of a file's bytes plus ``extra`` (e.g. the splitter settings).

    Args:
        path: file to hash, read in 1 MiB blocks.
        extra: text mixed into the hash so that changing chunk size re-splits unchanged files.
    """
    h = hashlib.sha256(extra.encode("utf-8"))
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:32]


def bytes_hash(data: bytes, *, extra: str = "") -> str:
    """SHA-256 (32 hex chars) of bytes plus ``extra``; the version of a fetched web page."""
    return hashlib.sha256(extra.encode("utf-8") + b"\x00" + data).hexdigest()[:32]
