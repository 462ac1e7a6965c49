"""The evaluation harness end to end: real bundled embedder, Milvus Lite in tmp_path, a committed 2Wiki slice."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from deepsearcher.errors import ConfigError
from deepsearcher.eval import EvalHarness, load_dataset
from deepsearcher.events import Event

pytestmark = pytest.mark.integration

SLICE = Path(__file__).resolve().parent.parent / "fixtures" / "eval_slice"


@pytest.fixture
def dataset():
    return load_dataset(SLICE / "2wikimultihopqa_slice")


def test_slice_resolves_from_the_dataset_folder(dataset) -> None:
    assert dataset.name == "2wikimultihopqa"
    assert len(dataset.questions) == 20
    assert dataset.corpus == SLICE / "2wikimultihopqa_slice" / "2wikimultihopqa_corpus.json"
    assert sum(q.gold_complete for q in dataset.questions) == 19
    incomplete = next(q for q in dataset.questions if not q.gold_complete)
    assert incomplete.gold_titles  # titles of the gold passages that are known


def test_retrieve_run_writes_rows_and_resumes(make_app, dataset, tmp_path: Path) -> None:
    app = make_app()
    calls: list[str] = []
    real_retrieve = app.retrieve

    def counting_retrieve(query, *args, **kwargs):
        calls.append(query)
        return real_retrieve(query, *args, **kwargs)

    app.retrieve = counting_retrieve
    out = tmp_path / "run"

    # an "interrupted" first run: 8 of the 20 questions
    first = EvalHarness(app, dataset, out, mode="retrieve", retrieval="hybrid", limit=8).run()
    assert first.done == 8 and first.complete
    assert first.load and first.load["chunks_written"] > 0
    assert len(calls) == 8
    # a crash while writing leaves a torn last line; resume must ignore it
    with (out / "rows.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "torn')

    events: list[Event] = []
    summary = EvalHarness(app, dataset, out, mode="retrieve", retrieval="hybrid", on_event=events.append).run()
    assert len(calls) == 20  # only the 12 unfinished questions ran
    start = next(e for e in events if e.kind == "eval.start")
    assert start.data == {"dataset": "2wikimultihopqa", "mode": "retrieve", "retrieval": "hybrid", "total": 20,
                          "done": 8}
    assert [e.data["done"] for e in events if e.kind == "eval.question"] == list(range(9, 21))
    load_sources = [e for e in events if e.kind == "load.source"]
    assert [e.data["status"] for e in load_sources] == ["unchanged"]  # the corpus is not loaded twice

    assert summary.done == 20 and summary.errors == 0 and summary.complete
    assert summary.n_recall_all == 20 and summary.n_recall_complete == 19
    for values in (summary.recall_all, summary.recall_complete):
        assert set(values) == {1, 2, 5, 10}
        assert all(0.0 <= v <= 1.0 for v in values.values())
        assert values[1] <= values[2] <= values[5] <= values[10]
    assert summary.recall_complete[10] > 0.3  # 167 passages: a working retriever finds many gold titles
    assert 0 < summary.seconds_p50 <= summary.seconds_p95
    assert summary.em is None and summary.llm_calls is None  # retrieve mode: no answers, no LLM

    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [q.id for q in dataset.questions]
    assert all(len(r["retrieved_titles"]) == 10 for r in rows)
    with (out / "rows.csv").open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 20 and {"recall@2", "recall@5", "seconds"} <= set(table[0])
    saved = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert saved["done"] == 20 and saved["recall_complete"]["5"] == pytest.approx(summary.recall_complete[5])

    # a run with other settings refuses the folder instead of mixing rows
    with pytest.raises(ConfigError, match="holds the rows of another run"):
        EvalHarness(app, dataset, out, mode="retrieve", retrieval="dense").run()
