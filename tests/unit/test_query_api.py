"""``DeepSearcher.query``: the Python API and its event stream, with an injected scripted model."""

from __future__ import annotations

import json

import pytest

from deepsearcher.agents import QUERY_EVENT_KINDS
from deepsearcher.app import DeepSearcher
from deepsearcher.errors import CollectionError, ConfigError
from deepsearcher.testing.scripted import ScriptedChatModel, chunk_numbers
from deepsearcher.settings import load_settings
from deepsearcher.events import Event
from tests.unit.query_fakes import memory_app


def j(**value: object) -> str:
    return json.dumps(value)


def test_query_runs_the_configured_agent_and_emits_the_documented_events():
    llm = ScriptedChatModel([j(sub_queries=["bread baking time"]),
                             j(collections=["recipes"]), j(collections=["recipes"]),  # the question, the sub-query
                             # the question's 2 chunks (the first kept; not the check passage): the sub-query finds
                             # the same, so no call
                             lambda messages: j(relevant=chunk_numbers(messages[-1]["content"])[:1]),
                             j(gap_queries=[]), "Bake it for thirty minutes [1]."])
    events: list[Event] = []
    report = memory_app(llm).query("  How long do I bake bread?  ", on_event=events.append)
    # the in-memory store is dense-only: the configured hybrid search runs dense, said once per collection
    assert [e.kind for e in events if e.kind != "query.answer_token"] == [
        "query.start", "query.notice", "query.notice", "query.agent", "query.sub_queries", "query.routed",
        "query.routed", "query.accepted", "query.accepted", "query.gaps", "query.report"]
    assert {e.kind for e in events} <= set(QUERY_EVENT_KINDS)
    assert events[0].data == {"question": "How long do I bake bread?", "agent": "deep_search",
                              "collections": ["milvus", "recipes"], "max_iter": 3, "web": None,
                              "report": "short"}
    assert events[1].data == {"collection": "milvus", "requested": "hybrid", "mode": "dense", "notice": (
        "collection 'milvus' has no full-text (BM25) index (the in-memory store searches dense vectors only): hybrid "
        "search ran as dense")}
    assert events[4].data["sub_queries"] == ["How long do I bake bread?", "bread baking time"]
    assert [(e.data["retrieved"], e.data["accepted"]) for e in events if e.kind == "query.accepted"] == [(2, 1),
                                                                                                       (0, 0)]
    assert events[-1].data == report.to_dict()
    for event in events:
        json.dumps(event.data)
    assert report.sources[0].chunk.source == "https://example.org/bread"
    assert report.usage.llm_calls == 6 and report.usage.prompt_tokens > 0 and report.usage.seconds >= 0
    assert llm.remaining == 0


def test_query_overrides_agent_collections_and_max_iter():
    llm = ScriptedChatModel(["Lite [1]."])
    events: list[Event] = []
    report = memory_app(llm).query("What is Milvus Lite?", collections=["milvus"], agent="naive", max_iter=1,
                                   on_event=events.append)
    assert report.agent == "naive" and llm.remaining == 0
    assert events[0].data["collections"] == ["milvus"] and events[0].data["max_iter"] == 1


def test_query_without_llm_fails_fast_with_how_to(tmp_path):
    app = DeepSearcher(load_settings(None, {"llm": None, "vector_db": {"uri": str(tmp_path / "x.db")}}))
    with pytest.raises(ConfigError) as err:
        app.query("anything")
    assert "no LLM is configured" in str(err.value)
    assert "docs/llm-providers.md" in str(err.value.hint)
    assert not app.built_providers & {"vector_db", "embedding"}  # failed before opening the store or loading a model


@pytest.mark.parametrize("kwargs, error, text", [
    ({"agent": "oracle"}, ConfigError, "unknown agent 'oracle'"),
    ({"max_iter": 0}, ConfigError, "max_iter must be at least 1"),
    ({"collections": ["nope"]}, CollectionError, "no collection named 'nope'"),
])
def test_query_rejects_bad_arguments_before_any_llm_call(kwargs, error, text):
    llm = ScriptedChatModel()
    with pytest.raises(error, match=text):
        memory_app(llm).query("q", **kwargs)
    assert llm.history == []


def test_empty_question_is_rejected():
    with pytest.raises(ConfigError, match="empty"):
        memory_app(ScriptedChatModel()).query("   ")


def test_prices_from_the_provider_give_a_cost():
    llm = ScriptedChatModel(["Lite [1]."])
    llm.price_per_1m_input = 1.0  # type: ignore[attr-defined]
    llm.price_per_1m_output = 2.0  # type: ignore[attr-defined]
    report = memory_app(llm).query("What is Milvus Lite?", agent="naive")
    u = report.usage
    assert u.cost == pytest.approx(u.prompt_tokens / 1e6 + 2 * u.completion_tokens / 1e6)
