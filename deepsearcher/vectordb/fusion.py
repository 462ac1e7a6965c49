"""Rank fusion, the one home of both rules: dense + BM25 within a collection (``fuse_hybrid``, convex combination of
normalised scores) and ranked lists across collections (``fuse_ranked``, reciprocal rank fusion)."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from deepsearcher.types import Hit

#: hybrid search: candidates taken from each of the dense and BM25 lists, and the dense weight of the fused score
HYBRID_DEPTH = 50
HYBRID_ALPHA = 0.7


def fuse_hybrid(dense: Sequence[Hit], sparse: Sequence[Hit], top_k: int, alpha: float = HYBRID_ALPHA) -> list[Hit]:
    """Fuse a dense and a BM25 ranking by a convex combination of their normalised scores.

    score = alpha * cosine + (1 - alpha) * bm25 / max_bm25, where max_bm25 is the query's best BM25 score; a chunk
    missing from a list gets that list's lowest score. After Bruch, Gai & Ingber, "An Analysis of Fusion Functions for
    Hybrid Retrieval" (ACM TOIS 2023), who find a convex combination beats reciprocal rank fusion and needs little
    tuning. alpha=0.7 and 50 candidates were chosen on the first half of the 2WikiMultiHopQA questions and hold on
    the second half (docs/benchmarks.md). Unlike RRF, a chunk only BM25 finds with a far better score than the rest
    (an exact rare keyword such as a product code) can still come first.

    Args:
        dense: cosine hits, best first (scores in [-1, 1]).
        sparse: BM25 hits, best first (scores >= 0).
        top_k: results wanted.
        alpha: weight of the dense score, in [0, 1].

    Returns:
        Up to ``top_k`` hits, best first, ``score`` replaced by the fused score.
    """
    d_min = min((h.score for h in dense), default=0.0)
    b_min = min((h.score for h in sparse), default=0.0)
    b_max = max((h.score for h in sparse), default=0.0) or 1.0
    d_score = {h.chunk.id: h.score for h in dense}
    b_score = {h.chunk.id: h.score for h in sparse}
    first: dict[str, Hit] = {}
    for hit in (*dense, *sparse):
        first.setdefault(hit.chunk.id, hit)
    fused = {cid: alpha * d_score.get(cid, d_min) + (1 - alpha) * b_score.get(cid, b_min) / b_max for cid in first}
    best = sorted(fused, key=lambda cid: fused[cid], reverse=True)[:top_k]
    return [replace(first[cid], score=fused[cid]) for cid in best]


def fuse_ranked(rankings: Sequence[Sequence[Hit]], top_k: int, k: int = 60) -> list[Hit]:
    """Reciprocal rank fusion of ranked Hit lists (Cormack, Clarke & Büttcher, SIGIR 2009).

    Each hit scores sum(1 / (k + rank)) over the lists it appears in (rank from 1); returns the ``top_k`` best, with
    ``score`` replaced by the fused score. Used across collections, whose scores are not comparable.
    """
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            key = f"{hit.collection}/{hit.chunk.id}"
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            first.setdefault(key, hit)
    best = sorted(scores, key=lambda key: scores[key], reverse=True)[:top_k]
    return [replace(first[key], score=scores[key]) for key in best]
