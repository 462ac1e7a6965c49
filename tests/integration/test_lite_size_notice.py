"""Milvus Lite users are told in time: past the size where Lite's exact search gets slow, ``load`` and
``collections`` print one line with the measured cost per query and the ways out (issue #14)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from deepsearcher.types import Chunk
from deepsearcher.vectordb.capabilities import LITE_SLOW_AT
from deepsearcher.vectordb.milvus import MilvusStore
from tests.conftest import DATA

pytestmark = pytest.mark.integration


def test_load_and_collections_warn_past_the_slow_size(tmp_path: Path):
    db = tmp_path / "milvus.db"
    store = MilvusStore(str(db))
    engine = store.capabilities.engine
    size = LITE_SLOW_AT[engine]
    store.create_collection("big", description="many chunks", model_name="all-MiniLM-L6-v2", dim=384)
    rng = np.random.default_rng(0)
    for start in range(0, size, 2_000):  # random unit vectors: the size matters here, not the content
        n = min(2_000, size - start)
        vectors = rng.standard_normal((n, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks = [Chunk(id=f"c{start + i}", text=f"filler {start + i}", source=f"/filler/{start + i}", title="",
                        page=None, chunk_index=0, doc_hash="h", metadata={}) for i in range(n)]
        store.upsert("big", chunks, vectors, {c.source: 1 for c in chunks})
    store.create_collection("small", description="few chunks", model_name="all-MiniLM-L6-v2", dim=384)
    store.seal("big")
    store.close()
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {db}\n", encoding="utf-8")
    runner = CliRunner()

    listed = runner.invoke(main, ["--config", str(cfg), "collections"], catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    said = " ".join(listed.stderr.split())
    assert said.count("! collection") == 1  # "small" is far below the size
    assert f"! collection 'big' holds {size:,} chunks: on Milvus Lite {engine[-1]}.x each search costs ~" in said
    assert "a Milvus server (vector_db.uri: http://host:19530)" in said
    assert ("the 2.x engine" in said) == (engine == "lite-3")

    source = str(DATA / "milvus_docs" / "limitations.md")
    first = runner.invoke(main, ["--config", str(cfg), "load", source, "-c", "big", "--json"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    total = size + summary["chunks_written"]
    assert len(summary["notices"]) == 1 and summary["notices"][0].startswith(f"collection 'big' holds {total:,} chunks")
    again = runner.invoke(main, ["--config", str(cfg), "load", source, "-c", "big"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert f"! collection 'big' holds {total:,} chunks" in " ".join(again.stdout.split())  # under the summary

    small = json.loads(runner.invoke(main, ["--config", str(cfg), "load", source, "-c", "small", "--json"],
                                     catch_exceptions=False).stdout)
    assert small["notices"] == [] and small["engine"] == "local"
