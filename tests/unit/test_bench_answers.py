"""The scoring of scripts/bench_answers.py (pure helpers; no subprocess, no model): cover-EM, chunk titles, the
corpus slice and the per-agent means."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from deepsearcher.eval.datasets import EvalQuestion
from deepsearcher.eval.metrics import cover_match

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_answers.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_answers", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def question(qid: str, answers: list[str], titles: list[str]) -> EvalQuestion:
    return EvalQuestion(qid, "2wikimultihopqa", f"q{qid}?", answers, titles, True)


def test_cover_em_needs_the_gold_as_whole_words(bench):
    assert bench.cover_em("She died on 20 March 851 [1].", ["20 March 851"]) == 1.0
    assert bench.cover_em("The Paris Agreement", ["Paris"]) == 1.0
    assert bench.cover_em("Parisian art", ["Paris"]) == 0.0
    assert bench.cover_em("anything", [""]) == 0.0


@pytest.mark.parametrize("answer, covered", [
    # our refusal covered the gold "no" of a HotpotQA comparison question in every run (2026-12-03)
    ("The searched collections (eval_hotpotqa) hold nothing relevant to this question: every passage retrieved was "
     "judged unrelated to it, so no answer is given and nothing is cited.", 0.0),
    ("There is no relevant information in the sources.", 0.0),
    ("Answer: No\n\nWatertown is in New York [1].", 1.0),
    ("**No**, they are in different states [1][2].", 1.0),
    ("No [1].", 1.0),
    ("The answer is no.", 1.0),
    ("no", 1.0),
    ("Yes, both are airports [1].", 0.0),
])
def test_cover_em_a_yes_no_gold_must_stand_as_the_answer(bench, answer: str, covered: float):
    assert bench.cover_em(answer, ["no"]) == covered
    assert cover_match(answer, ["No"]) == covered  # the eval harness's, one rule


def test_chunk_titles_come_from_the_passage_that_holds_them(bench):
    passages = {"Lothair II was king of Lotharingia. His mother was Ermengarde.": "Lothair II",
                "Ermengarde of Tours died on 20 March 851.": "Ermengarde of Tours"}
    assert bench.titles_of_chunks(["Ermengarde of Tours died", "unknown text"], passages) == ["Ermengarde of Tours", ""]


def test_the_corpus_slice_keeps_every_gold_passage_and_n_others(bench, tmp_path: Path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": t * 3} for t in "abcdefg"]), encoding="utf-8")
    path = bench.slice_corpus(corpus, [question("1", ["x"], ["f"])], 2, tmp_path)
    assert [r["title"] for r in json.loads(path.read_text())] == ["a", "b", "f"]
    lines = tmp_path / "corpus.jsonl"
    lines.write_text("".join(json.dumps({"title": t, "text": t}) + "\n" for t in "ab"), encoding="utf-8")
    whole = bench.slice_corpus(lines, [], None, tmp_path)
    assert json.loads(whole.read_text()) == [{"title": "a", "text": "a"}, {"title": "b", "text": "b"}]


def test_scores_are_means_over_the_rows_without_error(bench):
    qs = {"1": question("1", ["Paris"], ["A", "B"]), "2": question("2", ["1999"], ["C"])}
    rows = [{"id": "1", "answer": "Paris", "cited_titles": ["A", "X", "B"], "kept_titles": None, "llm_calls": 2,
             "prompt_tokens": 100, "completion_tokens": 10, "seconds": 3.0, "error": ""},
            {"id": "2", "answer": "It was in 1999.", "cited_titles": ["C"], "kept_titles": None, "llm_calls": 4,
             "prompt_tokens": 300, "completion_tokens": 30, "seconds": 5.0, "error": ""},
            {"id": "2", "answer": "", "cited_titles": [], "kept_titles": None, "error": "boom"}]
    got = bench.score(rows, qs)
    assert (got["questions"], got["errors"], got["em"], got["cover_em"]) == (3, 1, 0.5, 1.0)
    assert got["recall@2_cited"] == 0.75 and got["recall@5_cited"] == 1.0 and got["recall@5_kept"] is None
    assert (got["llm_calls"], got["seconds"]) == (3.0, 4.0)


def test_our_rows_score_the_short_answer_and_keep_every_kept_title(bench, tmp_path: Path):
    row = {"id": "1", "answer": "Paris is the capital [1].", "short_answer": "Lyon", "error": "",
           "retrieved_titles": ["A"], "kept_titles": ["A", "B", "C"], "fallbacks": ["relevance: no JSON"],
           "llm_calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "seconds": 1.0}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    rows = bench.read_ours(tmp_path)
    assert rows[0]["answer"] == "Lyon" and rows[0]["kept_titles"] == ["A", "B", "C"]
    got = bench.score(rows, {"1": question("1", ["Paris"], ["B"])})
    assert got["em"] == 0.0 and got["cover_em"] == 1.0  # the gold is in the whole answer
    assert got["recall@2_cited"] == 0.0 and got["recall@2_kept"] == 1.0


def test_the_table_says_which_cells_did_not_run(bench):
    results = {"dataset": "2wiki", "questions": 2, "passages": 10, "date": "d", "load": {"naive/ours": (1.0, 2.0)},
               "llm": {"model": "m", "base_url": "u", "temperature": 0.0, "max_tokens": 512},
               "table": {"deep_research": {"reference": "the reference has no such agent", "ours": "not run"}}}
    text = bench.render(results)
    assert "| deep_research | reference | 0 | the reference has no such agent |" in text
    assert "temperature 0.0, max_tokens 512 (both sides)" in text and "naive/ours 1.0→2.0" in text


def test_a_question_run_again_keeps_its_last_row(bench, tmp_path: Path):
    base = {"id": "1", "short_answer": "", "retrieved_titles": [], "llm_calls": 1, "prompt_tokens": 1,
            "completion_tokens": 1, "seconds": 1.0}
    lines = [{**base, "answer": "[1][2]", "error": "rerun"}, {**base, "answer": "Paris", "error": ""}]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert [(r["answer"], r["error"]) for r in bench.read_ours(tmp_path)] == [("Paris", "")]


def test_set_puts_an_option_into_our_config_with_its_yaml_value(bench):
    config = {"llm": {"model": "m"}}
    bench.set_option(config, "query.stop_runaway_reports=false")
    bench.set_option(config, "agents.chain_of_rag.question_floor=3")
    assert config == {"llm": {"model": "m"}, "query": {"stop_runaway_reports": False},
                      "agents": {"chain_of_rag": {"question_floor": 3}}}
    for bad in ("query.top_k", "top_k=3"):
        with pytest.raises(ValueError, match="section.key=value"):
            bench.set_option({}, bad)
