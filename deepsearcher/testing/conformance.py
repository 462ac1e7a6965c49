"""The ``VectorStore`` conformance suite: what every store must do, as pytest tests (after Haystack's document-store
test classes). Needs pytest.

A store's test module subclasses ``VectorStoreConformance`` and provides the ``make_store`` fixture::

    class TestMyStore(VectorStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            stores = []
            def make():                      # a new handle on the SAME (initially empty) store location
                stores.append(MyStore(tmp_path / "db"))
                return stores[-1]
            yield make
            for s in stores: s.close()

Tests for BM25 and hybrid search run when ``capabilities`` claims them; a store that claims fewer modes must
answer other modes with dense results (the fallback callers rely on). The lock test runs for stores with
``capabilities.file_lock``: override ``hold_lock_command`` to return a command that opens the store location in
another process and waits.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Callable, Iterator

import numpy as np
import pytest

from deepsearcher.errors import CollectionError, StoreInUseError
from deepsearcher.protocols import VectorStore
from deepsearcher.testing.fakes import HashEmbedder
from deepsearcher.types import Chunk

StoreFactory = Callable[[], VectorStore]

TEXTS = {
    "alpha.md": ["Milvus Lite runs inside the Python process and keeps its data in one local file.",
                 "Collection names use letters, digits and underscores."],
    "beta.md": ["Ducks are waterfowl with broad bills and webbed feet.",
                "The product code QX-7781 identifies the blue kettle."],
}


def make_chunks(version: str = "v1", texts: dict[str, list[str]] | None = None) -> list[Chunk]:
    """Chunks of the fixture documents (ids derived from source, version and text)."""
    import hashlib

    out = []
    for source, parts in (texts or TEXTS).items():
        for i, text in enumerate(parts):
            cid = hashlib.sha256(f"{source}/{version}/{text}".encode()).hexdigest()[:32]
            out.append(Chunk(id=cid, text=text, source=f"/docs/{source}", title=source.split(".")[0], page=None,
                             chunk_index=i, doc_hash=version, metadata={"n": i}))
    return out


class VectorStoreConformance:
    """The suite. Subclasses provide ``make_store`` (see the module docstring)."""

    embedder = HashEmbedder(dimension=64, model_name="conformance-hash-64")

    @pytest.fixture
    def make_store(self) -> Iterator[StoreFactory]:
        raise NotImplementedError("provide a make_store fixture")

    @pytest.fixture
    def store(self, make_store: StoreFactory) -> VectorStore:
        return make_store()

    def hold_lock_command(self, store: VectorStore) -> list[str] | None:
        """A command that opens ``store``'s location in another process, prints "ready" and sleeps (file stores)."""
        return None

    # --- helpers -------------------------------------------------------------------------------------------------
    def fill(self, store: VectorStore, name: str = "docs", chunks: list[Chunk] | None = None) -> list[Chunk]:
        chunks = chunks if chunks is not None else make_chunks()
        if not store.has_collection(name):
            store.create_collection(name, description="Fixture documents", model_name=self.embedder.model_name,
                                    dim=self.embedder.dimension)
        counts: dict[str, int] = {}
        for c in chunks:
            counts[c.source] = counts.get(c.source, 0) + 1
        store.upsert(name, chunks, self.embedder.embed_documents([c.text for c in chunks]), counts)
        store.seal(name)
        return chunks

    def search(self, store: VectorStore, text: str, mode: str = "dense", k: int = 4, name: str = "docs") -> list:
        return store.search(name, self.embedder.embed_query(text), text, k, mode=mode)  # type: ignore[arg-type]

    # --- collections ---------------------------------------------------------------------------------------------
    def test_create_and_describe_records_description_and_model(self, store: VectorStore) -> None:
        assert not store.has_collection("docs")
        self.fill(store)
        assert store.has_collection("docs") and "docs" in store.list_collections()
        info = store.describe("docs")
        assert (info.name, info.description, info.chunk_count) == ("docs", "Fixture documents", 4)
        assert (info.embedding_model, info.embedding_dim) == (self.embedder.model_name, self.embedder.dimension)

    def test_list_collections_is_sorted(self, store: VectorStore) -> None:
        for name in ("zeta", "alpha", "mid"):
            store.create_collection(name, description=name, model_name=self.embedder.model_name,
                                    dim=self.embedder.dimension)
        assert store.list_collections() == ["alpha", "mid", "zeta"]

    def test_invalid_and_missing_names(self, store: VectorStore) -> None:
        with pytest.raises(CollectionError, match="invalid collection name"):
            store.create_collection("1 bad-name", description="", model_name="m", dim=4)
        with pytest.raises(CollectionError):
            store.describe("nothing_here")
        with pytest.raises(CollectionError):
            store.drop_collection("nothing_here")

    def test_model_mismatch_is_refused(self, store: VectorStore) -> None:
        self.fill(store)
        store.check_embedding("docs", self.embedder.model_name, self.embedder.dimension)
        with pytest.raises(CollectionError, match="embedding model"):
            store.check_embedding("docs", "another-model", self.embedder.dimension)
        with pytest.raises(CollectionError):
            store.check_embedding("docs", self.embedder.model_name, self.embedder.dimension + 1)

    def test_drop_collection(self, store: VectorStore) -> None:
        self.fill(store)
        store.drop_collection("docs")
        assert not store.has_collection("docs") and "docs" not in store.list_collections()

    def test_set_description_replaces_it_and_marks_generated(self, make_store: StoreFactory) -> None:
        store = make_store()
        self.fill(store)
        assert store.describe("docs").description_generated is False
        store.set_description("docs", "Notes on Milvus Lite and ducks", generated=True)
        info = store.describe("docs")
        assert (info.description, info.description_generated) == ("Notes on Milvus Lite and ducks", True)
        store.set_description("docs", "Milvus and duck notes, by hand")
        store.close()
        again = make_store()  # a new handle on the same location: the change was stored, not cached
        info = again.describe("docs")
        assert (info.description, info.description_generated, info.chunk_count) == (
            "Milvus and duck notes, by hand", False, 4)
        with pytest.raises(CollectionError):
            again.set_description("nothing_here", "x")

    def test_a_recreated_collection_has_its_new_description(self, store: VectorStore) -> None:
        self.fill(store)
        store.set_description("docs", "changed later", generated=True)
        store.drop_collection("docs")
        self.fill(store)
        assert (store.describe("docs").description, store.describe("docs").description_generated) == (
            "Fixture documents", False)

    def test_sample_returns_chunks_that_open_a_document(self, store: VectorStore) -> None:
        self.fill(store)
        opening = store.sample("docs", 10)
        assert sorted(c.text for c in opening) == sorted(TEXTS[name][0] for name in TEXTS)
        assert all(c.chunk_index == 0 and c.source and c.title for c in opening)
        assert len(store.sample("docs", 1)) == 1
        with pytest.raises(CollectionError):
            store.sample("nothing_here", 3)

    # --- writes --------------------------------------------------------------------------------------------------
    def test_upsert_is_idempotent(self, store: VectorStore) -> None:
        chunks = self.fill(store)
        self.fill(store, chunks=chunks)
        assert store.count("docs") == len(chunks)

    def test_is_complete_per_source_and_version(self, store: VectorStore) -> None:
        chunks = make_chunks("v1")
        self.fill(store, chunks=chunks[:1])  # an interrupted load: 1 of alpha's 2 chunks
        store.upsert("docs", chunks[:1], self.embedder.embed_documents([chunks[0].text]), {"/docs/alpha.md": 2})
        assert not store.is_complete("docs", "/docs/alpha.md", "v1")
        self.fill(store, chunks=chunks)
        assert store.is_complete("docs", "/docs/alpha.md", "v1")
        assert not store.is_complete("docs", "/docs/alpha.md", "v2")
        assert not store.is_complete("docs", "/docs/none.md", "v1")

    def test_delete_stale_keeps_only_the_current_version(self, store: VectorStore) -> None:
        self.fill(store, chunks=make_chunks("v1"))
        new = make_chunks("v2", {"alpha.md": ["Milvus Lite now keeps its data in a folder."]})
        self.fill(store, chunks=new)
        assert store.delete_stale("docs", "/docs/alpha.md", "v2") == 2
        assert store.count("docs") == 3  # beta's 2 chunks and alpha's new one
        assert store.delete_stale("docs", "/docs/alpha.md", "v2") == 0

    def test_vectors_of_the_wrong_dimension_are_refused(self, store: VectorStore) -> None:
        self.fill(store)
        chunk = make_chunks("v9")[0]
        with pytest.raises(Exception):
            store.upsert("docs", [chunk], np.ones((1, self.embedder.dimension + 3), dtype=np.float32),
                         {chunk.source: 1})

    # --- search --------------------------------------------------------------------------------------------------
    def test_dense_search_ranks_the_nearest_chunk_first(self, store: VectorStore) -> None:
        chunks = self.fill(store)
        hits = self.search(store, "Ducks are waterfowl with broad bills and webbed feet.")
        assert hits[0].chunk.id == chunks[2].id and hits[0].collection == "docs"
        assert hits[0].score == pytest.approx(1.0, abs=1e-3)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert len(self.search(store, "ducks", k=2)) == 2
        got = hits[0].chunk
        assert (got.text, got.source, got.title, got.page, got.chunk_index, got.doc_hash, got.metadata) == (
            chunks[2].text, chunks[2].source, chunks[2].title, None, 0, "v1", {"n": 0})

    def test_identical_text_in_two_sources_comes_back_as_two_hits(self, store: VectorStore) -> None:
        # the store keeps both copies (each is a source to cite); ``vectordb.collapse`` folds them at query time
        same = "Ducks are waterfowl with broad bills and webbed feet."
        chunks = self.fill(store, chunks=make_chunks(texts={"beta.md": [same], "copy_of_beta.md": [same],
                                                            "alpha.md": TEXTS["alpha.md"]}))
        hits = self.search(store, same, k=2)
        assert {h.chunk.source for h in hits} == {"/docs/beta.md", "/docs/copy_of_beta.md"}
        assert hits[0].score == pytest.approx(hits[1].score, abs=1e-5) and len(chunks) == 4

    def test_bm25_search_finds_an_exact_keyword(self, store: VectorStore) -> None:
        if not store.capabilities.bm25:
            pytest.skip("the store does not claim BM25 search")
        chunks = self.fill(store)
        hits = store.search("docs", None, "QX-7781", 2, mode="bm25")
        assert hits and hits[0].chunk.id == chunks[3].id and hits[0].score > 0

    def test_hybrid_search_combines_both(self, store: VectorStore) -> None:
        if not store.capabilities.hybrid:
            pytest.skip("the store does not claim hybrid search")
        chunks = self.fill(store)
        hits = self.search(store, "kettle QX-7781", mode="hybrid", k=2)
        assert hits[0].chunk.id == chunks[3].id

    def test_unclaimed_modes_fall_back_to_dense(self, store: VectorStore) -> None:
        missing = [m for m in ("hybrid", "bm25") if m not in store.capabilities.modes]
        if not missing:
            pytest.skip("the store claims every mode")
        self.fill(store)
        dense = [h.chunk.id for h in self.search(store, "ducks webbed feet")]
        if "hybrid" in missing:
            assert [h.chunk.id for h in self.search(store, "ducks webbed feet", mode="hybrid")] == dense

    def test_search_plans_follow_the_collection_modes(self, store: VectorStore) -> None:
        self.fill(store)
        info = store.describe("docs")
        assert info.modes == store.capabilities.modes and info.index_type  # a new collection gets what the store can
        for mode in ("dense", "bm25", "hybrid"):
            plan = store.plan_search("docs", mode)
            assert (plan.collection, plan.requested) == ("docs", mode)
            if mode in info.modes:
                assert (plan.mode, plan.notice, plan.fell_back) == (mode, None, False)
            else:
                assert plan.mode == "dense" and plan.fell_back
                assert plan.notice and "\n" not in plan.notice and f"{mode} search ran as dense" in plan.notice
        with pytest.raises(ValueError, match="unknown search mode"):
            store.plan_search("docs", "sparse")  # type: ignore[arg-type]
        with pytest.raises(CollectionError):
            store.plan_search("nothing_here", "dense")

    def test_chunks_around_returns_the_neighbours_in_document_order(self, store: VectorStore) -> None:
        texts = {"long.md": [f"Paragraph {i} of the long document." for i in range(6)], **TEXTS}
        chunks = self.fill(store, chunks=make_chunks("v1", texts))
        middle = next(c for c in chunks if c.source == "/docs/long.md" and c.chunk_index == 2)
        around = store.chunks_around("docs", middle, 1)
        assert [(c.source, c.chunk_index) for c in around] == [("/docs/long.md", i) for i in (1, 2, 3)]
        assert around[1].text == middle.text and around[1].id == middle.id
        first = next(c for c in chunks if c.source == "/docs/long.md" and c.chunk_index == 0)
        assert [c.chunk_index for c in store.chunks_around("docs", first, 2)] == [0, 1, 2]
        assert [c.id for c in store.chunks_around("docs", middle, 0)] == [middle.id]
        other_version = make_chunks("v2", {"long.md": ["Paragraph 2 of the long document."]})[0]
        assert store.chunks_around("docs", other_version, 3) == []  # that version is not stored
        with pytest.raises(ValueError):
            store.chunks_around("docs", middle, -1)
        with pytest.raises(CollectionError):
            store.chunks_around("nothing_here", middle, 1)

    def test_capabilities_are_reported(self, store: VectorStore) -> None:
        caps = store.capabilities
        assert caps.dense and caps.engine and caps.index_type
        assert caps.modes[0] == "dense" and (not caps.hybrid or (caps.bm25 and caps.dense))
        assert isinstance(store.uri, str) and store.uri

    # --- locking -------------------------------------------------------------------------------------------------
    def test_a_file_store_in_use_is_refused(self, make_store: StoreFactory) -> None:
        probe = make_store()
        if not probe.capabilities.file_lock:
            pytest.skip("the store is not a single-process file store")
        command = self.hold_lock_command(probe)
        if command is None:
            pytest.skip("the test class gives no hold_lock_command")
        probe.close()
        holder = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
            with pytest.raises(StoreInUseError, match="in use by another process"):
                other = make_store()
                other.list_collections()
        finally:
            holder.kill()
            holder.wait(timeout=30)
        time.sleep(0.2)


def hold_lite_command(uri: str) -> list[str]:
    """A command that opens the Milvus Lite database ``uri`` in another Python process and holds it."""
    code = ("import sys, time; from pymilvus import MilvusClient; c = MilvusClient(sys.argv[1]); "
            "c.list_collections(); print('ready', flush=True); time.sleep(600)")
    return [sys.executable, "-c", code, uri]
