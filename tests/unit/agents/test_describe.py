"""Collections describe themselves (issue #13): a load without ``-d`` gets a description from one LLM call over a
sample of its chunks, or from file names and titles; ``describe_collection`` sets or refreshes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.agents import prompts
from deepsearcher.agents.describe import clean_description, files_description, sample_collection
from deepsearcher.app import DeepSearcher
from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.events import Event, LoadDescribe
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.settings import load_settings
from deepsearcher.testing import HashEmbedder, MemoryStore

LITE = """---
title: Milvus Lite
tags: [milvus, storage]
---
# Milvus Lite

Milvus Lite runs inside the Python process and keeps its data in one local file.

## Limits

Collection names use letters, digits and underscores.
"""
DUCKS = "# Ducks\n\nDucks are waterfowl with broad bills and webbed feet.\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    (folder / "lite.md").write_text(LITE, encoding="utf-8")
    (folder / "ducks.md").write_text(DUCKS, encoding="utf-8")
    return folder


def _app(llm: object = None, **ingest: object) -> DeepSearcher:
    settings = load_settings(None, {"llm": None, "ingest": {"chunk_size_tokens": 200, **ingest}})
    return DeepSearcher(settings, llm=llm, store=MemoryStore(), embedder=HashEmbedder())  # type: ignore[arg-type]


def test_a_load_without_d_asks_the_llm_once_and_stores_a_generated_description(tmp_path: Path):
    llm = ScriptedChatModel(['  Description: "Notes on **Milvus Lite** storage limits and on duck anatomy."  '])
    app = _app(llm)
    events: list[Event] = []
    summary = app.load([str(_folder(tmp_path))], "notes", on_event=events.append)

    (call,) = llm.history
    assert call.prompt == prompts.DESCRIBE_COLLECTION.format(
        files="ducks.md, lite.md", titles="Milvus Lite", headings="Ducks; Milvus Lite; Limits",
        excerpts="- # Ducks Ducks are waterfowl with broad bills and webbed feet.\n\n"
                 "- # Milvus Lite Milvus Lite runs inside the Python process and keeps its data in one local file. "
                 "## Limits Collection names use letters, digits and underscores.")
    assert "front matter" not in call.prompt and "tags:" not in call.prompt  # front matter is metadata, not text
    text = "Notes on Milvus Lite storage limits and on duck anatomy."
    assert summary.created and summary.description is not None
    assert (summary.description.text, summary.description.origin, summary.description.note) == (text, "llm", "")
    info = app.store.describe("notes")
    assert (info.description, info.description_generated) == (text, True)
    assert LoadDescribe(collection="notes", by="llm") in events
    assert summary.to_dict()["description"] == {"collection": "notes", "text": text, "origin": "llm", "note": ""}


def test_without_an_llm_the_description_comes_from_file_names_and_titles(tmp_path: Path):
    app = _app()
    summary = app.load([str(_folder(tmp_path))], "notes")
    assert summary.description is not None
    assert summary.description.origin == "files" and summary.description.note == "no LLM is configured"
    assert summary.description.text == "Files: ducks.md, lite.md. Titles: Milvus Lite."
    assert app.store.describe("notes").description_generated
    again = app.load([str(_folder(tmp_path))], "notes")  # the collection exists: nothing is described again
    assert not again.created and again.description is None


def test_a_failing_llm_never_fails_the_load(tmp_path: Path):
    def broken(messages: object) -> str:
        raise ProviderError("cannot reach the LLM server at http://127.0.0.1:9/v1: connection refused")

    app = _app(ScriptedChatModel([broken]))
    summary = app.load([str(_folder(tmp_path))], "notes")
    assert summary.loaded and summary.description is not None
    assert summary.description.origin == "files"
    assert summary.description.note.startswith("the LLM failed: cannot reach the LLM server")
    empty = _app(ScriptedChatModel(["<think>hmm</think>   "]))
    note = empty.load([str(_folder(tmp_path))], "notes").description.note  # type: ignore[union-attr]
    assert note == "the LLM's reply was unusable (empty, or a copy of the prompt)"


def test_a_given_description_or_switching_the_llm_off_makes_no_call(tmp_path: Path):
    app = _app(ScriptedChatModel([]))  # an empty script fails loudly if anything asks it
    summary = app.load([str(_folder(tmp_path))], "notes", "Milvus and duck notes")
    assert summary.description is not None and summary.description.origin == "given"
    assert (app.store.describe("notes").description, app.store.describe("notes").description_generated) == (
        "Milvus and duck notes", False)
    off = _app(ScriptedChatModel([]), describe_with_llm=False)
    described = off.load([str(_folder(tmp_path))], "notes").description
    assert described is not None and described.note == "ingest.describe_with_llm is false"


def test_describe_collection_sets_or_refreshes(tmp_path: Path):
    llm = ScriptedChatModel(["Milvus Lite notes and duck facts."])
    app = _app(llm)
    app.load([str(_folder(tmp_path))], "notes", "by hand")
    given = app.describe_collection("notes", "  Notes about\nMilvus Lite  ")
    assert (given.text, given.origin) == ("Notes about Milvus Lite", "given")
    assert not app.store.describe("notes").description_generated
    refreshed = app.describe_collection("notes")
    assert (refreshed.text, refreshed.origin) == ("Milvus Lite notes and duck facts.", "llm")
    assert app.store.describe("notes").description_generated
    with pytest.raises(ConfigError, match="empty"):
        app.describe_collection("notes", " \n")


@pytest.mark.parametrize("llm, why", [
    (None, "no LLM is configured"),
    ("broken", "the LLM failed: cannot reach the LLM server at http://127.0.0.1:9/v1"),
    ("<think>hmm</think>", "the LLM's reply was unusable"),
])
def test_a_refresh_never_replaces_a_description_you_set_by_one_from_file_names(tmp_path: Path, llm, why):
    # found by a new user: "collections describe NAME --refresh" with the LLM down replaced a hand-written
    # description by "Files: keys.md." and exited 0
    def broken(messages: object) -> str:
        raise ProviderError("cannot reach the LLM server at http://127.0.0.1:9/v1: connection refused")

    app = _app(None if llm is None else ScriptedChatModel([broken if llm == "broken" else llm]))
    app.load([str(_folder(tmp_path))], "notes", "Hand-written: key rotation policy")
    with pytest.raises(ConfigError, match="kept the description you set for 'notes'") as error:
        app.describe_collection("notes")
    assert why in str(error.value) and "--set" in (error.value.hint or "")
    info = app.store.describe("notes")
    assert (info.description, info.description_generated) == ("Hand-written: key rotation policy", False)


def test_a_generated_description_is_refreshed_from_file_names_without_an_llm(tmp_path: Path):
    app = _app()
    app.load([str(_folder(tmp_path))], "notes")
    app.store.set_description("notes", "old generated text", generated=True)
    assert app.describe_collection("notes").origin == "files"
    assert app.store.describe("notes").description == "Files: ducks.md, lite.md. Titles: Milvus Lite."


def test_sample_and_file_description_shapes():
    store = MemoryStore()
    from tests.unit.query_fakes import DIM, MILVUS_DOCS, RECIPES

    store.add("mixed", "", MILVUS_DOCS + RECIPES, HashEmbedder(DIM))
    sample = sample_collection(store, "mixed")
    assert sample.files == ["lite.md", "limits.md", "consistency.md", "sparse.pdf", "example.org/bread",
                            "example.org/pasta"]
    assert sample.titles == []  # titles equal to the file (or URL) name add nothing
    assert len(sample.excerpts) == 6
    assert files_description(sample).startswith("Files: lite.md, limits.md, consistency.md, sparse.pdf, ")


@pytest.mark.parametrize("reply, cleaned", [
    ('"Handbooks on travel and expenses."', "Handbooks on travel and expenses."),
    ("**Description:** Ausschreibungen und Verträge\nder Stadtwerke.", "Ausschreibungen und Verträge der Stadtwerke."),
    ("<description>", ""),
    ("<<SYS>> You are DeepSearcher, a careful research assistant. You work only from the documents", ""),
    ("Below is a sample of a document collection: its file names, document titles", ""),
    ("...", ""),
    ("word " * 200, ("word " * 80).strip() + " …"),
])
def test_clean_description(reply: str, cleaned: str):
    assert clean_description(reply) == cleaned
