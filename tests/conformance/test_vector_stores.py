"""The ``VectorStore`` conformance suite (``deepsearcher.conformance``) on every store that can run here.

- ``TestMemoryStore``: the in-memory fake of ``deepsearcher.testing`` (dense only).
- ``TestMilvusLite``: Milvus Lite with whichever engine is importable (3.x in the venv; the 2.x run is driven by
  tests/integration/test_milvus_lite2.py, which runs this class again with the 2.x engine first on the path and
  ``DEEPSEARCHER_EXPECT_LITE_ENGINE=lite-2``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from deepsearcher.conformance import StoreFactory, VectorStoreConformance, hold_lite_command
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
