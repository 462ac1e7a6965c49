"""``deepsearcher query`` with DeepResearch and long reports (issue #12): live steps and verdicts, --report long with
--outline / --outline-only, and the clear errors of --outline, --web and --save-to used wrongly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import memory_app

Q = "What is Milvus Lite?"


def reply(messages: Any) -> str:
    """Scripted replies by prompt: DeepResearch searches, then answers citing [1]; long reports get two sections."""
    p = messages[-1]["content"]
    if p.startswith("You are researching"):
        if "(cite an item as [n]):\n(nothing yet)" in p:
            return json.dumps({"action": "search", "think": "I need facts.", "queries": ["Milvus Lite"]})
        return json.dumps({"action": "answer", "answer": "Milvus Lite runs in your Python process [1]."})
    if p.startswith("Decide which checks"):
        return json.dumps({"definitive": True, "attribution": True})
    if p.startswith("You are a strict reviewer"):
        return json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
    if p.startswith("Plan the table of contents"):
        return json.dumps({"title": "Milvus Lite explained", "sections": [
            {"title": "Basics", "question": "What is Milvus Lite?"},
            {"title": "Storage", "question": "Where does Milvus Lite store data?"},
            {"title": "Limits", "question": "Which names may collections have?"}]})
    if p.startswith("Break the question"):
        return json.dumps({"sub_queries": [p.split("Question: ", 1)[1].split("\n", 1)[0]]})
    if "numbered text chunks" in p:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in p:
        return json.dumps({"gap_queries": []})
    if p.startswith("Write the section"):
        number = p.split("Sources:\n[", 1)[1].split("]", 1)[0]
        return f"As the documents say [{number}]."
    if p.startswith("Below is the draft"):
        draft = p.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]
        return f"## Introduction\n\nOverview [1].\n\n{draft}\n\n## Conclusion\n\nSmall and local [1]."
    raise AssertionError(p[:120])


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    model = ScriptedChatModel([reply] * 60)
    app = memory_app(model)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    return model


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["query", *args], catch_exceptions=False)


def test_deep_research_shows_steps_verdicts_and_the_checks(llm: ScriptedChatModel) -> None:
    result = run("--agent", "deep_research", "-c", "milvus", Q)
    assert result.exit_code == 0, result.output
    err, out = result.stderr, result.stdout
    assert "Researching in milvus (steps within its token budget)\n" in err  # no web search configured: nothing said about it
    assert "Step 1: search — I need facts." in err and "Step 2: answer" in err
    assert "✓ kept 3 of 3 new chunks for: Milvus Lite" in err
    assert "evaluator (definitive ✓, attribution ✓): accepted" in err
    # the short answer first (#19); an answer that only repeats it is said once, with its citation
    assert out.startswith("**Answer:** Milvus Lite runs in your Python process [1].\n\n")
    assert "*Evaluator checks: definitive passed, attribution passed.*" in out
    assert "## Sources\n\n- /d/lite.md: [1]" in out
    assert "Usage: 4 LLM calls" in err


def test_deep_research_json_has_checks_and_beast_mode(llm: ScriptedChatModel) -> None:
    data = json.loads(run("--agent", "deep_research", "-c", "milvus", "--json", Q).stdout)
    assert data["agent"] == "deep_research" and data["checks"] == {"definitive": True, "attribution": True}
    assert data["beast_mode"] is False and data["title"] == "" and data["sections"] == []


def test_long_report_with_an_outline_file_writes_one_markdown_report(llm: ScriptedChatModel, tmp_path: Path) -> None:
    outline = tmp_path / "outline.md"
    outline.write_text("# Milvus Lite notes\n\n## Basics\nWhat is Milvus Lite?\n\n## Names\nWhich names may "
                       "collections have?\n", encoding="utf-8")
    target = tmp_path / "report.md"
    result = run("--report", "long", "--agent", "deep_search", "--outline", str(outline), "-c", "milvus",
                 "-o", str(target), Q)
    assert result.exit_code == 0, result.output
    assert "Outline: Milvus Lite notes (from the outline file)\n  1. Basics: What is Milvus Lite?" in result.stderr
    assert "Section 1/2: Basics" in result.stderr and "Editing the whole report" in result.stderr
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Milvus Lite notes\n\n## Contents\n\n1. [Introduction](#introduction)\n2. [Basics]"
                           "(#basics)\n3. [Names](#names)\n4. [Conclusion](#conclusion)\n5. [Contradictions and "
                           "open questions](#contradictions-and-open-questions)")
    assert "## Basics\n\nAs the documents say [" in text and "\n## Sources\n\n- /d/lite.md: [1]" in text
    assert not any(p.startswith("Plan the table of contents") for p in llm.prompts)


def test_outline_only_plans_and_writes_the_outline_for_editing(llm: ScriptedChatModel, tmp_path: Path) -> None:
    outline = tmp_path / "outline.md"
    result = run("--report", "long", "--outline-only", "--outline", str(outline), Q)
    assert result.exit_code == 0, result.output
    assert outline.read_text(encoding="utf-8") == ("# Milvus Lite explained\n\n## Basics\nWhat is Milvus Lite?\n\n"
                                                   "## Storage\nWhere does Milvus Lite store data?\n\n## Limits\n"
                                                   "Which names may collections have?\n")
    assert f"Outline written to {outline}: edit it" in result.stderr
    assert len(llm.history) == 1


def test_long_report_plans_its_outline_and_researches_with_deep_research(llm: ScriptedChatModel) -> None:
    result = run("--report", "long", "--agent", "deep_research", "-c", "milvus", Q)
    assert result.exit_code == 0, result.output
    assert "Outline: Milvus Lite explained\n" in result.stderr and "Section 3/3: Limits" in result.stderr
    assert result.stdout.startswith("## Contents")
    assert result.stderr.count("evaluator (definitive ✓, attribution ✓): accepted") == 3


@pytest.mark.parametrize("args, message", [
    (["--outline", "x.md"], "--outline applies to long reports"),
    (["--outline-only"], "--outline-only writes the planned outline to --outline FILE"),
])
def test_outline_options_used_wrongly_are_usage_errors(llm: ScriptedChatModel, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["query", *args, Q])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize("args, message", [
    (["--agent", "deep_research", "--web"], "web search is not configured"),
    (["--agent", "deep_search", "--web"], "the deep_search agent does not search the web"),
    (["--agent", "deep_research", "--save-to", "pages"], "--save-to stores the web pages a query reads"),
    (["--report", "long", "--agent", "naive"], "a long report researches its sections with deep_research"),
])
def test_web_and_report_options_used_wrongly_are_clear_errors(llm: ScriptedChatModel, args: list[str],
                                                              message: str) -> None:
    result = run(*args, Q)
    assert result.exit_code == 1 and message in result.stderr and "Traceback" not in result.output
    assert llm.history == []


def test_long_report_json_lists_each_sections_status_and_the_sections_verdicts(llm: ScriptedChatModel) -> None:
    data = json.loads(run("--report", "long", "--agent", "deep_research", "-c", "milvus", "--json", Q).stdout)
    assert [(q["question"], q["status"]) for q in data["questions"]] == [
        ("What is Milvus Lite?", "answered"), ("Where does Milvus Lite store data?", "answered"),
        ("Which names may collections have?", "answered")]
    assert [(e["question"], e["passed"]) for e in data["evaluations"]] == [
        ("What is Milvus Lite?", True), ("Where does Milvus Lite store data?", True),
        ("Which names may collections have?", True)]
    assert data["web_searches"] == [] and data["language"] == "en"
