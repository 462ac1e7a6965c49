"""Capability rules: which Milvus versions get full-text search, and how a search request adapts."""

from __future__ import annotations

import pytest

from deepsearcher.vectordb.capabilities import lite_capabilities, parse_version, plan_search, server_capabilities


@pytest.mark.parametrize("text,expected", [
    ("v2.3.5-lite", (2, 3, 5)),               # the embedded server (PyPI package milvus)
    ("v2.5.4", (2, 5, 4)),
    ("2.4.15-gpu", (2, 4, 15)),
    ("Zilliz Cloud Vector Database(Compatible with Milvus 2.5)", (2, 5, 0)),
    ("milvus_lite-3.2.2", (3, 2, 2)),
    ("", None),
    ("unknown", None),
])
def test_parse_version(text: str, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("version,full_text", [
    ("v2.3.5-lite", False), ("v2.4.15", False), ("v2.5.0", True), ("v2.6.1", True),
    ("Zilliz Cloud Vector Database(Compatible with Milvus 2.5)", True),
    ("a managed service that reports no number", True),   # assumed current; a failed creation is undone
])
def test_full_text_search_needs_milvus_2_5(version: str, full_text: bool):
    caps = server_capabilities(version)
    assert (caps.engine, caps.index_type, caps.dense) == ("server", "HNSW", True)
    assert caps.bm25 is full_text and caps.hybrid is full_text
    assert caps.modes == (["dense", "bm25", "hybrid"] if full_text else ["dense"]) and caps.version == version


def test_both_lite_engines_search_exactly_with_bm25():
    assert lite_capabilities("3.2.2", 3).engine == "lite-3"
    two = lite_capabilities("2.5.1", 2)
    assert (two.engine, two.index_type, two.bm25, two.hybrid, two.file_lock) == ("lite-2", "FLAT", True, True, True)


def test_plan_search_falls_back_to_dense_with_one_line():
    full = ["dense", "bm25", "hybrid"]
    assert plan_search("docs", "hybrid", full, "x").notice is None
    plan = plan_search("docs", "bm25", ["dense"], "Milvus v2.3.5-lite at http://h:19530; full-text search needs "
                                                  "Milvus >= 2.5")
    assert (plan.mode, plan.fell_back) == ("dense", True)
    assert plan.notice == ("collection 'docs' has no full-text (BM25) index (Milvus v2.3.5-lite at http://h:19530; "
                           "full-text search needs Milvus >= 2.5): bm25 search ran as dense")
    assert "\n" not in plan.notice
    with pytest.raises(ValueError, match="unknown search mode"):
        plan_search("docs", "sparse", full, "x")


def test_lite_query_cost_is_the_measured_curve():
    from deepsearcher.vectordb.capabilities import LITE_QUERY_MS, lite_query_ms

    for engine, (d10, d100, h10, h100) in LITE_QUERY_MS.items():
        assert lite_query_ms(engine, 10_000) == (d10, h10) and lite_query_ms(engine, 100_000) == (d100, h100)
        assert lite_query_ms(engine, 1_000) == (d10, h10)  # never below the smallest measured size
    assert lite_query_ms("lite-3", 20_000) == pytest.approx((25 + 315 / 9, 84 + 831 / 9))


def test_lite_users_are_warned_past_the_slow_size_with_both_ways_out():
    from deepsearcher.vectordb.capabilities import lite_size_notice

    assert lite_size_notice("docs", "lite-3", 19_999) is None
    line = lite_size_notice("docs", "lite-3", 20_000)
    assert line == ("collection 'docs' holds 20,000 chunks: on Milvus Lite 3.x each search costs ~0.18 s of CPU "
                    "(hybrid; dense ~0.06 s) and grows with the collection; the 2.x engine (pip install "
                    "\"milvus-lite==2.5.1\" \"setuptools<81\", a new vector_db.uri) takes ~0.03 s, and a Milvus server "
                    "(vector_db.uri: http://host:19530) answers a dense search with HNSW in ~0.02 s at 100k chunks "
                    "(docs/scale.md)")
    assert lite_size_notice("docs", "lite-2", 199_999) is None
    two = lite_size_notice("docs", "lite-2", 300_000)
    assert two is not None and "2.x engine" not in two and "Milvus server" in two and "300,000 chunks" in two
    assert lite_size_notice("docs", "server", 10**8) is None and lite_size_notice("docs", "memory", 10**8) is None
