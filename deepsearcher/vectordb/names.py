"""Collection names: the rule every store enforces (Milvus's, the strictest of the stores we target); and how a
``vector_db.uri`` tells a server address from a Milvus Lite file."""

from __future__ import annotations

import re

from deepsearcher.errors import CollectionError

NAME_RULE = "letters, digits and underscores only, starting with a letter or underscore, at most 255 characters"
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")


def validate_collection_name(name: str) -> str:
    """Return ``name`` if it follows ``NAME_RULE``.

    Raises:
        CollectionError: the name breaks the rule (message states the rule).
    """
    if not _NAME_RE.match(name or ""):
        raise CollectionError(f"invalid collection name {name!r}: use {NAME_RULE}")
    return name


_HOST_PORT_RE = re.compile(r"[\w.-]+:\d+(/.*)?")


def lacks_scheme(uri: str) -> bool:
    """True for a server address written without its scheme (``host:port`` or ``host:port/path``), which pymilvus
    would otherwise take for a Milvus Lite file name."""
    return _HOST_PORT_RE.fullmatch(uri) is not None


def is_remote(uri: str) -> bool:
    """True for a server address (``vector_db.uri`` with a network scheme); anything else is a Milvus Lite file path,
    resolved against the config's folder."""
    return uri.startswith(("http://", "https://", "tcp://", "grpc://"))
