"""`deepsearcher eval` through click's CliRunner on the committed 2Wiki slice (real embedder, Milvus Lite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main

pytestmark = pytest.mark.integration

SLICE = Path(__file__).resolve().parent.parent / "fixtures" / "eval_slice"


def test_eval_retrieve_prints_a_summary_and_resumes(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./store/milvus.db\n")
    runner = CliRunner()
    args = ["--config", str(cfg), "eval", str(SLICE / "2wikimultihopqa_slice"), "--retrieval", "bm25",
            "--limit", "4", "--out", str(tmp_path / "run")]

    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Recall@5 (complete gold, n=4)" in result.output
    assert "2wikimultihopqa · mode retrieve · retrieval bm25 · 4/4 questions" in result.output
    assert (tmp_path / "run" / "rows.csv").is_file()

    again = runner.invoke(main, [*args[:-4], "--limit", "6", "--out", str(tmp_path / "run"), "--json"],
                          catch_exceptions=False)
    summary = json.loads(again.stdout)
    assert summary["done"] == 6 and summary["load"]["status"] == ["unchanged"]
    assert 0.0 <= summary["recall_complete"]["5"] <= 1.0

    other = runner.invoke(main, [*args[:-4], "--retrieval", "dense", "--out", str(tmp_path / "run")])
    assert other.exit_code == 1 and "other settings" in other.output
