"""The dates a metadata filter ranges over, stored with every chunk of a file (``deepsearcher.filters``).

``metadata["mtime"]``: the file's modification time; ``metadata["date"]``: the document's own date where it states
one (a front matter ``date``, as YAML or TOML give it, or an ISO date string), else the modification time. Both in
seconds since the epoch, UTC (a date without a time is its day's midnight, UTC). URLs get neither.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import replace
from typing import Any, Sequence

from deepsearcher.types import Document


def stamp_dates(documents: Sequence[Document], source: str) -> list[Document]:
    """``documents`` of the file ``source`` with ``mtime`` and ``date`` in their metadata (unchanged for a URL or a
    file that cannot be read any more)."""
    if "://" in source:
        return list(documents)
    try:
        mtime = float(int(os.stat(source).st_mtime))
    except OSError:
        return list(documents)
    out = []
    for doc in documents:
        stated = document_date((doc.metadata.get("front_matter") or {}).get("date"))
        date = stated if stated is not None else mtime
        out.append(replace(doc, metadata={**doc.metadata, "mtime": mtime, "date": date}))
    return out


def document_date(value: Any) -> float | None:
    """A front matter ``date`` (ISO date or date-time string) as epoch seconds, None when it is not a date."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.timestamp()
