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
    assert caps.modes == ({"dense", "bm25", "hybrid"} if full_text else {"dense"})


def test_both_lite_engines_search_exactly_with_bm25():
    assert lite_capabilities("milvus-lite 3.2.2", 3).engine == "lite-3"
    two = lite_capabilities("milvus-lite 2.5.1", 2)
    assert (two.engine, two.index_type, two.bm25, two.hybrid) == ("lite-2", "FLAT", True, True)


def test_plan_search_falls_back_to_dense_with_one_line():
    full = frozenset({"dense", "bm25", "hybrid"})
    assert plan_search("docs", "hybrid", full, "x").notice is None
    plan = plan_search("docs", "bm25", frozenset({"dense"}), "Milvus v2.3.5-lite at http://h:19530")
    assert (plan.mode, plan.fell_back) == ("dense", True)
    assert plan.notice == ("collection 'docs' has no full-text (BM25) index (Milvus v2.3.5-lite at http://h:19530; "
                           "full-text search needs Milvus >= 2.5): bm25 search ran as dense")
    assert "\n" not in plan.notice
    with pytest.raises(ValueError, match="unknown search mode"):
        plan_search("docs", "sparse", full, "x")
