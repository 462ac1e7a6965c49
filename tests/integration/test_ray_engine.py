"""The Ray engine (``ingest.engine: ray``) against a real Milvus server (the session's embedded one).

Both engines must build the same collection (ids, texts, versions), a re-run writes nothing, and a Ray load
interrupted with Ctrl-C resumes with no duplicates and leaves no Ray process behind. Ray runs locally here
(``ingest.ray.address`` empty); skipped without the extra ``ray``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from deepsearcher.events import Event
from tests.conftest import DATA, REPO
from tests.integration.passages import CORPUS, passage_files
from tests.integration.pausing import pause_env, wait_until_paused

pytestmark = pytest.mark.integration

TOKEN_VAR = "DS_TEST_MILVUS_TOKEN"


def _config(path: Path, server: Any, database: str | None, engine: str, **ray: Any) -> Path:
    lines = ["llm: null", "vector_db:", f"  uri: {server.uri}", f"  token_env: {TOKEN_VAR}"]
    lines += [f"  db_name: {database}"] if database else []
    lines += ["ingest:", f"  engine: {engine}", "  batch_size: 32", "  ray:"]
    lines += [f"    {key}: {value}" for key, value in {"embed_batch_size": 16, **ray}.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(server: Any, database: str, collection: str) -> list[tuple[str, ...]]:
    client = server.client(db_name=database)
    try:
        client.flush(collection)
        rows = client.query(collection, filter='id != ""', limit=16_384, consistency_level="Strong",
                            output_fields=["id", "text", "source", "title", "page", "chunk_index", "doc_hash",
                                           "doc_chunks"])
    finally:
        client.close()
    return sorted(tuple(str(r[k]) for k in ("id", "text", "source", "title", "page", "chunk_index", "doc_hash",
                                             "doc_chunks")) for r in rows)


@pytest.fixture
def database(milvus_server: Any) -> Iterator[str]:
    """A fresh database for one test, dropped afterwards."""
    with milvus_server.database("ds_ray") as name:
        yield name


def test_the_ray_engine_refuses_milvus_lite(tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./milvus.db\ningest:\n  engine: ray\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--config", str(cfg), "load", str(DATA / "milvus_docs")],
                                catch_exceptions=False)
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert "the Ray engine writes from many processes, but" in said and "is a Milvus Lite file" in said
    assert "point vector_db.uri at a Milvus server" in said and "ingest.engine: local" in said
    assert not (tmp_path / "milvus.db").exists()  # refused before anything was opened or written


def test_both_engines_build_the_same_collection_and_a_rerun_writes_nothing(milvus_server, database, shared_data,
                                                                          tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'deepsearcher[ray]')")
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    monkeypatch.setenv(TOKEN_VAR, milvus_server.token or "")
    folder = tmp_path / "passages"
    passage_files(folder, shared_data / CORPUS, [f"part{i}" for i in range(4)], per_file=40)
    (folder / "empty.md").write_text("   \n", encoding="utf-8")  # skipped with a reason by both engines
    (folder / "bangkok.txt").write_text("กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", encoding="utf-8")  # a notice: [UNK]
    inputs = [str(folder), str(DATA / "milvus_docs"), str(DATA / "pdf")]
    summaries, events = {}, {}
    for engine in ("local", "ray"):
        seen: list[Event] = []
        settings = load_settings(_config(tmp_path / f"{engine}.yaml", milvus_server, database, engine,
                                         embed_actors=2))
        with DeepSearcher(settings, on_event=seen.append) as app:
            summaries[engine] = app.load(inputs, f"docs_{engine}", "test documents")
        events[engine] = seen
    local, ray = summaries["local"], summaries["ray"]
    assert (local.engine, ray.engine) == ("local", "ray")
    assert [(f.source, f.status, f.reason, f.chunks, f.notice) for f in ray.files] == \
           [(f.source, f.status, f.reason, f.chunks, f.notice) for f in local.files]
    assert [f.notice != "" for f in ray.files if f.source.endswith("bangkok.txt")] == [True]
    assert ray.chunks_written == local.chunks_written > 150 and ray.embed_seconds > 0
    assert [f.status for f in ray.files].count("skipped") == 1
    expected = _rows(milvus_server, database, "docs_local")
    assert _rows(milvus_server, database, "docs_ray") == expected  # ids, texts, sources, versions, counts
    assert len({row[0] for row in expected}) == len(expected) == local.chunks_written

    kinds = [e.kind for e in events["ray"]]
    assert kinds[0] == "load.start" and kinds.count("load.source") == len(ray.files)
    batches = [e for e in events["ray"] if e.kind == "load.batch"]
    assert batches and batches[-1].data["written"] == ray.chunks_written

    settings = load_settings(tmp_path / "ray.yaml")
    with DeepSearcher(settings) as app:
        again = app.load(inputs, "docs_ray")
    assert again.chunks_written == 0 and again.chunks_deleted == 0
    assert {f.status for f in again.files} == {"unchanged", "skipped"}

    (folder / "part0.jsonl").write_text('{"title": "Changed", "text": "A new version of this file."}\n',
                                        encoding="utf-8")
    with DeepSearcher(settings) as app:
        changed = app.load(inputs, "docs_ray")
    old = next(f.chunks for f in local.files if f.source.endswith("part0.jsonl"))
    assert changed.chunks_written == 1 and changed.chunks_deleted == old  # the old version's chunks removed
    assert len(_rows(milvus_server, database, "docs_ray")) == len(expected) - old + 1

    from deepsearcher.ingest import ray_engine  # files already stored are answered on the driver: no Ray at all

    monkeypatch.setattr(ray_engine.RaySession, "__enter__", lambda self: pytest.fail("an unchanged re-run started Ray"))
    seen = []
    with DeepSearcher(settings, on_event=seen.append) as app:
        unchanged = app.load([str(folder / f"part{i}.jsonl") for i in (1, 2, 3)], "docs_ray")
    assert [f.status for f in unchanged.files] == ["unchanged"] * 3 and unchanged.chunks_written == 0
    assert [e.kind for e in seen].count("load.source") == 3


def test_an_interrupted_ray_load_resumes_with_no_duplicates(milvus_server, database, shared_data, tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'deepsearcher[ray]')")
    psutil = pytest.importorskip("psutil")
    folder = tmp_path / "passages"
    passage_files(folder, shared_data / CORPUS, [f"part{i}" for i in range(10)], per_file=40)
    cfg = _config(tmp_path / "ray.yaml", milvus_server, database, "ray", embed_actors=1)
    env = dict(os.environ, HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", PYTHONPATH=str(REPO),
               **{TOKEN_VAR: milvus_server.token or ""})
    command = [sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), "load", str(folder), "-c", "resumed"]
    paused = tmp_path / "paused"  # the writer makes it after its first batch, then waits: Ctrl-C comes mid-load
    load = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=pause_env(env, paused, after_batch=1), cwd=tmp_path)
    try:
        wait_until_paused(paused, load)
        ray_processes = psutil.Process(load.pid).children(recursive=True)
        load.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = load.communicate(timeout=300)
    finally:
        if load.poll() is None:
            load.kill()
    assert load.returncode == 130, out + err
    assert "Interrupted." in err and "Re-run the same command to resume; nothing is duplicated." in " ".join(err.split())
    assert "Traceback" not in err
    gone, alive = psutil.wait_procs(ray_processes, timeout=60)
    assert not alive, f"Ray processes left behind: {[p.cmdline()[:2] for p in alive]}"
    partial = _rows(milvus_server, database, "resumed")

    rerun = subprocess.run(command + ["--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["engine"] == "ray" and summary["chunks_written"] > 0
    local = _config(tmp_path / "local.yaml", milvus_server, database, "local")
    reference = subprocess.run([sys.executable, "-m", "deepsearcher.cli", "--config", str(local), "load",
                                str(folder), "-c", "reference", "--json"], capture_output=True, text=True, env=env,
                               cwd=tmp_path, timeout=900)
    assert reference.returncode == 0, reference.stderr
    rows, expected = _rows(milvus_server, database, "resumed"), _rows(milvus_server, database, "reference")
    assert 0 < len(partial) < len(expected)  # the interrupted load had written part of it
    assert len({row[0] for row in rows}) == len(rows)  # no duplicates
    assert rows == expected and len(rows) == json.loads(reference.stdout)["chunks_written"]

