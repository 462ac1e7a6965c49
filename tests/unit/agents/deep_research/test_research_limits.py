"""DeepResearch and long reports on the machinery every agent shares (issue #12 on #11): prompts fitted to the
model's window with the most relevant knowledge kept, the forced answer fitted to what the budget leaves, the
editing pass not asked for when its reply could not hold the report, and the reply handling of ``steps.ask``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from deepsearcher.agents.deep_research.agent import DeepResearchAgent
from deepsearcher.agents.long_report.agent import write_long_report
from deepsearcher.agents.reply_guard import LOOPING
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.agents.long_report.outline import Outline, Section
from deepsearcher.agents.tools import ResearchTools
from deepsearcher.events import Event
from deepsearcher.llm.base import ChatResult
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder, MemoryStore
from tests.unit.query_fakes import DIM, chunk, make_ctx, of_kind

QUESTION = "Where does Milvus Lite keep its storage?"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
CHECKS = json.dumps({"definitive": True, "attribution": True})
PASS = json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})


def filler_store() -> MemoryStore:
    """Twelve long notes; only /d/f7.md is about Milvus Lite's storage."""
    notes = [chunk(f"Fact {i}: " + " ".join(WORDS[(i + j) % 10] for j in range(60))
                   + (" Milvus Lite keeps its storage in one local file." if i == 7 else ""), f"/d/f{i}.md")
             for i in range(12)]
    return MemoryStore().add("notes", "field notes", notes, HashEmbedder(DIM))


def research_ctx(llm: ScriptedChatModel, events: list[Event], **settings: Any) -> Any:
    ctx = make_ctx(llm, QUESTION, collections=("notes",), store=filler_store(), events=events, top_k=12, **settings)
    return dataclasses.replace(ctx, research=ResearchTools())


def test_a_step_prompt_over_the_window_keeps_the_knowledge_most_similar_to_the_question() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([json.dumps({"action": "search", "queries": ["alpha beta"]}),
                             json.dumps({"action": "answer", "answer": "In one local file [12]."}), CHECKS, PASS],
                            context_window=1400, max_tokens=200)
    report = DeepResearchAgent(DeepResearchOptions()).run(research_ctx(llm, events))
    trimmed = of_kind(events, "query.trimmed")
    assert [t["step"] for t in trimmed] == ["research_step"]
    assert trimmed[0]["dropped"] > 0 and trimmed[0]["excerpt_chars"] == 300 and trimmed[0]["window"] == 1400
    step2 = llm.prompts[1]
    assert "[12] f7 (/d/f7.md)" in step2  # the one note about the question is kept ...
    assert step2.count("\n[") == trimmed[0]["kept"]  # ... among the few that fit
    assert llm.history[1].max_tokens is not None and llm.history[1].max_tokens <= 200
    assert report.sources[0].chunk.source == "/d/f7.md"


def test_the_forced_answer_is_fitted_to_what_the_budget_leaves() -> None:
    """After the trip, the reserve (2,000 of 6,000 tokens) pays for the forced answer: its prompt is shortened to
    the room left for a prompt and a useful reply, not refused."""
    events: list[Event] = []
    llm = ScriptedChatModel([json.dumps({"action": "search", "queries": ["alpha beta"]}),
                             ChatResult(text=json.dumps({"action": "search", "queries": ["gamma"]}),
                                        prompt_tokens=4_000, completion_tokens=10),
                             "Milvus Lite keeps one local file [12]."])
    report = DeepResearchAgent(DeepResearchOptions(token_budget=6_000, final_reserve=0.34)).run(
        research_ctx(llm, events))
    assert len(llm.history) == 3 and llm.prompts[-1].startswith("Research time is over")
    final = [t for t in of_kind(events, "query.trimmed") if t["step"] == "final_answer"]
    assert final and final[0]["dropped"] > 0
    budget = of_kind(events, "query.budget")[0]
    assert final[0]["prompt_tokens"] + llm.history[-1].max_tokens <= 6_000 - budget["used"]  # type: ignore[operator]
    assert "[12] f7 (/d/f7.md)" in llm.prompts[-1]
    assert report.beast_mode and report.sources[0].chunk.source == "/d/f7.md"


def test_a_cut_off_step_reply_is_asked_again_with_more_room() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([ChatResult(text='{"action": "search", "queries": ["Milvus', finish_reason="length"),
                             json.dumps({"action": "search", "queries": ["Milvus Lite storage"]}),
                             json.dumps({"action": "answer", "answer": "One local file [12]."}), CHECKS, PASS],
                            max_tokens=64)
    DeepResearchAgent(DeepResearchOptions()).run(research_ctx(llm, events))
    assert of_kind(events, "query.cut_off")[0] == {"step": "research_step", "max_tokens": 64,
                                                   "action": "retried with more room"}
    assert llm.history[1].max_tokens == 320 and of_kind(events, "query.sub_queries")[0]["sub_queries"] == [
        "Milvus Lite storage"]


def test_the_editing_pass_is_not_asked_for_when_its_reply_could_not_hold_the_draft() -> None:
    outline = Outline("Notes", (Section("Storage", QUESTION), Section("Facts", "What is fact 3?")))

    def reply(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Break the question"):
            return json.dumps({"sub_queries": [p.split("Question: ", 1)[1].split("\n", 1)[0]]})
        if "numbered text chunks" in p:
            return json.dumps({"relevant": [1, 2, 3]})
        if "Search queries already run" in p:
            return json.dumps({"gap_queries": []})
        if p.startswith("Write the section"):
            return "The notes list many facts [1][2] " + " ".join(WORDS * 4) + "."
        raise AssertionError(p[:80])

    llm = ScriptedChatModel([reply] * 12, max_tokens=100)
    events: list[Event] = []
    report = write_long_report(make_ctx(llm, QUESTION, collections=("notes",), store=filler_store(),
                                        events=events), "deep_search", outline)
    assert not any(p.startswith("Below is the draft") for p in llm.prompts)  # no call that could only be cut off
    fallback = of_kind(events, "query.fallback")[-1]
    assert fallback["step"] == "coherence" and "is longer than the reply the model can give (100 tokens" in \
        fallback["error"]
    assert "## Storage\n\nThe notes list many facts [1][2]" in report.answer
    assert "## Contradictions and open questions\n\nThe sections were not compared" in report.answer


LOOP = "Milvus Lite keeps its storage in one local file [12]. "


def forced_loop(events: list[Event], **settings: Any) -> tuple[ScriptedChatModel, Any]:
    """A run whose budget trips after one step and whose forced answer says one sentence until max_tokens."""
    llm = ScriptedChatModel([json.dumps({"action": "search", "queries": ["alpha beta"]}),
                             ChatResult(text=json.dumps({"action": "search", "queries": ["gamma"]}),
                                        prompt_tokens=4_000, completion_tokens=10),
                             ChatResult(text=LOOP * 30, finish_reason="length")])
    report = DeepResearchAgent(DeepResearchOptions(token_budget=6_000, final_reserve=0.34)).run(
        research_ctx(llm, events, **settings))
    return llm, report


def test_a_forced_answer_saying_a_sentence_a_third_time_is_stopped_there() -> None:
    # Qwen2.5-Coder-0.5B's forced answer on HotpotQA said one sentence three times (docs/benchmarks.md); a greedy
    # model that says it a third time says it until max_tokens
    events: list[Event] = []
    llm, report = forced_loop(events)
    # stopped once the sentence is complete a third time (the reasoning filter passes the first 256 characters, 4.7
    # sentences, at once)
    assert llm.prompts[-1].startswith("Research time is over") and llm.history[-1].reply.count("one local file") == 4
    assert report.beast_mode and report.answer.count("one local file") == 1 and "cut off" not in report.answer
    assert [(f["step"], f["error"]) for f in of_kind(events, "query.fallback")] == [("final_answer", LOOPING)]
    assert of_kind(events, "query.cut_off") == []


def test_with_the_option_off_the_forced_answer_runs_to_its_end() -> None:
    events: list[Event] = []
    llm, report = forced_loop(events, stop_runaway_reports=False)
    assert llm.history[-1].reply.count("one local file") == 30 and "cut off" in report.answer
    assert of_kind(events, "query.fallback") == []


def test_a_section_saying_a_sentence_over_and_over_is_stopped_there() -> None:
    outline = Outline("Notes", (Section("Storage", QUESTION),))

    def reply(messages: Any) -> Any:
        p = messages[-1]["content"]
        if p.startswith("Break the question"):
            return json.dumps({"sub_queries": [QUESTION]})
        if "numbered text chunks" in p:
            return json.dumps({"relevant": [1, 2, 3]})
        if "Search queries already run" in p:
            return json.dumps({"gap_queries": []})
        if p.startswith("Write the section"):
            return ChatResult(text="The notes name one place [1]. " + LOOP.replace("[12]", "[1]") * 30,
                              finish_reason="length")
        if p.startswith("Below is the draft"):  # the draft's sections as they are
            return p.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]
        raise AssertionError(p[:80])

    llm = ScriptedChatModel([reply] * 12)
    events: list[Event] = []
    report = write_long_report(make_ctx(llm, QUESTION, collections=("notes",), store=filler_store(),
                                        events=events), "deep_search", outline)
    section = next(h.reply for h in llm.history if h.messages[-1]["content"].startswith("Write the section"))
    assert section.count("one local file") == 4  # the first 256 characters come in one piece
    assert report.answer.count("in one local file") == 1 and "The notes name one place [" in report.answer
    assert "cut off" not in report.answer
    assert ("section", LOOPING) in [(f["step"], f["error"]) for f in of_kind(events, "query.fallback")]
