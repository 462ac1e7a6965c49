"""The harness in an agent mode: answers scored by EM/F1, usage and citations recorded, failures kept as rows.

Runs over the in-memory store and hash embedder with a ScriptedChatModel (no Milvus, no torch, no server).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.eval import EvalHarness
from deepsearcher.eval.datasets import EvalDataset, EvalQuestion
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import memory_app

QUESTIONS = [
    EvalQuestion(id="q1", dataset="tiny", question="Where does Milvus Lite store data?",
                 answers=["in a local file"], gold_titles=["lite"], gold_complete=True),
    EvalQuestion(id="q2", dataset="tiny", question="Which characters may collection names contain?",
                 answers=["letters, digits and underscores"], gold_titles=["limits"], gold_complete=True),
    EvalQuestion(id="q3", dataset="tiny", question="How long is bread baked?",
                 answers=["thirty minutes"], gold_titles=["bread", "oven"], gold_complete=False),
]
# the naive agent makes one call per question: the synthesis, which numbers the retrieved chunks from 1
ANSWERS = {
    "Where does Milvus Lite store data?": "In a local file [1].",               # EM 1, F1 1
    "Which characters may collection names contain?": "Letters and digits [1] [7].",  # [7] resolves to nothing
    "How long is bread baked?": "Thirty minutes at 220 degrees.",             # no citation
}


def reply(messages) -> str:
    prompt = messages[-1]["content"]
    return next(answer for question, answer in ANSWERS.items() if question in prompt)


@pytest.fixture
def dataset() -> EvalDataset:
    return EvalDataset(name="tiny", questions=list(QUESTIONS), corpus=None)


def test_naive_mode_scores_answers_usage_and_citations(dataset: EvalDataset, tmp_path: Path) -> None:
    llm = ScriptedChatModel([reply] * 3)
    app = memory_app(llm)
    summary = EvalHarness(app, dataset, tmp_path / "out", mode="naive", retrieval="dense",
                          collection="milvus").run()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out/rows.jsonl").read_text().splitlines())}

    assert rows["q1"]["em"] == 1.0 and rows["q1"]["f1"] == 1.0
    # "letters and digits" vs "letters digits and underscores": 3 shared tokens, P=3/3, R=3/4 -> F1 6/7
    assert rows["q2"]["em"] == 0.0 and rows["q2"]["f1"] == pytest.approx(6 / 7)
    assert rows["q1"]["citation_share"] == 1.0
    assert rows["q2"]["citation_share"] == 0.5  # [1] resolves, [7] was removed
    assert rows["q3"]["citation_share"] is None
    assert all(r["llm_calls"] == 1 and r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
               for r in rows.values())
    assert rows["q1"]["retrieved_titles"][0] == "lite" and rows["q1"]["recall"]["2"] == 1.0

    assert summary.mode == "naive" and summary.done == 3 and summary.complete
    assert summary.em == pytest.approx(1 / 3)
    assert summary.llm_calls == 1.0 and summary.citation_share == pytest.approx(0.75)
    assert summary.n_recall_complete == 2 and summary.n_recall_all == 3
    assert llm.remaining == 0


def test_an_llm_failure_is_recorded_and_retried_on_resume(dataset: EvalDataset, tmp_path: Path) -> None:
    def failing(messages):
        raise ProviderError("the LLM server answered 503")

    llm = ScriptedChatModel([reply, failing, reply])
    first = EvalHarness(memory_app(llm), dataset, tmp_path / "out", mode="naive", retrieval="dense",
                        collection="milvus").run()
    assert first.done == 2 and first.errors == 1 and not first.complete

    llm2 = ScriptedChatModel([reply])  # only the failed question runs again
    second = EvalHarness(memory_app(llm2), dataset, tmp_path / "out", mode="naive", retrieval="dense",
                         collection="milvus").run()
    assert second.done == 3 and second.errors == 0 and second.complete
    assert llm2.remaining == 0 and "Which characters" in llm2.history[0].prompt


def test_agents_cannot_use_bm25_only(dataset: EvalDataset, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="dense or hybrid"):
        EvalHarness(memory_app(ScriptedChatModel()), dataset, tmp_path, mode="deep_search", retrieval="bm25")


def test_missing_corpus_and_collection_is_a_config_error(dataset: EvalDataset, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--corpus"):
        EvalHarness(memory_app(ScriptedChatModel()), dataset, tmp_path, mode="retrieve").run()


def long_reply(messages) -> str:
    """A long report per question: a 3-section outline, sections citing their first source, an editing pass."""
    prompt = messages[-1]["content"]
    if prompt.startswith("Plan the table of contents"):
        return json.dumps({"title": "T", "sections": [{"title": f"S{i}", "question": QUESTIONS[0].question}
                                                      for i in range(1, 4)]})
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": [QUESTIONS[0].question]})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in prompt:
        return json.dumps({"gap_queries": []})
    if prompt.startswith("Write the section"):
        return "In a local file [" + prompt.split("Sources:\n[", 1)[1].split("]", 1)[0] + "]."
    return prompt.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]


def test_deep_search_mode_with_long_reports(dataset: EvalDataset, tmp_path: Path) -> None:
    app = memory_app(ScriptedChatModel([long_reply] * 40))
    summary = EvalHarness(app, dataset, tmp_path / "out", mode="deep_search", retrieval="dense",
                          collection="milvus", limit=1, report="long").run()
    row = json.loads((tmp_path / "out/rows.jsonl").read_text().splitlines()[0])
    assert row["answer"].startswith("## Contents") and "## S3" in row["answer"] and row["citation_share"] == 1.0
    assert row["llm_calls"] == 14  # outline + 3 × (decompose, relevance, reflect, section) + editing
    assert json.loads((tmp_path / "out/run.json").read_text())["report"] == "long"
    assert summary.done == 1
    with pytest.raises(ConfigError, match="long reports are written by deep_research or deep_search"):
        EvalHarness(app, dataset, tmp_path / "o2", mode="naive", report="long")


def test_long_reports_follow_the_agents_declaration(dataset: EvalDataset, tmp_path: Path) -> None:
    """A registered agent that declares sections is a long-report mode; the message names it with the built-ins."""
    from deepsearcher.agents import naive_rag
    from deepsearcher.agents.base import AgentCapabilities, FunctionAgent

    app = memory_app(ScriptedChatModel([]))
    sections = AgentCapabilities(sections=True)
    with app.registry.temporarily("agent", "sectioner", lambda o: FunctionAgent("sectioner", naive_rag.run, sections)):
        assert EvalHarness(app, dataset, tmp_path / "out", mode="sectioner", report="long").report == "long"
        with pytest.raises(ConfigError, match="by deep_research, deep_search or sectioner, not mode 'naive'") as no:
            EvalHarness(app, dataset, tmp_path / "o2", mode="naive", report="long")
    assert no.value.hint == "use --mode deep_research (or deep_search, sectioner) with --report long"


def test_rows_keep_every_kept_chunk_and_the_fallbacks(dataset: EvalDataset, tmp_path: Path) -> None:
    """recall "over every chunk kept" needs the chunks the agent kept, not only the ones its answer cites."""
    llm = ScriptedChatModel([reply] * 3)
    seen: list[str] = []
    app = memory_app(llm)
    app.on_event = lambda event: seen.append(event.kind)  # the app's own callback still gets every event
    EvalHarness(app, dataset, tmp_path / "out", mode="naive", retrieval="dense", collection="milvus").run()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out/rows.jsonl").read_text().splitlines())}

    assert rows["q1"]["retrieved_titles"] == ["lite"]  # the one cited source
    assert len(rows["q1"]["kept_titles"]) == 3 and rows["q1"]["kept_titles"][0] == "lite"  # top_k 3, all kept
    assert rows["q1"]["fallbacks"] == []
    assert rows["q1"]["unsupported_citations"] == []  # its one cited sentence is lite.md's
    assert "query.accepted" in seen and "query.report" in seen
    header = (tmp_path / "out/rows.csv").read_text().splitlines()[0]
    assert header.endswith("kept_titles,fallbacks,unsourced_dates,unsupported_citations")
