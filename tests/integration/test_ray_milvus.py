"""Ray workers can write to and read from a Milvus server through ``MilvusStore`` (groundwork for the Ray engine).

Skipped when ``ray`` (extra ``ray``) is not installed. Ray runs locally (``ray.init(num_cpus=2)``); the workers get
this checkout first on ``PYTHONPATH`` through the runtime environment.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import REPO

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'deepsearcher[ray]')")
pytestmark = pytest.mark.integration


def _write_part(uri: str, token: str | None, part: int) -> tuple[int, int]:
    import numpy as np

    from deepsearcher.types import Chunk
    from deepsearcher.vectordb.milvus import MilvusStore

    store = MilvusStore(uri, token=token)
    if not store.has_collection("ray_parts"):
        store.create_collection("ray_parts", description="d", model_name="m", dim=4)  # racing tasks: one wins
    chunks = [Chunk(id=f"p{part}-{i}", text=f"text {i}", source=f"s{part}", title="t", page=None, chunk_index=i,
                    doc_hash="h", metadata={}) for i in range(50)]
    vectors = np.random.default_rng(part).standard_normal((50, 4)).astype("float32")
    written = store.upsert("ray_parts", chunks, vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                           {f"s{part}": 50})
    store.close()
    return os.getpid(), written


class _Counter:
    def __init__(self, uri: str, token: str | None) -> None:
        from deepsearcher.vectordb.milvus import MilvusStore

        self.store = MilvusStore(uri, token=token)

    def count(self) -> tuple[int, int, str]:
        self.store.seal("ray_parts")
        return os.getpid(), self.store.count("ray_parts"), self.store.capabilities.engine


def test_tasks_and_an_actor_use_the_store_from_worker_processes(milvus_server):
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # Ray's telemetry stays off, like everything here
    env = {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": env}, log_to_driver=False)
    try:
        write = ray.remote(_write_part)
        results = ray.get([write.remote(milvus_server.uri, milvus_server.token, p) for p in range(4)])
        assert [n for _, n in results] == [50] * 4
        assert os.getpid() not in {pid for pid, _ in results}  # ran in Ray's worker processes
        counter = ray.remote(_Counter).remote(milvus_server.uri, milvus_server.token)
        pid, count, engine = ray.get(counter.count.remote())
        assert (count, engine) == (200, "server") and pid != os.getpid()
    finally:
        ray.shutdown()
        client = milvus_server.client()
        if client.has_collection("ray_parts"):
            client.drop_collection("ray_parts")
        client.close()
