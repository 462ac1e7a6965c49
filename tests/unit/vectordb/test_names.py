"""The one "no such collection" error every store and command raises (``vectordb.names.no_such_collection``)."""

from __future__ import annotations

import pytest

from deepsearcher.errors import CollectionError
from deepsearcher.testing import MemoryStore
from deepsearcher.vectordb.names import no_such_collection


def test_an_empty_store_says_so_and_how_to_load() -> None:
    error = no_such_collection("nope", [])
    assert str(error).startswith("no collection named 'nope': this store has no collections yet")
    assert error.hint == "load documents with `deepsearcher load PATH -c NAME`"


def test_a_near_name_is_suggested_and_what_exists_is_listed() -> None:
    error = no_such_collection("milvus_doc", ["milvus_docs", "recipes"])
    assert error.hint == "did you mean milvus_docs? collections here: milvus_docs, recipes"
    assert no_such_collection("zzz", ["milvus_docs"]).hint == "collections here: milvus_docs"


def test_several_missing_names_and_a_long_list() -> None:
    existing = [f"c{i:02d}" for i in range(14)]
    error = no_such_collection(["c1", "nope"], existing)
    assert str(error).startswith("no collection named 'c1', 'nope'")
    assert error.hint is not None and error.hint.endswith("c09 and 4 more")


def test_the_memory_store_raises_it() -> None:
    with pytest.raises(CollectionError, match="no collection named 'docs': this store has no collections yet"):
        MemoryStore().describe("docs")
