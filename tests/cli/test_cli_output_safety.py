"""Every CLI command prints strings from documents, pages, file names and models as plain text
(../shared/cases/security/cli_markup_injection.sh as tests, one per command).

HOSTILE holds Rich markup that crashed the CLI (``[/red]``), markup that made a disguised terminal hyperlink
(``[link=...]``) and raw escape sequences (an OSC 8 hyperlink, a colour, a line feed). Each command must exit as usual,
show the markup literally, and never emit an OSC 8 sequence or a raw ESC from the data, even on a colour terminal.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import pytest
from click.testing import CliRunner
from rich.console import Console

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder, MemoryStore
from tests.unit.query_fakes import chunk

OSC8 = "\x1b]8;;https://evil.example/\x1b\\"
HOSTILE = f"Guide [/red] part [link=https://evil.example/]Official docs[/link] {OSC8}click{OSC8[:-1]}\x1b[31mred"
SHOWN = "Guide [/red] part [link=https://evil.example/]Official docs[/link] \\x1b]8;;https://evil.example/"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal: styles are emitted, so a leak would show
    monkeypatch.setenv("COLUMNS", "400")
    return CliRunner()


def assert_plain(output: str) -> None:
    """The hostile text is shown, not interpreted: no OSC 8 hyperlink, no ESC but Rich's own SGR styles."""
    assert "MarkupError" not in output and "Unexpected error" not in output and "Traceback" not in output
    assert "\x1b]8;" not in output
    assert "\x1b[31mred" not in output


def hostile_app(monkeypatch: pytest.MonkeyPatch, answer: str = "") -> Any:
    """The CLI's app: a memory store holding a chunk with a hostile title, source and collection description."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    embedder = HashEmbedder(256)
    probe = replace(chunk("Milvus Lite markup probe text.", f"/d/{HOSTILE}.md"), title=HOSTILE)
    store = MemoryStore().add("docs", HOSTILE, [probe], embedder)
    store.add("web", "pages", [chunk("Milvus Lite page probe text.", "https://example.org/x")], embedder)

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if "numbered text chunks" in prompt:
            return json.dumps({"relevant": [1]})
        return answer

    app = DeepSearcher(load_settings(None, {"llm": None, "query": {"agent": "naive"}}), store=store,
                       embedder=embedder, llm=ScriptedChatModel([reply] * 20))
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    return app


def test_load_prints_a_hostile_reason_phrase_and_file_names_literally(runner: CliRunner,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    from tests.integration.hostile_http import HostileServer

    hostile_app(monkeypatch)
    site = HostileServer()
    try:
        web = runner.invoke(main, ["load", site.url("/reason"), site.url("/page"), "-c", "mk"],
                            catch_exceptions=False)
    finally:
        site.close()
    assert web.exit_code == 1  # a URL that gave no document is an error, reported as one
    assert_plain(web.output)
    assert "HTTP 404 Not Found [/red]" in web.output

    name = HOSTILE.replace("/", "|")
    (tmp_path / f"{name}.md").write_text("Milvus Lite hostile file name probe.")
    (tmp_path / f"empty {name}.md").write_text("")
    files = runner.invoke(main, ["load", str(tmp_path), "-c", "mk"], catch_exceptions=False)
    assert files.exit_code == 0
    assert_plain(files.output)
    shown = "Guide [|red] part [link=https:||evil.example|]Official docs[|link] \\x1b]8;;https:||evil.example|"
    assert files.output.count(shown) == 3  # the skipped line, and both rows of the summary


def test_retrieve_prints_hostile_titles_and_sources_literally(runner: CliRunner,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    hostile_app(monkeypatch)
    result = runner.invoke(main, ["retrieve", "markup probe", "-c", "docs", "-k", "1"], catch_exceptions=False)
    assert result.exit_code == 0
    assert_plain(result.output)
    assert SHOWN in result.output  # the title (the source is shortened)
    assert "/d/Guide [/red] part [link=https://evil.example/]Official" in result.output


def test_collections_prints_a_hostile_description_literally(runner: CliRunner,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    hostile_app(monkeypatch)
    result = runner.invoke(main, ["collections"], catch_exceptions=False)
    assert result.exit_code == 0
    assert_plain(result.output)
    assert SHOWN in result.output


def test_query_prints_a_hostile_answer_and_sources_literally(runner: CliRunner,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    hostile_app(monkeypatch, answer=f"Milvus Lite is local [1]. {HOSTILE} [Official docs](https://evil.example/)")
    result = runner.invoke(main, ["query", "What is Milvus Lite?", "-c", "docs"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert_plain(result.output)
    assert "[link=https://evil.example/]" in result.stdout and "\\x1b[31mred" in result.stdout


def test_error_messages_print_hostile_paths_literally(runner: CliRunner, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./milvus.db\n")
    missing = tmp_path / "[/red] [link=https://evil.example/]x[/link]"
    result = runner.invoke(main, ["--config", str(cfg), "load", str(missing)], catch_exceptions=False)
    assert result.exit_code == 1
    assert_plain(result.output)
    assert "not found:" in result.output and "[/red] [link=https:/evil.example/]x[/link]" in result.output


def test_config_check_prints_hostile_values_literally(runner: CliRunner, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text('llm: null\nloader:\n  exclude: ["[/red]", "[link=https://evil.example/]x[/link]"]\n')
    result = runner.invoke(main, ["--config", str(cfg), "config", "check"], catch_exceptions=False)
    assert result.exit_code == 0
    assert_plain(result.output)
    assert "[/red]" in result.output and "[link=https://evil.example/]x[/link]" in result.output


def test_eval_views_print_a_hostile_dataset_name_literally() -> None:
    from deepsearcher.cli.render_eval import EvalProgress, render_eval_summary
    from deepsearcher.events import EvalStart

    console = Console(record=True, force_terminal=True, width=300)
    with EvalProgress(console) as progress:
        progress.on_event(EvalStart(dataset=HOSTILE, mode="retrieve", retrieval="bm25", total=2, done=0))

    class Summary:  # the fields render_eval_summary reads
        dataset, mode, retrieval, done, questions, ks = HOSTILE, "retrieve", "bm25", 2, 2, [5]
        n_recall_complete = n_recall_all = 2
        recall_complete = recall_all = {5: 0.5}
        em = f1 = llm_calls = citation_share = seconds_mean = None
        errors, load, complete, out_dir = 0, None, True, f"/tmp/{HOSTILE}"

    render_eval_summary(console, Summary())  # type: ignore[arg-type]
    text = console.export_text(styles=True)
    assert_plain(text)
    assert text.count(SHOWN) >= 2


def test_deep_research_prints_hostile_steps_verdicts_and_outlines_literally(runner: CliRunner,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The DeepResearch and long-report lines (``render_research``) carry the model's words (its reason, gap
    questions, the evaluator's critique, an outline's titles) and sources' names: all printed literally."""
    app = hostile_app(monkeypatch)
    state = {"answered": 0}

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Plan the table of contents"):
            return json.dumps({"title": HOSTILE, "sections": [{"title": HOSTILE, "question": f"What is {HOSTILE}?"},
                                                              {"title": "B", "question": "Why?"},
                                                              {"title": "C", "question": "How?"}]})
        if prompt.startswith("You are researching"):
            if "(nothing yet)" in prompt:
                return json.dumps({"action": "search", "think": HOSTILE, "queries": [f"Milvus {HOSTILE}"]})
            if '- "read":' in prompt and state["answered"] == 0:
                return json.dumps({"action": "read", "think": HOSTILE, "items": [1]})
            state["answered"] += 1
            return json.dumps({"action": "answer", "answer": f"Milvus Lite [1]. {HOSTILE}"})
        if prompt.startswith("Decide which checks"):
            return json.dumps({"definitive": True, "attribution": True})
        if prompt.startswith("You are a strict reviewer"):
            return json.dumps({"definitive": True, "attribution": state["answered"] > 1, "critique": HOSTILE,
                               "plan": HOSTILE})
        if prompt.startswith("Below is the draft"):
            return "too short"
        return json.dumps({"collections": ["docs"]})

    from deepsearcher.app import DeepSearcher

    research = DeepSearcher(app.settings, store=app.store, embedder=app.embedder,
                            llm=ScriptedChatModel([reply] * 80))
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: research)
    for args, shown in ((["--agent", "deep_research", "-v"], ["Step 1: search — " + SHOWN, "rejected: " + SHOWN]),
                        (["--agent", "deep_research", "--report", "long"], ["Outline: " + SHOWN,
                                                                            "Section 1/3: " + SHOWN])):
        state["answered"] = 0
        result = runner.invoke(main, ["query", *args, "What is Milvus Lite?", "-c", "docs"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert_plain(result.output)
        assert all(line in result.stderr for line in shown), result.stderr
        assert "\\x1b[31mred" in result.stderr
