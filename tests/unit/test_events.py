"""Typed events: docs/events.md is generated from the code, every kind is documented, and every view renders (or
deliberately ignores) every kind it can receive (issue #10)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from deepsearcher import events
from deepsearcher.cli.render_eval import EvalProgress
from deepsearcher.cli.render import LoadProgress, QueryProgress
from deepsearcher.types import Chunk, Report, Source, Usage
from tests.conftest import REPO


def test_docs_events_md_matches_the_code() -> None:
    text = (REPO / "docs" / "events.md").read_text(encoding="utf-8")
    assert text == events.markdown(), "regenerate: python -m deepsearcher.events > docs/events.md"


def test_every_event_is_a_documented_frozen_dataclass_with_a_unique_kind() -> None:
    classes = events.event_classes()
    assert len({cls.kind for cls in classes}) == len(classes) == len(events.kinds())
    for cls in classes:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
        assert cls.__doc__ and cls.kind.startswith(cls.group + "."), cls
        for field in dataclasses.fields(cls):
            assert field.metadata.get("doc"), f"{cls.kind}.{field.name} has no description"


def test_event_data_is_json() -> None:
    ref = events.ChunkRef(id="c1", collection="docs", source="/d/a.md", page=None, title="a")
    accepted = events.QueryAccepted(iteration=1, sub_query="q", retrieved=2, accepted=1, chunks=[ref],
                                    fell_back=False)
    assert json.loads(json.dumps(accepted.data))["chunks"][0] == {"id": "c1", "collection": "docs",
                                                                 "source": "/d/a.md", "page": None, "title": "a"}
    assert accepted.kind == "query.accepted" and accepted.data["accepted"] == 1


def test_every_cli_view_covers_every_kind_it_receives() -> None:
    console = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the process
    cases = {
        QueryProgress(console, quiet=True): events.kinds("query"),
        LoadProgress(console, quiet=True): events.kinds("load") + events.kinds("crawl"),
        EvalProgress(console, quiet=True): events.kinds("eval") + events.kinds("load") + events.kinds("crawl"),
    }
    for view, expected in cases.items():
        missing = set(expected) - view.covered_kinds()
        assert not missing, f"{type(view).__name__} has no renderer for {sorted(missing)}"


def samples() -> list[events.Event]:
    """At least one event of every query kind, and one per branch of its wording."""
    ref = events.ChunkRef(id="c1", collection="docs", source="/d/a.md", page=None, title="a")
    chunk = Chunk(id="c1", text="Milvus Lite runs in-process.", source="/d/a.md", title="a", page=2, chunk_index=0,
                  doc_hash="h")
    report = Report(question="q", answer="It runs in-process [1].", sources=[Source(1, chunk, "docs")],
                    sub_queries=["q"], iterations=1, usage=Usage(llm_calls=3), agent="deep_search")
    return [
        events.QueryStart(question="q", agent="auto", collections=["docs", "web"], max_iter=3, web="searxng"),
        events.QueryAgent(agent="deep_search", chosen_by="llm"),
        events.QuerySubQueries(iteration=1, sub_queries=["what is a", "what is b"], duplicates=["what's a"]),
        events.QueryRouted(iteration=1, sub_query="what is a", collections=["docs"], dropped=["nope"],
                           fell_back=False, query="a definition"),
        events.QueryAccepted(iteration=1, sub_query="what is a", retrieved=2, accepted=1, chunks=[ref],
                             fell_back=False),
        events.QueryAccepted(iteration=2, sub_query="what is b", retrieved=0, accepted=0, chunks=[], fell_back=False),
        events.QueryIntermediate(iteration=1, sub_query="what is a", answer=""),
        events.QueryGaps(iteration=1, gaps=["when was a made"], stop=None, tokens=10),
        events.QueryGaps(iteration=2, gaps=["who made a"], stop="max_iter", tokens=20),
        events.QueryGaps(iteration=1, gaps=[], stop=None, tokens=10),
        events.QueryReasoning(step="reflect", text="  first\nsecond  "),
        events.QueryFallback(step="route", error="unusable reply", fallback="every collection"),
        events.QueryTrimmed(step="relevance", kept=3, dropped=2, excerpt_chars=400, prompt_tokens=900, window=2048),
        events.QueryCutOff(step="synthesise", max_tokens=None, action="kept the partial report with a note"),
        events.QueryModel(model="qwen", stage="assembling", done=0, total=10**9),
        events.QueryModel(model="qwen", stage="assembling", done=5 * 10**8, total=10**9),
        events.QueryModel(model="qwen", stage="assembling", done=10**9, total=10**9),
        events.QueryModel(model="qwen", stage="loading", total=10**9),
        events.QueryModel(model="qwen", stage="ready", total=10**9, seconds=2.5),
        events.QueryBudget(step="reflect", used=12000, budget=15000, reserve=3000),
        events.RetrievalNotice(collection="docs", requested="hybrid", mode="dense", notice="docs has no BM25"),
        events.QueryAnswerToken(text="It runs"),
        events.QueryAnswerRestart(dropped=7, reason="the reply held only source numbers"),
        events.QueryStep(step=2, question="who made a", original=False, action="search", allowed=["search"],
                         disabled={"answer": "no knowledge yet"}, think="need a source", fell_back=True, tokens=5),
        events.QueryWebSearch(query="a", provider="searxng", results=4, urls=["https://e.org"], new=3, error=""),
        events.QueryWebSearch(query="a", provider="brave", results=0, urls=[], new=0, error="HTTP 429"),
        events.QueryRead(step=3, opened=["/d/a.md (p. 2)", "https://e.org"], added=2, failed=["https://x.org: 404"]),
        events.QueryEvaluation(step=4, question="q", original=True, checks={"definitive": True, "freshness": None},
                               passed=False, critique="too vague", plan="cite"),
        events.QueryBeastMode(reason="max_steps", step=9, tokens=100, bad_attempts=1),
        events.QueryOutline(title="Milvus", sections=[{"title": "Lite", "question": "what is Lite"}], source="file"),
        events.QuerySection(index=1, total=2, title="Lite", question="what is Lite", status="research", sources=0),
        events.QuerySection(index=1, total=2, title="Lite", question="what is Lite", status="written", sources=3),
        events.QuerySection(index=0, total=2, title="", question="", status="editing", sources=5),
        events.QuerySaved(collection="web", pages=2, chunks=7, error=""),
        events.QuerySaved(collection="web", pages=0, chunks=0, error="the store is read-only"),
        events.QueryReport(report=report),
    ]


def test_every_query_kind_has_its_own_words() -> None:
    by_kind = {event.kind for event in samples()}
    assert by_kind == set(events.kinds("query"))
    for event in samples():
        lines = event.describe()
        assert all(isinstance(line, str) for line in lines), event
        generic = events.Event.describe(event)
        assert lines != generic, f"{event.kind} has no wording of its own"
    assert events.QueryAccepted(iteration=1, sub_query="q", retrieved=2, accepted=1, chunks=[],
                                fell_back=False).describe() == ["✓ kept 1 of 2 new chunks for: q"]
    assert samples()[-1].describe() == ["Report written with 1 source (3 LLM calls)"]


def test_the_server_sends_each_event_with_its_words() -> None:
    pytest.importorskip("fastapi")
    from deepsearcher.server.app import finish_report
    from deepsearcher.server.streaming import event_payload

    for event in samples():
        payload = json.loads(json.dumps(event_payload(event, finish_report), default=str))
        assert payload["lines"] == event.describe(), event.kind
        if isinstance(event, events.QueryReport):
            assert payload["answer"] == event.report.answer and "answer_html" in payload
        else:
            assert {k: v for k, v in payload.items() if k != "lines"} == json.loads(json.dumps(event.data))
            assert event_payload(event, finish_report, lines=False) == event.data  # unless asked, the fields only


NODE = shutil.which("node")
#: runs app.js with a minimal DOM and prints, per payload, the text of every step line it added
PAGE_DRIVER = """
const fs = require("fs"), vm = require("vm");
class Node {
  constructor(tag) { this.tag = tag; this.children = []; this.dataset = {}; this.className = ""; this._text = ""; }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); }
  append(...xs) { for (const x of xs) this.children.push(typeof x === "string" ? Object.assign(new Node("#text"),
    { _text: x }) : x); }
  replaceChildren(...xs) { this.children = []; this.append(...xs); }
}
const nodes = {};
const document = { createElement: (tag) => new Node(tag), getElementById: (id) => (nodes[id] ||= new Node("div")),
  addEventListener: () => {} };
const context = { document, sessionStorage: { getItem: () => null }, console };
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), context);
const out = [];
for (const [kind, data] of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const steps = document.getElementById("steps");
  steps.replaceChildren();
  context.addStep(kind, data);
  out.push(steps.children.map((li) => ({ kind: li.dataset.kind,
    lines: li.children.slice(1).map((span) => span.textContent) })));
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="needs node to run deepsearcher/web/app.js (apt-get install nodejs)")
def test_the_web_page_shows_every_query_kind_in_the_shared_words(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from deepsearcher.server.app import finish_report
    from deepsearcher.server.streaming import event_payload

    page = REPO / "deepsearcher" / "web" / "app.js"
    assert 'case "query.' not in page.read_text(encoding="utf-8"), "app.js words events itself again"
    payloads = [(e.kind, json.loads(json.dumps(event_payload(e, finish_report), default=str))) for e in samples()]
    driver = tmp_path / "driver.js"
    driver.write_text(PAGE_DRIVER, encoding="utf-8")
    shown = json.loads(subprocess.run([str(NODE), str(driver), str(page)], input=json.dumps(payloads), text=True,
                                      capture_output=True, check=True).stdout)
    for event, steps in zip(samples(), shown):
        expected = [{"kind": event.kind, "lines": event.describe()}] if event.describe() else []
        assert steps == expected, event.kind


def test_kinds_group_names() -> None:
    assert events.kinds("query")[0] == "query.start" and events.kinds("query")[-1] == "query.report"
    assert set(events.kinds()) == {cls.kind for cls in events.event_classes()}
    assert Path(events.__file__).name == "events.py"


@pytest.mark.parametrize(("agent", "max_iter", "line"), [
    ("naive", 3, "Researching in docs (one search)"),
    ("deep_research", 3, "Researching in docs (steps within its token budget)"),
    ("deep_search", 1, "Researching in docs (max 1 round)"),
    ("chain_of_rag", 3, "Researching in docs (max 3 rounds)"),
])
def test_query_start_says_how_far_the_agent_goes(agent: str, max_iter: int, line: str) -> None:
    """Rounds are said only for the agents that search in rounds: a naive query makes one search."""
    start = events.QueryStart(question="q", agent=agent, collections=["docs"], max_iter=max_iter)
    assert start.describe() == [line]


def test_a_fallback_line_names_the_step_in_words_and_the_event_keeps_its_id():
    # a new user read "! synthesise: the report cites no source" on the quick start
    from deepsearcher.events import QueryFallback

    event = QueryFallback(step="synthesise", error="the report cites no source", fallback="quoted [1]")
    assert event.describe() == ["! writing the report: the report cites no source; quoted [1]"]
    assert event.data["step"] == "synthesise"
    assert QueryFallback(step="a_new_step", error="e", fallback="f").describe() == ["! a_new_step: e; f"]
