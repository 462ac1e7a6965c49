"""Identical text, one retrieval slot (issue #13): chunks with the same text from different sources (a file copied
into two folders, a page served under two URLs, one passage in two collections) are one result; the other copies
are listed on it as ``Hit.also_in`` ("also in …") instead of filling the other top-k slots.

Two chunks have the same text when their texts are equal after whitespace folding (``text_key``). The key is
computed at query time from the text every store returns, so it needs no stored field and works on collections
loaded before this rule. Searches over-fetch (``search_distinct``) so that ``top_k`` distinct texts come back.

Which copy represents a group does not depend on the query: of the copies retrieved, the first by (collection,
source, page, chunk id). Identical texts score alike (same embedding, same terms), so a group is retrieved whole and
later sub-queries of an agent run get the same representative (the agents de-duplicate by chunk id).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Callable, Iterable, Sequence

from deepsearcher.types import Hit, OtherSource

#: A search first asks for this many times ``top_k``; doubled while duplicates leave fewer than ``top_k`` texts.
OVERFETCH = 2
#: ... up to this many times ``top_k``.
MAX_OVERFETCH = 16


def text_key(text: str) -> str:
    """Identity of a chunk's text: SHA-256 (32 hex chars) of the text with runs of white space folded to one space."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def collapse_identical(hits: Sequence[Hit]) -> list[Hit]:
    """One hit per distinct text, at the rank of its best copy; the other copies go to its ``also_in``.

    Args:
        hits: best first (one collection, or fused across collections); hits may already carry ``also_in``.

    Returns:
        Hits best first, each text once; ``score`` is the best copy's; ``also_in`` lists every other copy's location
        once (copies already on an input hit are kept).
    """
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(text_key(hit.chunk.text), []).append(hit)
    out = []
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        chosen = min(group, key=_order)
        others = [_other(h) for h in group if h is not chosen] + [o for h in group for o in h.also_in]
        out.append(replace(chosen, score=group[0].score, also_in=_distinct(others, _other(chosen))))
    return out


def search_distinct(search: Callable[[int], list[Hit]], top_k: int) -> list[Hit]:
    """Run ``search(limit)`` (best first, at most ``limit`` hits) and return ``top_k`` hits of distinct text.

    Asks for ``OVERFETCH * top_k`` hits, then twice as many while the duplicates leave fewer than ``top_k`` texts
    and the store had more, up to ``MAX_OVERFETCH * top_k``.
    """
    limit = OVERFETCH * top_k
    while True:
        found = search(limit)
        distinct = collapse_identical(found)
        if len(distinct) >= top_k or len(found) < limit or limit >= MAX_OVERFETCH * top_k:
            return distinct[:top_k]
        limit = min(2 * limit, MAX_OVERFETCH * top_k)


def _order(hit: Hit) -> tuple[str, str, int, str]:
    c = hit.chunk
    return hit.collection, c.source, -1 if c.page is None else c.page, c.id


def _other(hit: Hit) -> OtherSource:
    c = hit.chunk
    return OtherSource(source=c.source, page=c.page, title=c.title, collection=hit.collection, chunk_id=c.id)


def _distinct(others: Iterable[OtherSource], chosen: OtherSource) -> tuple[OtherSource, ...]:
    seen = {(chosen.collection, chosen.source, chosen.page)}
    out = []
    for other in sorted(others, key=lambda o: (o.collection, o.source, -1 if o.page is None else o.page)):
        where = (other.collection, other.source, other.page)
        if where not in seen:
            seen.add(where)
            out.append(other)
    return tuple(out)
