"""Closing a Milvus Lite store releases milvus-lite's in-process server for the file.

milvus-lite 3.x serves each ``.db`` folder from a gRPC server inside the process (a thread pool, sockets and the
file's lock) that lives until the process ends unless released. Without the release a long-lived process (``serve``,
the MCP server, this test suite) gathered one server per file it ever opened — about 3 threads and 4 descriptors each
(measured: 200 open/close cycles left 600 threads and 650 descriptors) — and a whole-suite run failed late with
"Fail connecting to server on 127.0.0.1:…" opening one more. The file also stayed locked against other processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from deepsearcher.testing.conformance import make_chunks
from deepsearcher.testing import HashEmbedder
from deepsearcher.vectordb.milvus import MilvusStore
from deepsearcher.vectordb.milvus_lite import LITE_HOLDERS, lite_engine_major, lite_file_locked

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(lite_engine_major() < 3, reason="milvus-lite 3.x serves a file in-process")]

EMBEDDER = HashEmbedder(dimension=16, model_name="hash-16")


def _fill(store: MilvusStore) -> int:
    chunks = make_chunks()
    store.create_collection("docs", description="Fixture documents", model_name=EMBEDDER.model_name,
                            dim=EMBEDDER.dimension)
    counts: dict[str, int] = {}
    for c in chunks:
        counts[c.source] = counts.get(c.source, 0) + 1
    store.upsert("docs", chunks, EMBEDDER.embed_documents([c.text for c in chunks]), counts)
    store.seal("docs")
    return len(chunks)


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_closed_store_frees_the_file_for_another_process_and_keeps_its_rows(tmp_path: Path):
    uri = str(tmp_path / "m.db")
    store = MilvusStore(uri)
    written = _fill(store)
    store.close()
    assert not lite_file_locked(Path(uri)), "the file's lock outlived the store"
    assert os.path.abspath(uri) not in LITE_HOLDERS
    script = textwrap.dedent(f"""
        from deepsearcher.vectordb.milvus import MilvusStore
        store = MilvusStore({uri!r})
        print("ROWS", store.count("docs"))
        store.close()
    """)
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert f"ROWS {written}" in other.stdout, other.stdout + other.stderr
    again = MilvusStore(uri)  # reopened in this process: a fresh server on the same data
    try:
        assert again.count("docs") == written
    finally:
        again.close()


def test_two_stores_on_one_file_share_the_server_until_the_last_closes(tmp_path: Path):
    uri = str(tmp_path / "shared.db")
    first, second = MilvusStore(uri), MilvusStore(uri)
    written = _fill(first)
    assert second.count("docs") == written
    first.close()
    assert second.count("docs") == written, "closing one store stopped the other's server"
    assert LITE_HOLDERS[os.path.abspath(uri)] == 1
    second.close()
    assert os.path.abspath(uri) not in LITE_HOLDERS


def test_opening_and_closing_many_files_leaves_no_servers_behind(tmp_path: Path):
    def cycle(i: int) -> None:
        store = MilvusStore(str(tmp_path / f"f{i}.db"))
        store.create_collection("docs", description="d", model_name=EMBEDDER.model_name, dim=EMBEDDER.dimension)
        store.close()

    cycle(0)  # gRPC's and milvus-lite's one-time threads start here
    threads, descriptors = threading.active_count(), _descriptors()
    for i in range(1, 21):
        cycle(i)
    # without the release: +60 threads and +80 descriptors (3 and 4 per file); a margin for unrelated threads
    assert threading.active_count() <= threads + 6, threading.enumerate()
    assert _descriptors() <= descriptors + 8


def test_a_pymilvus_client_of_the_callers_own_is_this_process_not_another(tmp_path: Path):
    from pymilvus import MilvusClient

    uri = str(tmp_path / "own.db")
    store = MilvusStore(uri)
    written = _fill(store)
    store.close()
    client = MilvusClient(uri)  # starts milvus-lite's server for the file again, which takes the lock
    try:
        assert client.has_collection("docs")
        again = MilvusStore(uri)  # found "in use by another process" before
        assert again.count("docs") == written
        again.close()
    finally:
        client.close()


def test_a_file_another_process_took_after_the_close_is_named_in_use(tmp_path: Path):
    from deepsearcher.errors import StoreInUseError

    uri = str(tmp_path / "taken.db")
    store = MilvusStore(uri)
    _fill(store)
    store.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            from deepsearcher.vectordb.milvus import MilvusStore
            store = MilvusStore({uri!r})
            store.list_collections()
            print("ready", flush=True)
            input()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreInUseError, match="in use by another process"):
            MilvusStore(uri).list_collections()
    finally:
        holder.kill()
        holder.wait()
