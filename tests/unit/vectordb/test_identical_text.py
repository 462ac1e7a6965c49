"""Identical text, one retrieval slot (issue #13, case same_file_two_folders): the other copies are kept as
"also in …" on the hit, in retrieve output, report sources and the report Markdown."""

from __future__ import annotations

import json

from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder
from deepsearcher.types import Hit, OtherSource
from deepsearcher.vectordb.collapse import collapse_identical, search_distinct, text_key
from tests.unit.query_fakes import DIM, chunk, memory_app, memory_store

POLICY = "Travel policy: book trains for trips under 500 km; flights need a manager's approval."


def _store_with_copies():  # type: ignore[no-untyped-def]
    store = memory_store()
    copies = [chunk(POLICY, "/docs/hr/policy.md"), chunk(POLICY, "/docs/archive/policy.md"),
              chunk(POLICY, "/docs/old/policy-copy.md"),
              chunk("Expense reports are due within 30 days of travel.", "/docs/hr/expenses.md"),
              chunk("Trains are preferred over flights for short trips under 500 km.", "/docs/hr/trains.md")]
    return store.add("milvus", "", copies, HashEmbedder(DIM))


def test_text_key_folds_white_space_only():
    assert text_key("a  b\nc") == text_key("a b c") != text_key("a b c.")


def test_collapse_keeps_the_best_rank_and_lists_the_other_copies_once():
    a, b, c = chunk(POLICY, "/z/policy.md"), chunk(POLICY, "/a/policy.md"), chunk("other text", "/o.md")
    hits = [Hit(a, 0.9, "docs"), Hit(c, 0.8, "docs"), Hit(b, 0.9, "docs"), Hit(a, 0.5, "docs")]
    out = collapse_identical(hits)
    assert [h.chunk.text for h in out] == [POLICY, "other text"]
    # the representative does not depend on the ranking: the first by (collection, source, page, id)
    assert out[0].chunk.source == "/a/policy.md" and out[0].score == 0.9
    assert out[0].also_in == (OtherSource("/z/policy.md", None, "policy", "docs", a.id),)


def test_search_over_fetches_until_top_k_distinct_texts():
    asked: list[int] = []
    texts = [POLICY] * 5 + [f"distinct {i}" for i in range(5)]
    ranked = [Hit(chunk(t, f"/s{i}.md"), 1 - i / 100, "docs") for i, t in enumerate(texts)]

    def search(limit: int) -> list[Hit]:
        asked.append(limit)
        return ranked[:limit]

    hits = search_distinct(search, 3)
    assert asked == [6, 12] and [h.chunk.text for h in hits] == [POLICY, "distinct 0", "distinct 1"]
    assert len(hits[0].also_in) == 4
    assert search_distinct(lambda n: ranked[:2], 3) == collapse_identical(ranked[:2])  # the store had no more


def test_retrieve_gives_one_slot_per_text_with_the_other_sources():
    app = memory_app(None)
    app = type(app)(app.settings, store=_store_with_copies(), embedder=HashEmbedder(DIM))
    hits = app.retrieve("travel policy trains flights approval", top_k=3, collections=["milvus"])
    texts = [h.chunk.text for h in hits]
    assert len(texts) == len(set(texts)) == 3 and texts[0] == POLICY
    assert hits[0].chunk.source == "/docs/archive/policy.md"
    assert [o.source for o in hits[0].also_in] == ["/docs/hr/policy.md", "/docs/old/policy-copy.md"]
    # across collections too: the same text in another collection is the same slot
    store = _store_with_copies().add("recipes", "", [chunk(POLICY, "https://intranet/policy")], HashEmbedder(DIM))
    app = type(app)(app.settings, store=store, embedder=HashEmbedder(DIM))
    hits = app.retrieve("travel policy trains flights approval", top_k=3)
    assert [h.chunk.text for h in hits].count(POLICY) == 1
    assert {o.collection for o in hits[0].also_in} | {hits[0].collection} == {"milvus", "recipes"}


def test_a_report_cites_one_copy_and_names_the_others():
    replies = [json.dumps({"sub_queries": ["travel policy"]}), json.dumps({"relevant": [1]}),
               json.dumps({"gap_queries": []}), "Trains for trips under 500 km [1]."]
    llm = ScriptedChatModel(replies)
    base = memory_app(llm)
    app = type(base)(base.settings, llm=llm, store=_store_with_copies(), embedder=HashEmbedder(DIM))
    report = app.query("What is the travel policy?", collections=["milvus"])
    relevance = next(c.prompt for c in llm.history if "numbered text chunks" in c.prompt)
    assert relevance.count(POLICY) == 1  # the model is shown the text once
    (source,) = report.sources
    assert source.chunk.text == POLICY and {o.source for o in source.also_in} == {
        "/docs/hr/policy.md", "/docs/old/policy-copy.md"}
    assert ("- /docs/archive/policy.md: [1] (also in /docs/hr/policy.md, /docs/old/policy-copy.md)"
            in report_markdown(report))
    assert report.to_dict()["sources"][0]["also_in"][0]["source"] == "/docs/hr/policy.md"
