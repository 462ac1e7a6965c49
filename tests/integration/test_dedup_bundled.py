"""Sub-query dedup with the real bundled embedder (ONNX int8, the default backend) and the committed threshold."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from deepsearcher.agents.dedup_rules import lexically_distinct, threshold_for
from deepsearcher.eval.dedup import judged_duplicate, load_pairs, sweep

pytestmark = pytest.mark.integration

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "dedup" / "query_pairs.jsonl"
OLD_THRESHOLD = 0.92


def _cosine(embedder, a: str, b: str) -> float:
    return float(np.dot(embedder.embed_query(a), embedder.embed_query(b)))


@pytest.mark.parametrize("a, b", [
    ("What index types does Milvus support?", "What index types does Milvus Lite support?"),
    ("Milvus features added in 2023", "Milvus features added in 2024"),
])
def test_issue_follow_ups_are_kept(bundled_embedder, a: str, b: str):
    cosine = _cosine(bundled_embedder, a, b)
    assert cosine >= OLD_THRESHOLD  # what dropped them before: cosine alone at the old fixed threshold
    threshold = threshold_for(bundled_embedder.model_name, None)
    assert not judged_duplicate(cosine, lexically_distinct(a, b), threshold, guarded=True)


@pytest.mark.parametrize("a, b", [
    ("how does milvus lite store data", "How does Milvus Lite store data?"),
    ("Milvus Lite limitations", "limitations of Milvus Lite"),
    ("What index types does Milvus support?", "Which index types are supported by Milvus?"),
])
def test_restated_queries_are_still_duplicates(bundled_embedder, a: str, b: str):
    cosine = _cosine(bundled_embedder, a, b)
    threshold = threshold_for(bundled_embedder.model_name, None)
    assert judged_duplicate(cosine, lexically_distinct(a, b), threshold, guarded=True)


def test_committed_thresholds_reproduce_on_the_pair_set(bundled_embedder):
    """The committed onnx-int8 rates come back from the committed pairs; re-run scripts/calibrate_dedup.py when not.

    Two pairs of slack: the ONNX export is rebuilt per machine, and a cosine right at the threshold may cross it.
    """
    table = json.loads((files("deepsearcher.agents") / "data" / "dedup_thresholds.json").read_text(encoding="utf-8"))
    committed = table["models"]["all-minilm-l6-v2"]["backends"]["onnx-int8"]
    pairs = load_pairs(PAIRS)
    cosines = [_cosine(bundled_embedder, p.a, p.b) for p in pairs]
    distinct = [lexically_distinct(p.a, p.b) for p in pairs]
    row = sweep(pairs, cosines, distinct, [committed["threshold"]], guarded=True)[0]
    assert abs(row.false_drops - round(committed["false_drop"] * row.different)) <= 2
    assert abs(row.false_keeps - round(committed["false_keep"] * row.same)) <= 2
