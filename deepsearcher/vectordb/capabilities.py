"""What a Milvus deployment can do, read once on connect, and how a search request adapts to it.

Full-text search (an analyzer plus a BM25 function feeding a sparse field) arrived in Milvus 2.5; the 2.3 and 2.4
lines, still widely deployed, reject the sparse field's index (``create index on 104 field is not supported``), and
the 2.3.5 server aborts (SIGABRT in segcore's ``NewCollection``) when it loads a collection that has one. So
collections on such a server are created dense-only, and a hybrid or BM25 request on a dense-only collection runs
dense instead, with a one-line notice for the caller to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Engine = Literal["lite-3", "lite-2", "server"]
SearchMode = Literal["dense", "bm25", "hybrid"]
SEARCH_MODES: tuple[str, ...] = ("dense", "bm25", "hybrid")
#: first Milvus release with the BM25 function (full-text search); sparse vectors alone came in 2.4
FULL_TEXT_SINCE = (2, 5)
_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class StoreCapabilities:
    """What the connected Milvus offers.

    Attributes:
        engine: "lite-3" (milvus-lite 3.x, pure Python), "lite-2" (milvus-lite 2.x, C++) or "server" (a Milvus
            server or Zilliz Cloud).
        server_version: the version string the deployment reports (e.g. "v2.3.5-lite", "milvus_lite-3.2.2").
        dense: dense (cosine) search; always true.
        bm25: full-text search (BM25 function and sparse index) for new collections.
        hybrid: dense + BM25 fused (needs ``bm25``).
        index_type: the dense index new collections get: "FLAT" (exact) on Lite, "HNSW" on a server.
    """

    engine: Engine
    server_version: str
    dense: bool
    bm25: bool
    hybrid: bool
    index_type: str

    @property
    def modes(self) -> frozenset[str]:
        """Search modes a collection created now supports."""
        return frozenset(m for m, ok in (("dense", self.dense), ("bm25", self.bm25), ("hybrid", self.hybrid)) if ok)


@dataclass(frozen=True)
class SearchPlan:
    """The search mode that will run for a request on one collection.

    Attributes:
        collection: the collection.
        requested: the mode asked for.
        mode: the mode that runs (``requested``, or "dense" on a collection without full-text search).
        notice: one line for the user when ``mode != requested``, else None.
    """

    collection: str
    requested: str
    mode: str
    notice: str | None = None

    @property
    def fell_back(self) -> bool:
        return self.mode != self.requested


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``major.minor[.patch]`` in a version string ("v2.3.5-lite" -> (2, 3, 5); Zilliz Cloud's
    "Zilliz Cloud Vector Database(Compatible with Milvus 2.5)" -> (2, 5, 0)); None when there is none."""
    match = _VERSION_RE.search(text or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def server_capabilities(version: str) -> StoreCapabilities:
    """Capabilities of a Milvus server reporting ``version``.

    An unparseable version is taken as current (full-text search on): servers that report no number are newer
    managed deployments, and a wrong guess fails at collection creation, which is undone (no half-made collection).
    """
    parsed = parse_version(version)
    full_text = parsed is None or parsed[:2] >= FULL_TEXT_SINCE
    return StoreCapabilities(engine="server", server_version=version, dense=True, bm25=full_text, hybrid=full_text,
                             index_type="HNSW")


def lite_capabilities(version: str, major: int) -> StoreCapabilities:
    """Capabilities of Milvus Lite: both engines (2.5.x and 3.x) have BM25; both search exactly (FLAT)."""
    return StoreCapabilities(engine="lite-3" if major >= 3 else "lite-2", server_version=version, dense=True,
                             bm25=True, hybrid=True, index_type="FLAT")


def plan_search(collection: str, requested: str, collection_modes: frozenset[str], where: str) -> SearchPlan:
    """Choose the mode to run: the requested one when the collection supports it, else dense with a notice.

    Args:
        collection: collection name.
        requested: "dense", "bm25" or "hybrid".
        collection_modes: modes the collection supports (see ``MilvusStore.collection_modes``).
        where: the store's description for the notice (e.g. "Milvus v2.3.5 at http://127.0.0.1:19530").

    Raises:
        ValueError: an unknown mode.
    """
    if requested not in SEARCH_MODES:
        raise ValueError(f"unknown search mode {requested!r}")
    if requested in collection_modes:
        return SearchPlan(collection, requested, requested)
    notice = (f"collection {collection!r} has no full-text (BM25) index ({where}; full-text search needs Milvus "
              f">= {FULL_TEXT_SINCE[0]}.{FULL_TEXT_SINCE[1]}): {requested} search ran as dense")
    return SearchPlan(collection, requested, "dense", notice)
