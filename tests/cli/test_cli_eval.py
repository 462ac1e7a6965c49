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
    said = " ".join(other.output.split())
    assert other.exit_code == 1 and "holds the rows of another run (retrieval: bm25 there, dense now)" in said
    assert "--force" in said


def _rows(folder: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (folder / "rows.jsonl").read_text().splitlines()]


def test_eval_runs_are_keyed_by_question_file_and_never_overwritten_silently(tmp_path: Path) -> None:
    """Two question files of one dataset used to share eval_runs/<dataset>-<mode>-<retrieval>, and the second run
    rewrote the first's rows (issue #13)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./store/milvus.db\n")
    lines = (SLICE / "unified" / "2wiki_slice.jsonl").read_text().splitlines()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("\n".join(lines[:3]) + "\n")
    second.write_text("\n".join(lines[3:5]) + "\n")
    corpus = SLICE / "2wikimultihopqa_slice" / "2wikimultihopqa_corpus.json"
    runner = CliRunner()

    def run(questions: Path, *more: str):  # type: ignore[no-untyped-def]
        return runner.invoke(main, ["--config", str(cfg), "eval", str(questions), "--corpus", str(corpus),
                                    "--retrieval", "bm25", *more], catch_exceptions=False)

    one = run(first)
    assert one.exit_code == 0, one.output
    assert "Loading corpus into eval_2wikimultihopqa" in one.output  # plain progress: the output is not a terminal
    two = run(second)
    assert two.exit_code == 0, two.output
    assert "already loaded (unchanged)" in two.output and "0 chunks" not in two.output
    runs = tmp_path / "eval_runs"
    assert sorted(p.name for p in runs.iterdir()) == ["first-2wikimultihopqa-retrieve-bm25",
                                                       "second-2wikimultihopqa-retrieve-bm25"]
    assert _rows(runs / "first-2wikimultihopqa-retrieve-bm25") == [json.loads(x)["id"] for x in lines[:3]]
    assert _rows(runs / "second-2wikimultihopqa-retrieve-bm25") == [json.loads(x)["id"] for x in lines[3:5]]

    # the same folder named for another question file of the same name: refused, the rows kept; --force replaces
    elsewhere = tmp_path / "other" / "first.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text("\n".join(lines[5:7]) + "\n")
    refused = run(elsewhere)
    assert refused.exit_code == 1 and "another run" in " ".join(refused.output.split())
    assert _rows(runs / "first-2wikimultihopqa-retrieve-bm25") == [json.loads(x)["id"] for x in lines[:3]]
    forced = run(elsewhere, "--force")
    assert forced.exit_code == 0, forced.output
    assert _rows(runs / "first-2wikimultihopqa-retrieve-bm25") == [json.loads(x)["id"] for x in lines[5:7]]
