"""Rank fusion, the one home of both rules: dense + BM25 within a collection (``fuse_hybrid``, convex combination of
normalised scores) and reciprocal rank fusion of ranked lists (``rrf_scores``): across collections (``fuse_ranked``),
and across an agent's sub-queries, where it decides which chunks a short prompt keeps (``fused_priority``,
``top_ranked``)."""

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


#: reciprocal rank fusion's constant: a hit at rank r scores 1 / (RRF_K + r)
RRF_K = 60


def hit_key(hit: Hit) -> str:
    """Identity of a hit across rankings (and within an agent's run): ``collection/chunk id``."""
    return f"{hit.collection}/{hit.chunk.id}"


def rrf_scores(rankings: Sequence[Sequence[Hit]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): ``hit_key`` -> sum(1 / (k + rank)) over the
    rankings the hit appears in (rank from 1), keys in the order first seen."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            key = hit_key(hit)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def _best_first(rankings: Sequence[Sequence[Hit]], top_k: int, k: int) -> tuple[list[Hit], dict[str, float]]:
    """The ``top_k`` distinct hits of best fused score (ties: first seen), and the scores."""
    scores = rrf_scores(rankings, k)
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for hit in ranking:
            first.setdefault(hit_key(hit), hit)
    best = sorted(scores, key=lambda key: scores[key], reverse=True)[:top_k]
    return [first[key] for key in best], scores


def fuse_ranked(rankings: Sequence[Sequence[Hit]], top_k: int, k: int = RRF_K) -> list[Hit]:
    """Reciprocal rank fusion of ranked Hit lists: the ``top_k`` best (``rrf_scores``), with ``score`` replaced by
    the fused score. Used across collections, whose scores are not comparable."""
    hits, scores = _best_first(rankings, top_k, k)
    return [replace(hit, score=scores[hit_key(hit)]) for hit in hits]


def top_ranked(rankings: Sequence[Sequence[Hit]], n: int) -> list[Hit]:
    """The ``n`` hits of best fused rank across ``rankings`` (ties: first seen), as retrieved (scores unchanged)."""
    return _best_first(rankings, n, RRF_K)[0]


def fused_priority(hits: Sequence[Hit], rankings: Sequence[Sequence[Hit]], k: int = RRF_K) -> list[float]:
    """Priority of each hit when a prompt cannot hold them all (lower = keep first): minus its fused score over
    ``rankings`` (every sub-query's and collection's retrieval; ``rrf_scores``).

    So the best chunk of every sub-query outranks the second-best of any (each sub-query keeps its best chunks, not
    the first ones accepted), and a chunk found by several sub-queries rises. Hits in no ranking come last, in their
    given order.
    """
    scores = rrf_scores(rankings, k)
    return [-scores.get(hit_key(h), 0.0) for h in hits]
