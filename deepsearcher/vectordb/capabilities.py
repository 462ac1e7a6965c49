"""What a Milvus deployment can do, read once on connect, and how a search request adapts to it.

Full-text search (an analyzer plus a BM25 function feeding a sparse field) arrived in Milvus 2.5; the 2.3 and 2.4
lines, still widely deployed, reject the sparse field's index (``create index on 104 field is not supported``), and
the 2.3.5 server aborts (SIGABRT in segcore's ``NewCollection``) when it loads a collection that has one. So
collections on such a server are created dense-only, and a hybrid or BM25 request on a dense-only collection runs
dense instead, with a one-line notice for the caller to show (``plan_search``).
"""

from __future__ import annotations

import re
from typing import Sequence, cast

from deepsearcher.types import SearchMode, SearchPlan, StoreCapabilities

SEARCH_MODES: tuple[str, ...] = ("dense", "bm25", "hybrid")
#: first Milvus release with the BM25 function (full-text search); sparse vectors alone came in 2.4
FULL_TEXT_SINCE = (2, 5)
_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``major.minor[.patch]`` in a version string ("v2.3.5-lite" -> (2, 3, 5); Zilliz Cloud's
    "Zilliz Cloud Vector Database(Compatible with Milvus 2.5)" -> (2, 5, 0)); None when there is none."""
    match = _VERSION_RE.search(text or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def server_capabilities(version: str) -> StoreCapabilities:
    """Capabilities of a Milvus server (or Zilliz Cloud) reporting ``version``: HNSW, and BM25 from 2.5 on.

    An unparseable version is taken as current (full-text search on): servers that report no number are newer
    managed deployments, and a wrong guess fails at collection creation, which is undone (no half-made collection).
    """
    parsed = parse_version(version)
    full_text = parsed is None or parsed[:2] >= FULL_TEXT_SINCE
    return StoreCapabilities(dense=True, bm25=full_text, hybrid=full_text, engine="server", index_type="HNSW",
                             version=version)


def lite_capabilities(version: str, major: int) -> StoreCapabilities:
    """Capabilities of Milvus Lite: both engines (2.5.x and 3.x) have BM25, search exactly (FLAT), and allow one
    process per file."""
    return StoreCapabilities(dense=True, bm25=True, hybrid=True, engine="lite-3" if major >= 3 else "lite-2",
                             index_type="FLAT", version=version, file_lock=True)


def plan_search(collection: str, requested: str, collection_modes: Sequence[str], reason: str) -> SearchPlan:
    """Choose the mode to run: the requested one when the collection supports it, else dense with a notice.

    Args:
        collection: collection name.
        requested: "dense", "bm25" or "hybrid".
        collection_modes: modes the collection supports (``CollectionInfo.modes``).
        reason: why the collection lacks full-text search, for the notice (e.g. "Milvus v2.3.5-lite at
            http://127.0.0.1:19530; full-text search needs Milvus >= 2.5").

    Raises:
        ValueError: an unknown mode.
    """
    if requested not in SEARCH_MODES:
        raise ValueError(f"unknown search mode {requested!r}")
    mode = cast(SearchMode, requested)
    if mode in collection_modes:
        return SearchPlan(collection, mode, mode)
    notice = f"collection {collection!r} has no full-text (BM25) index ({reason}): {requested} search ran as dense"
    return SearchPlan(collection, mode, "dense", notice)


#: CPU ms per query (query embedding included) measured by scripts/bench_retrieval.py at 10,000 and 100,000 chunks
#: (docs/benchmarks.md, "Retrieval latency vs collection size"): (dense at 10k, dense at 100k, hybrid at 10k,
#: hybrid at 100k). Both Lite engines search exactly, so the cost grows linearly with the collection.
LITE_QUERY_MS: dict[str, tuple[float, float, float, float]] = {
    "lite-3": (25, 340, 84, 915),
    "lite-2": (14, 47, 23, 55),
}
#: collection size past which ``lite_size_notice`` speaks: 3.x hybrid search passes ~0.15 s of CPU near 20k chunks;
#: 2.x stays under ~0.1 s up to ~200k (extrapolated from its 10k and 100k points)
LITE_SLOW_AT = {"lite-3": 20_000, "lite-2": 200_000}
#: the embedded Milvus 2.3.5 server's dense CPU per query at 100k chunks, HNSW ef 256 (same benchmark)
SERVER_QUERY_MS = 19


def lite_query_ms(engine: str, chunks: int) -> tuple[float, float]:
    """(dense, hybrid) CPU ms per query of a Lite engine at ``chunks``, by linear interpolation of ``LITE_QUERY_MS``
    (extrapolated past 100k).

    Raises:
        KeyError: not a Lite engine.
    """
    d10, d100, h10, h100 = LITE_QUERY_MS[engine]
    share = (chunks - 10_000) / 90_000
    return max(d10, d10 + (d100 - d10) * share), max(h10, h10 + (h100 - h10) * share)


def lite_size_notice(collection: str, engine: str, chunks: int) -> str | None:
    """One line for a Milvus Lite collection grown past the size where its search gets slow (``LITE_SLOW_AT``), with
    the measured cost per query and the ways out (the 2.x engine from 3.x; a Milvus server); None below it or on
    another engine."""
    if chunks < LITE_SLOW_AT.get(engine, 1 << 62):
        return None
    dense, hybrid = lite_query_ms(engine, chunks)
    head = (f"collection {collection!r} holds {chunks:,} chunks: on Milvus Lite {engine[-1]}.x each search costs "
            f"~{hybrid / 1000:.2f} s of CPU (hybrid; dense ~{dense / 1000:.2f} s) and grows with the collection")
    server = (f"a Milvus server (vector_db.uri: http://host:19530) answers a dense search with HNSW in "
              f"~{SERVER_QUERY_MS / 1000:.2f} s at 100k chunks (docs/scale.md)")
    if engine == "lite-3":
        _, hybrid2 = lite_query_ms("lite-2", chunks)
        return (f"{head}; the 2.x engine (pip install \"milvus-lite==2.5.1\" \"setuptools<81\", a new vector_db.uri) "
                f"takes ~{hybrid2 / 1000:.2f} s, and {server}")
    return f"{head}; {server}"
