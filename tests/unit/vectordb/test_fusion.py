"""Reciprocal rank fusion has one home (``vectordb.fusion``): the cross-collection merge and the agents' fused rank
(which chunks a short prompt keeps, which chunks a fallback report is written from) agree."""

from __future__ import annotations

from deepsearcher.types import Hit
from deepsearcher.vectordb.fusion import fuse_ranked, fused_priority, hit_key, rrf_scores, top_ranked
from tests.unit.query_fakes import chunk


def hit(name: str, collection: str = "docs", score: float = 0.5) -> Hit:
    return Hit(chunk(f"text of {name}", f"/d/{name}.md"), score, collection)


def test_a_chunk_found_by_two_queries_rises_and_ties_keep_the_order_first_seen() -> None:
    a, b, c, d = hit("a"), hit("b"), hit("c"), hit("d", "web")
    rankings = [[a, b, c], [d, b]]
    scores = rrf_scores(rankings)
    assert scores[hit_key(b)] == 1 / 62 + 1 / 62 and scores[hit_key(a)] == scores[hit_key(d)] == 1 / 61
    assert [h.chunk.source for h in top_ranked(rankings, 3)] == ["/d/b.md", "/d/a.md", "/d/d.md"]
    assert [h.score for h in top_ranked(rankings, 3)] == [0.5, 0.5, 0.5]  # as retrieved
    fused = fuse_ranked(rankings, 3)
    assert [hit_key(h) for h in fused] == [hit_key(h) for h in top_ranked(rankings, 3)]
    assert [h.score for h in fused] == [scores[hit_key(h)] for h in fused]


def test_the_fused_priority_keeps_the_best_of_every_ranking_first_and_unranked_hits_last() -> None:
    a, b, c, d, stray = hit("a"), hit("b"), hit("c"), hit("d"), hit("stray")
    priority = fused_priority([c, stray, a, d, b], [[a, b], [c, d]])
    order = [name for _, name in sorted(zip(priority, "c stray a d b".split()), key=lambda pair: pair[0])]
    assert order == ["c", "a", "d", "b", "stray"]  # ties in the given order
    assert priority[1] == 0.0 and priority[0] == priority[2] == -1 / 61
