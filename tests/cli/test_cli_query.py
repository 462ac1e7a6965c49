"""``deepsearcher query`` through click's CliRunner: progress, report, usage, --json, --output, --verbose, and the
fail-fast messages when no LLM is configured or reachable."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.llm.base import ChatResult
from deepsearcher.testing.scripted import ScriptedChatModel, chunk_numbers
from deepsearcher.vectordb.milvus import MilvusStore
from tests.unit.query_fakes import memory_app

def reply(messages) -> str | ChatResult:
    """The scripted model's reply by step (the question is searched too, so the number of calls depends on it)."""
    prompt = messages[-1]["content"]
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": ["Milvus Lite local file", "collection names"]})
    if prompt.startswith("Choose the collections"):
        query = prompt.split("Search query: ", 1)[1].split("\n", 1)[0]
        return json.dumps({"collections": ["milvus", "atlantis"] if query == "Milvus Lite local file" else ["milvus"]})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": chunk_numbers(prompt)[:1]})
    if "Search queries already run" in prompt:
        return ChatResult(json.dumps({"gap_queries": []}), reasoning="The two chunks cover both parts.")
    return "Milvus Lite keeps data in a local file [1]. Names use letters, digits, underscores [2]. Moon [9]."


REPLIES = [reply] * 12


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    """Make the CLI build a DeepSearcher over the memory store with a scripted model."""
    llm = ScriptedChatModel(REPLIES)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    return llm


def test_query_shows_progress_report_sources_and_usage(runner: CliRunner, scripted: ScriptedChatModel):
    result = runner.invoke(main, ["query", "What is Milvus Lite and how are collections named?"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    err, out = result.stderr, result.stdout
    assert "Researching in milvus, recipes (max 3 rounds)" in err
    assert ("  • What is Milvus Lite and how are collections named?\n  • Milvus Lite local file\n"
            "  • collection names") in err  # the question itself is searched too (#11)
    assert "→ Milvus Lite local file: milvus (ignored unknown: atlantis)" in err
    assert "✓ kept 1 of 3 new chunks for: What is Milvus Lite and how are collections named?" in err
    assert "– nothing new for: Milvus Lite local file (its chunks were already found)" in err
    assert "Research done after 1 round(s): nothing left to search" in err
    assert "Usage: 8 LLM calls" in err and "removed 1 citation(s) to unknown sources" in err
    # the short answer first (the model wrote no Answer: line, so it is the report's first sentence), then the report
    assert out.startswith("**Answer:** Milvus Lite keeps data in a local file.\n\nMilvus Lite keeps data in a local "
                          "file [1]. Names use letters, digits, underscores [2]. Moon.")
    assert "## Sources\n\n- /d/lite.md: [1]\n- /d/limits.md: [2]" in out  # each file once (#11)
    assert "reasoning" not in err
    assert "Traceback" not in result.output


def test_query_json(runner: CliRunner, scripted: ScriptedChatModel):
    result = runner.invoke(main, ["query", "What is Milvus Lite and how are collections named?", "--json"],
                           catch_exceptions=False)
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["answer"].endswith("Moon.")
    assert [s["chunk"]["source"] for s in data["sources"]] == ["/d/lite.md", "/d/limits.md"]
    assert data["sub_queries"] == ["What is Milvus Lite and how are collections named?", "Milvus Lite local file",
                                   "collection names"]
    assert data["iterations"] == 1 and data["usage"]["llm_calls"] == 8 and data["removed_citations"] == 1
    assert result.stderr == ""  # no progress noise around the JSON


def test_query_output_file_and_verbose_reasoning(runner: CliRunner, scripted: ScriptedChatModel, tmp_path: Path):
    target = tmp_path / "report.md"
    result = runner.invoke(main, ["query", "q?", "--output", str(target), "--verbose", "--max-iter", "1",
                                  "-c", "milvus", "-c", "recipes"], catch_exceptions=False)
    assert result.exit_code == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# q?\n\n**Answer:** Milvus Lite keeps data in a local file.\n\nMilvus Lite keeps data") \
        and "## Sources" in text  # --output has a title (#10)
    assert f"Report written to {target}" in result.stderr
    assert "[reasoning: reflect]" in result.stderr and "The two chunks cover both parts." in result.stderr


def test_query_without_llm_says_how_to_configure(runner: CliRunner, tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./milvus.db\n")
    result = runner.invoke(main, ["--config", str(cfg), "query", "anything"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "Error: no LLM is configured" in result.stderr
    assert "remove `llm: null` from the config to answer with the bundled local model" in " ".join(
        result.stderr.split())
    assert "docs/llm-providers.md" in result.stderr and "Traceback" not in result.output


def test_query_with_unreachable_llm_fails_fast(runner: CliRunner, tmp_path: Path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm:\n  base_url: http://127.0.0.1:{port}/v1\n  model: m\nvector_db:\n  uri: ./milvus.db\n")
    empty = runner.invoke(main, ["--config", str(cfg), "query", "anything"], catch_exceptions=False)
    assert empty.exit_code == 1 and "there are no collections yet" in empty.stderr  # the store is checked first
    store = MilvusStore(str(tmp_path / "milvus.db"))
    store.create_collection("docs", description="d", model_name="m", dim=4)
    store.close()
    result = runner.invoke(main, ["--config", str(cfg), "query", "anything"], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"cannot reach the LLM server at http://127.0.0.1:{port}/v1" in result.stderr
    assert "Traceback" not in result.output
    typo = runner.invoke(main, ["--config", str(cfg), "query", "anything", "-c", "dosc"], catch_exceptions=False)
    assert typo.exit_code == 1 and "no collection named 'dosc'" in typo.stderr  # said before the LLM is reached
    as_json = runner.invoke(main, ["--config", str(cfg), "query", "anything", "--json"], catch_exceptions=False)
    assert as_json.exit_code == 1 and "cannot reach the LLM server" in as_json.stderr
    error = json.loads(as_json.stdout)  # a script reading stdout gets the error as JSON, not an empty output
    assert error["kind"] == "ProviderError" and error["error"].startswith("cannot reach the LLM server at http")
    assert "start the server" in error["hint"]
    text = runner.invoke(main, ["--config", str(cfg), "query", "--", "--json"], catch_exceptions=False)
    assert text.exit_code == 1 and text.stdout == ""  # "--json" as the question, after --, is no option


def test_query_help_lists_the_options(runner: CliRunner):
    result = runner.invoke(main, ["query", "--help"])
    for option in ("--collection", "--max-iter", "--agent", "--output", "--json", "--verbose"):
        assert option in result.output


def test_output_file_equals_the_page_download_byte_for_byte(runner: CliRunner, scripted: ScriptedChatModel,
                                                            tmp_path: Path):
    """The web page downloads the API's ``markdown`` field; ``--output`` must write the same bytes (issue #10)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from deepsearcher.server import create_app

    target = tmp_path / "report.md"
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "--output", str(target)], catch_exceptions=False)
    assert result.exit_code == 0
    app = memory_app(ScriptedChatModel(REPLIES))
    client = TestClient(create_app(app.settings, searcher=app), base_url="http://127.0.0.1")
    reply = client.post("/api/query", json={"question": "What is Milvus Lite?", "stream": False})
    assert reply.status_code == 200, reply.text
    assert target.read_bytes() == reply.json()["markdown"].encode("utf-8")
    page = (Path(cli.__file__).parents[1] / "web" / "app.js").read_text(encoding="utf-8")
    assert "new Blob([state.report.markdown]" in page  # the download button saves exactly that field


def test_a_question_over_the_limit_is_refused_with_the_setting_named(runner: CliRunner,
                                                                     scripted: ScriptedChatModel):
    question = "Why was my receipt rejected again? " * 600  # ~21,000 characters
    result = runner.invoke(main, ["query", question], catch_exceptions=False)
    assert result.exit_code == 1
    assert "the limit is query.max_question_tokens = 3,000 tokens" in " ".join(result.stderr.split())
    assert "Traceback" not in result.output and scripted.history == []


def test_output_docx_and_html_by_extension_or_format(runner: CliRunner, scripted: ScriptedChatModel,
                                                     tmp_path: Path):
    """``-o report.docx`` writes Word from the report Markdown; ``--format html`` names the format for any file."""
    from docx import Document

    docx_path, html_path = tmp_path / "report.docx", tmp_path / "report.out"
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-o", str(docx_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    document = Document(str(docx_path))
    texts = [p.text for p in document.paragraphs]
    assert texts[0] == "What is Milvus Lite?" and "Sources" in texts
    assert any(p.startswith("Milvus Lite keeps data in a local file [1].") for p in texts)
    assert [h.fragment for p in document.paragraphs for h in p.hyperlinks if h.fragment][:1] == ["source_1"]
    scripted.enqueue(*REPLIES)  # a second run
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-o", str(html_path), "--format", "html"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    html = html_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and '<a href="#source-1" class="cite">1</a>' in html


def test_an_unknown_output_format_fails_before_the_research(runner: CliRunner, scripted: ScriptedChatModel,
                                                             tmp_path: Path):
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-o", str(tmp_path / "r.odt")],
                           catch_exceptions=False)
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "cannot export a report as extension of" in err and "r.odt" in err and "--format md|html|docx|pdf" in err
    assert scripted.history == [] and not (tmp_path / "r.odt").exists()


def test_an_output_in_a_missing_folder_fails_before_the_research(runner: CliRunner, scripted: ScriptedChatModel,
                                                                 tmp_path: Path):
    target = tmp_path / "no such folder" / "r.html"
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-o", str(target)], catch_exceptions=False)
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert f"cannot write the report to {target}: the folder {target.parent} does not exist" in err
    assert "create the folder first" in err and "Traceback" not in result.output
    assert scripted.history == []  # no LLM call was spent


def test_a_failed_output_write_keeps_the_printed_report(runner: CliRunner, scripted: ScriptedChatModel,
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The file is written after the report is printed: a write that fails then loses nothing of the research."""
    from deepsearcher import report_export

    def disk_full(markdown: str, path: str, fmt: str | None = None) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report_export, "write_report", disk_full)
    target = tmp_path / "r.md"
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-o", str(target)], catch_exceptions=False)
    assert result.exit_code == 1
    assert "Milvus Lite keeps data in a local file" in result.stdout and "## Sources" in result.stdout
    err = " ".join(result.stderr.split())
    assert f"the report above was not written to {target}: [Errno 28] No space left on device" in err
    assert "Traceback" not in result.output and not target.exists()
