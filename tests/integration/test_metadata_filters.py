"""Metadata filters on real Milvus Lite with the bundled embedder: the answer exists only in the filtered subset, and
outside text in a filter never becomes expression syntax."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepsearcher.events import Event, RetrievalNotice
from deepsearcher.filters import SearchFilter
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import Chunk

pytestmark = pytest.mark.integration

OLD_TIME = 1_600_000_000  # 2020-09-13


@pytest.fixture
def app(make_app, tmp_path: Path):
    docs = tmp_path / "docs"
    for rel, text in {
        "contracts/2025/acme.md": "---\ndate: 2025-03-01\nstatus: final\n---\nThe Acme contract renewal fee is 4,200 "
                                  "euros per year.",
        "contracts/2024/acme.md": "---\ndate: 2024-03-01\nstatus: draft\n---\nThe Acme contract renewal fee is 3,100 "
                                  "euros per year.",
        "notes/acme.txt": "Acme contract renewal fee: 9,999 euros per year (a guess from the sales call).",
    }.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    os.utime(docs / "notes/acme.txt", (OLD_TIME, OLD_TIME))
    app = make_app()
    app.load([str(docs)], "docs", "Contracts and notes")
    return app


def names(hits) -> list[str]:
    return [h.chunk.source.split("/docs/", 1)[1] for h in hits]


QUESTION = "What is the Acme contract renewal fee?"


def test_every_filter_narrows_retrieval_to_its_subset(app) -> None:
    assert len(app.retrieve(QUESTION, top_k=5)) == 3
    only = lambda **kw: names(app.retrieve(QUESTION, top_k=5, where=SearchFilter(**kw)))  # noqa: E731
    assert only(paths=("contracts/2025/**",)) == ["contracts/2025/acme.md"]
    assert sorted(only(paths=("contracts/*/acme.md",))) == ["contracts/2024/acme.md", "contracts/2025/acme.md"]
    assert only(paths=("contracts/*.md",)) == []  # * stays within one folder
    assert only(types=("txt",)) == ["notes/acme.txt"]
    assert sorted(only(types=("md",))) == ["contracts/2024/acme.md", "contracts/2025/acme.md"]
    assert only(since="2025-01-01") == ["contracts/2025/acme.md"]  # front matter date; the note's mtime is 2020
    assert only(until="2020-12-31") == ["notes/acme.txt"]
    assert only(since="2024-03-01", until="2024-03-01") == ["contracts/2024/acme.md"]  # until takes its whole day
    assert only(meta={"status": "final"}) == ["contracts/2025/acme.md"]
    assert only(types=("md",), meta={"status": "draft"}) == ["contracts/2024/acme.md"]


def test_hits_carry_the_dates_the_filter_reads(app) -> None:
    (hit,) = app.retrieve(QUESTION, top_k=1, where=SearchFilter(types=("txt",)))
    assert hit.chunk.metadata["mtime"] == OLD_TIME and hit.chunk.metadata["date"] == OLD_TIME


def test_outside_text_in_a_filter_stays_a_literal(app) -> None:
    hostile = ['x" or source like "%', "%", "a\\", 'status") or (1 == 1']
    for glob in hostile:
        assert app.retrieve(QUESTION, top_k=5, where=SearchFilter(paths=(glob,))) == [] or glob == "%"
    assert app.retrieve(QUESTION, top_k=5, where=SearchFilter(meta={"status": 'final" or "1" == "1'})) == []
    # a literal % in a glob is a character, not a wildcard
    assert app.retrieve(QUESTION, top_k=5, where=SearchFilter(paths=("contracts/%/acme.md",))) == []


def test_a_filtered_query_answers_from_the_subset_only(app) -> None:
    llm = ScriptedChatModel(["The renewal fee is 4,200 euros per year [1]."])
    app._llm, app._llm_checked = llm, True
    report = app.query(QUESTION, agent="naive", max_iter=1, where=SearchFilter(meta={"status": "final"}))
    (prompt,) = llm.prompts
    assert "4,200" in prompt and "3,100" not in prompt and "9,999" not in prompt
    assert [Path(s.chunk.source).name for s in report.sources] == ["acme.md"]
    assert "2025" in report.sources[0].chunk.source


def test_a_date_filter_names_chunks_loaded_without_dates(app) -> None:
    store = app.store
    legacy = Chunk(id="0" * 32, text="The Acme fee was 1,000 euros in 2019.", source="/old/acme.txt", title="acme",
                   page=None, chunk_index=0, doc_hash="h", metadata={"format": "text"})
    store.upsert("docs", [legacy], app.embedder.embed_documents([legacy.text]), {legacy.source: 1})
    events: list[Event] = []
    hits = app.retrieve(QUESTION, top_k=5, where=SearchFilter(since="2019-01-01"), on_event=events.append)
    assert "/old/acme.txt" not in [h.chunk.source for h in hits]
    (notice,) = [e for e in events if isinstance(e, RetrievalNotice)]
    assert notice.notice.startswith("1 chunks of collection 'docs' have no document date")
    assert "--force-new-collection" in notice.notice
