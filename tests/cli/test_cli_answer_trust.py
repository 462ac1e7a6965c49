"""``deepsearcher query`` with a scripted model (issue #20): a quoted ``<think>`` keeps the rest of the report,
bracketed years and values are not removed as unknown citations, sub-queries in scripts the embedder cannot see
are not merged as near-duplicates."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import memory_app

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
