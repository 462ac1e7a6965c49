"""The ``VectorStore`` conformance suite (``deepsearcher.testing.conformance``) on every store that can run here.

- ``TestMemoryStore``: the in-memory fake of ``deepsearcher.testing`` (dense only).
- ``TestMilvusLite``: Milvus Lite with whichever engine is importable (3.x in the venv; the 2.x run is driven by
  tests/integration/test_milvus_lite2.py, which runs this class again with the 2.x engine first on the path and
  ``DEEPSEARCHER_EXPECT_LITE_ENGINE=lite-2``).
- ``TestMilvusServer``: a Milvus server: the session's embedded Milvus 2.3.5 standalone (``milvus_server`` fixture,
  tests/integration/milvus_server.py; skipped with the reason where it cannot start), or any server named by
  ``DEEPSEARCHER_TEST_MILVUS_URI`` (and ``DEEPSEARCHER_TEST_MILVUS_TOKEN``), e.g. a 2.5+ standalone or Zilliz Cloud.
  Each test gets a database of its own on it. On 2.3 (no full-text search) the BM25 and hybrid tests skip and the
  dense fallback test runs; on 2.5+ it is the other way round.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from deepsearcher.testing.conformance import StoreFactory, VectorStoreConformance, hold_lite_command
from deepsearcher.protocols import VectorStore
from deepsearcher.testing import MemoryStore


class TestMemoryStore(VectorStoreConformance):
    @pytest.fixture
    def make_store(self) -> Iterator[StoreFactory]:
        shared = MemoryStore()
        yield lambda: shared


@pytest.mark.integration
class TestMilvusLite(VectorStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Iterator[StoreFactory]:
        from deepsearcher.vectordb.milvus import MilvusStore

        stores: list[MilvusStore] = []

        def make() -> VectorStore:
            stores.append(MilvusStore(str(tmp_path / "milvus.db")))
            return stores[-1]

        yield make
        for store in stores:
            store.close()

    def hold_lock_command(self, store: VectorStore) -> list[str] | None:
        return hold_lite_command(store.uri)

    def test_engine_is_the_expected_one(self, store: VectorStore) -> None:
        expected = os.environ.get("DEEPSEARCHER_EXPECT_LITE_ENGINE")
        if expected is None:
            pytest.skip("no engine expectation set (DEEPSEARCHER_EXPECT_LITE_ENGINE)")
        assert store.capabilities.engine == expected


@pytest.mark.integration
class TestMilvusServer(VectorStoreConformance):
    @pytest.fixture
    def make_store(self, milvus_server: Any) -> Iterator[StoreFactory]:
        from deepsearcher.vectordb.milvus import MilvusStore

        stores: list[MilvusStore] = []
        with milvus_server.database("conformance") as database:

            def make() -> VectorStore:
                stores.append(MilvusStore(milvus_server.uri, token=milvus_server.token, db_name=database))
                return stores[-1]

            yield make
            for store in stores:
                store.close()

    def test_engine_and_index(self, store: VectorStore, milvus_server: Any) -> None:
        from deepsearcher.vectordb.capabilities import parse_version

        caps = store.capabilities
        assert (caps.engine, caps.index_type, caps.file_lock) == ("server", "HNSW", False)
        assert caps.version == milvus_server.version
        version = parse_version(caps.version)
        assert caps.bm25 == (version is None or version[:2] >= (2, 5))
