"""The within-round ratios and the side order of scripts/bench_vs_reference.py (pure helpers; no subprocess)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_vs_reference.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_vs_reference", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_order_alternates_between_rounds(bench):
    sides = ["reference", "pure-reference", "ours", "pure-ours"]
    assert bench.round_order(sides, 0) == sides
    assert bench.round_order(sides, 1) == ["pure-ours", "ours", "pure-reference", "reference"]
    assert bench.round_order(sides, 2) == sides


def test_each_load_is_divided_by_the_pure_embedding_of_its_own_chunks(bench):
    entry = {
        "reference": {"load_seconds": 120.0},
        "reference-alt": {"load_seconds": 150.0},
        "ours": {"load_seconds": 30.0},
        "pure-reference": {"load_seconds": 60.0, "call_pattern_seconds": 100.0},
        "pure-ours": {"load_seconds": 75.0, "call_pattern_seconds": None},
    }
    assert bench.ratios(entry) == {
        "reference/pure": 2.0, "reference/pure-pattern": 1.2,
        "reference-alt/pure": 2.5, "reference-alt/pure-pattern": 1.5,
        "ours/pure": 0.4,
        "ours/reference": 0.25, "ours/reference-alt": 0.2,
        "pure-ours/pure-reference": 1.25,
    }


def test_without_pure_sides_only_the_load_ratio_is_given(bench):
    entry = {"reference": {"load_seconds": 50.0}, "ours": {"load_seconds": 10.0}}
    assert bench.ratios(entry) == {"ours/reference": 0.2}


def test_cpu_ratios_divide_the_cpu_seconds_of_the_same_windows(bench):
    entry = {
        "reference": {"load_seconds": 400.0, "load_cpu_seconds": 110.0},
        "ours": {"load_seconds": 20.0, "load_cpu_seconds": 11.0},
        "pure-reference": {"load_seconds": 40.0, "load_cpu_seconds": 50.0, "call_pattern_seconds": 90.0,
                           "call_pattern_cpu_seconds": 100.0},
        "pure-ours": {"load_seconds": 40.0},  # no CPU seconds recorded: its ratio is left out
    }
    assert bench.ratios(entry, "cpu") == {"reference/pure": 2.2, "reference/pure-pattern": 1.1,
                                          "ours/reference": 0.1}
