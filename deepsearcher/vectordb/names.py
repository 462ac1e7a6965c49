"""Collection names: the rule every store enforces (Milvus's, the strictest of the stores we target); and how a
``vector_db.uri`` tells a server address from a Milvus Lite file."""

from __future__ import annotations

import difflib
import re
from typing import Sequence

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


def no_such_collection(names: str | Sequence[str], existing: Sequence[str]) -> CollectionError:
    """The error for collection name(s) not among ``existing`` (every store and command uses it): the hint names
    the closest existing names, lists what there is, or says nothing is loaded yet."""
    missing = [names] if isinstance(names, str) else list(names)
    what = f"no collection named {', '.join(map(repr, missing))}"
    if not existing:
        return CollectionError(f"{what}: this store has no collections yet",
                               hint="load documents with `deepsearcher load PATH -c NAME`")
    close = list(dict.fromkeys(c for n in missing for c in difflib.get_close_matches(n, existing, n=3, cutoff=0.6)))
    shown = ", ".join(existing[:10]) + (f" and {len(existing) - 10} more" if len(existing) > 10 else "")
    hint = (f"did you mean {' or '.join(close)}? " if close else "") + f"collections here: {shown}"
    return CollectionError(what, hint=hint)


_HOST_PORT_RE = re.compile(r"[\w.-]+:\d+(/.*)?")


def lacks_scheme(uri: str) -> bool:
    """True for a server address written without its scheme (``host:port`` or ``host:port/path``), which pymilvus
    would otherwise take for a Milvus Lite file name."""
    return _HOST_PORT_RE.fullmatch(uri) is not None


def is_remote(uri: str) -> bool:
    """True for a server address (``vector_db.uri`` with a network scheme); anything else is a Milvus Lite file path,
    resolved against the config's folder."""
    return uri.startswith(("http://", "https://", "tcp://", "grpc://"))
