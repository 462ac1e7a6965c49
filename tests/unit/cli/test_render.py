"""CLI output a newcomer can read (issue #13): plain progress lines when the output is not a terminal, totals,
"already loaded (unchanged)", escaped file names and dropped JSON records in the load table."""

from __future__ import annotations

import io

from rich.console import Console

from deepsearcher.cli.render_eval import EvalProgress
from deepsearcher.events import EvalQuestion, EvalStart, LoadBatch, LoadDescribe, LoadSource, LoadStart
from deepsearcher.cli.render import LoadProgress, render_load_summary
from deepsearcher.cli.safe_text import one_line as printable
from deepsearcher.types import CollectionDescription, FileResult, LoadSummary


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _console(terminal: bool = False) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=200), buffer


def test_load_prints_a_plain_line_every_few_seconds_when_not_a_terminal():
    console, buffer = _console()
    clock = Clock()
    with LoadProgress(console, clock=clock) as view:
        view.on_event(LoadStart(collection="docs", total=3))
        clock.now += 1
        view.on_event(LoadSource(source="/d/a.md", status="loaded", reason="", chunks=256))
        clock.now += 1
        view.on_event(LoadBatch(chunks=256, written=256, queued=256))  # 2 s after the first line: quiet
        clock.now += 6
        view.on_event(LoadSource(source="/d/b\nc.md", status="skipped", reason="binary file", chunks=0))
        view.on_event(LoadDescribe(collection="docs", by="llm"))
    lines = buffer.getvalue().splitlines()
    assert lines == ["Loading into docs: 0/3 sources, 0 chunks written (– chunks/s), 0 s",
                     "skipped /d/b\\nc.md: binary file",
                     "Loading into docs: 2/3 sources, 256 chunks written (32 chunks/s), 8 s",
                     "Asking the LLM for a description of docs (created without -d)"]


def test_a_terminal_gets_the_bar_with_a_total_and_no_plain_lines():
    console, buffer = _console(terminal=True)
    view = LoadProgress(console, clock=Clock())
    assert not view.plain
    view.on_event(LoadStart(collection="docs", total=3))
    assert view.progress.tasks[0].total == 3
    assert "Loading into docs:" not in buffer.getvalue()


def test_eval_says_already_loaded_and_counts_questions():
    console, buffer = _console()
    clock = Clock()
    view = EvalProgress(console, clock=clock)
    view.on_event(LoadStart(collection="eval_x", total=1))
    view.on_event(LoadSource(source="/c/corpus.json", status="unchanged", reason="", chunks=0))
    view.on_event(EvalStart(dataset="x", mode="retrieve", retrieval="bm25", total=4, done=1))
    clock.now += 6
    view.on_event(EvalQuestion(id="q2", done=2, total=4, recall={5: 0.5}, seconds=0.1, error=""))
    text = buffer.getvalue()
    assert "Corpus /c/corpus.json: already loaded (unchanged)" in text and "0 chunks" not in text
    assert "Questions: x · retrieve · bm25, 4 (resuming after 1)" in text
    assert "Questions 2/4, R@5 0.500, 6 s" in text


def test_the_corpus_bar_counts_chunks_against_those_split():
    console, _ = _console(terminal=True)
    view = EvalProgress(console, clock=Clock())
    view.on_event(LoadStart(collection="eval_x", total=1))
    view.on_event(LoadBatch(chunks=256, written=256, queued=6824))
    task = view.progress.tasks[0]
    assert (task.completed, task.total) == (256, 6824)


def test_printable_escapes_control_characters():
    assert printable("a\nb\tc\x1b[31m\u2028d") == "a\\nb\\tc\\x1b[31m\\u2028d"
    assert printable("plain – ü 日本") == "plain – ü 日本"


def test_load_table_escapes_names_and_shows_dropped_records():
    console, buffer = _console()
    summary = LoadSummary("docs", [FileResult("/d/evil\nname [red]x[/].md", "loaded", chunks=2),
                                   FileResult("/d/records.jsonl", "loaded", chunks=2,
                                              skipped_records={"text is a number": 1, "text is an object": 1}),
                                   FileResult("/d/locked.pdf", "skipped", "encrypted PDF that needs a password")],
                          chunks_written=4, chunks_deleted=0, seconds=1.0, embed_seconds=0.5, created=True,
                          description=CollectionDescription("docs", "Files: evil.md.", "files",
                                                            "no LLM is configured"))
    render_load_summary(console, summary)
    text = buffer.getvalue()
    assert "/d/evil\\nname [red]x[/].md" in text  # one row, markup shown as text
    assert "2 records skipped: text is a number (1), text is an object (1)" in text
    assert "2 JSON record(s) without text skipped" in text
    assert "Description of docs (from file names and titles; no LLM is configured): Files: evil.md." in text
    assert "deepsearcher collections describe docs --set" in " ".join(text.split())


def test_the_local_models_preparation_shows_as_lines():
    from deepsearcher.cli.render import QueryProgress
    from deepsearcher.events import QueryModel

    console, buffer = _console()
    total = 1_117_320_768
    with QueryProgress(console) as view:
        for done in (8 << 20, total // 2, total):
            view.on_event(QueryModel(model="qwen2.5-coder-1.5b-instruct", stage="assembling", done=done, total=total))
        assert view.status == "Assembling qwen2.5-coder-1.5b-instruct: 100% of 1.1 GB"
        view.on_event(QueryModel(model="qwen2.5-coder-1.5b-instruct", stage="loading", total=total))
        view.on_event(QueryModel(model="qwen2.5-coder-1.5b-instruct", stage="ready", total=total, seconds=3.25))
    assert buffer.getvalue().splitlines() == [
        "Assembling the bundled model qwen2.5-coder-1.5b-instruct (1.1 GB) from its packages into the cache (first "
        "run only)",
        "  ✓ assembled and verified (sha256) qwen2.5-coder-1.5b-instruct",
        "Loading the local model qwen2.5-coder-1.5b-instruct (1.1 GB)",
        "  ✓ qwen2.5-coder-1.5b-instruct loaded in 3.2 s; it answers on this machine's CPU",
    ]
