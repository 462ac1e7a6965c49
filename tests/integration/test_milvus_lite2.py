"""The same CLI path on Milvus Lite 2.x, the C++ engine (``pip install "milvus-lite==2.5.1" "setuptools<81"``).

Milvus Lite 2.x searches ~10-40x faster than 3.x at 10k-100k chunks (docs/benchmarks.md) but has no collection
properties and another lock file. ``scripts/test.sh`` installs it into ``.venv/milvus-lite-2`` (``pip --target``),
and each CLI call here runs in a subprocess with that folder first on ``PYTHONPATH``, so it shadows the 3.x engine of
the test venv. Skipped when the folder is missing (set ``DEEPSEARCHER_MILVUS_LITE2`` to use another folder).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.conftest import DATA, REPO

pytestmark = pytest.mark.integration

LITE2 = Path(os.environ.get("DEEPSEARCHER_MILVUS_LITE2", REPO / ".venv" / "milvus-lite-2"))
if not (LITE2 / "milvus_lite").is_dir():
    pytest.skip(f"Milvus Lite 2.x is not installed in {LITE2} (scripts/test.sh installs it)",
                allow_module_level=True)

CLI = "import sys; from deepsearcher.cli import main; sys.exit(main())"


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DO_NOT_TRACK="1")
    env["PYTHONPATH"] = os.pathsep.join([str(LITE2), str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, "--config", str(cfg), *args], capture_output=True, text=True,
                          env=_env(), cwd=cfg.parent, timeout=600)


def test_load_describe_retrieve_reload_and_lock_on_the_cpp_engine(tmp_path: Path):
    engine = subprocess.run([sys.executable, "-c", "import importlib.metadata as m, milvus_lite; "
                             "print(m.version('milvus-lite'), milvus_lite.__file__)"],
                            capture_output=True, text=True, env=_env(), timeout=120)
    version, location = engine.stdout.split()
    assert version.startswith("2.") and location.startswith(str(LITE2)), engine.stdout + engine.stderr

    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./store/milvus.db\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DATA / "milvus_docs" / "limitations.md", docs)
    shutil.copy(DATA / "pdf" / "WhatisMilvus.pdf", docs)

    first = _cli(cfg, "load", str(docs), "-c", "milvus_docs", "-d", "Milvus documentation")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 loaded" in first.stdout
    assert (tmp_path / "store" / "milvus.db").is_file()  # 2.x: one file, not 3.x's folder

    again = _cli(cfg, "load", str(docs), "-c", "milvus_docs", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["chunks_written"] == 0  # idempotent: doc hashes and counts read back

    listed = json.loads(_cli(cfg, "collections", "--json").stdout)
    # no collection properties on 2.x: model, dimension and description come back from the JSON description
    assert listed[0]["description"] == "Milvus documentation"
    assert listed[0]["embedding_model"] == "all-MiniLM-L6-v2" and listed[0]["embedding_dim"] == 384
    assert listed[0]["chunk_count"] > 0

    for mode in ("dense", "bm25", "hybrid"):
        out = _cli(cfg, "retrieve", "maximum length of a collection name", "-k", "2", "--mode", mode, "--json")
        assert out.returncode == 0, out.stderr
        hits = json.loads(out.stdout)
        assert len(hits) == 2 and hits[0]["source"].endswith("limitations.md"), (mode, hits)

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from deepsearcher.vectordb.milvus import MilvusStore; "
         f"MilvusStore({str(tmp_path / 'store' / 'milvus.db')!r}).list_collections(); print('open', flush=True); "
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=_env())  # holds the database until killed
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        engine = psutil.Process(holder.pid).children(recursive=True)  # the 2.x engine process holding the lock
        busy = _cli(cfg, "collections")
        assert busy.returncode == 1
        said = " ".join((busy.stdout + busy.stderr).split())  # wrapped to the terminal width (long tmp paths)
        assert "in use by another process" in said and "Traceback" not in busy.stderr
    finally:
        holder.kill()
        holder.wait()
    _, alive = psutil.wait_procs(engine, timeout=120)  # it exits once its owner is gone, releasing the lock
    assert not alive, f"the engine outlived its owner: {[p.pid for p in alive]}"
    assert _cli(cfg, "collections").returncode == 0


def test_a_database_of_the_other_engine_is_refused_with_the_way_out(tmp_path: Path):
    from deepsearcher.errors import ProviderError
    from deepsearcher.vectordb.milvus import MilvusStore

    folder = tmp_path / "v3.db"  # written by this venv's 3.x engine
    MilvusStore(str(folder)).create_collection("c", description="d", model_name="m", dim=4)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {folder}\n")
    out = _cli(cfg, "collections")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    said = " ".join((out.stdout + out.stderr).split())  # the message is wrapped to the terminal width
    assert "is a Milvus Lite 3.x database (a folder), but milvus-lite 2.x is installed" in said
    assert "pkg_resources" not in said  # 2.x's import warning is silenced

    cfg.write_text("llm: null\nvector_db:\n  uri: ./v2.db\n")
    shutil.copy(DATA / "milvus_docs" / "limitations.md", tmp_path / "limitations.md")
    assert _cli(cfg, "load", str(tmp_path / "limitations.md"), "-c", "docs").returncode == 0
    with pytest.raises(ProviderError, match="is a Milvus Lite 2.x database"):
        MilvusStore(str(tmp_path / "v2.db")).list_collections()


def test_the_store_conformance_suite_passes_on_the_cpp_engine(tmp_path: Path):
    """Run tests/conformance's Milvus Lite class again with the 2.x engine first on the path (issue #10)."""
    env = dict(_env(), DEEPSEARCHER_EXPECT_LITE_ENGINE="lite-2")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
                           str(tmp_path / "pt"), "tests/conformance/test_vector_stores.py::TestMilvusLite"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
    assert int(summary.split(" passed")[0].split()[-1]) >= 14, summary  # every test of the suite that applies
