"""One file never aborts a load (../shared/cases/security/load_batch_abort.sh and glob_symlink_loop.sh as tests).

Real Milvus Lite, the real loaders and the bundled embedder; the permission case runs the CLI without
CAP_DAC_OVERRIDE (``setpriv``) when the tests run as root, since root reads a mode-000 file anyway.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepsearcher.events import LoadStart
from deepsearcher.ingest.pipeline import LoadPipeline
from deepsearcher.ingest.sources import SourceItem
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.testing import HashEmbedder
from deepsearcher.types import Document
from tests.conftest import DATA, REPO

pytestmark = pytest.mark.integration

GOOD = "Milvus Lite stores vectors in one local file and runs inside a Python process, {}."


def _no_dac_override() -> list[str] | None:
    """A command prefix that makes root honour file modes, [] when not root, None when impossible here."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    probe = subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                            "--inh-caps=-dac_override,-dac_read_search", "true"], capture_output=True)
    return None if probe.returncode else ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                                          "--inh-caps=-dac_override,-dac_read_search"]


NOCAP = _no_dac_override()


@pytest.fixture
def mixed(tmp_path: Path, deep_tree) -> Path:
    """Good files mixed with every kind of bad entry the issue lists."""
    root = tmp_path / "mixed"
    root.mkdir()
    for name in ("good_one.md", "good_two.txt", "odd [red]name[] .md", "-dash.md", "line\nbreak.md"):
        (root / name).write_text(GOOD.format(name.strip()))
    with open(os.path.join(os.fsencode(root), b"caf\xe9 latin1.md"), "wb") as fh:  # not UTF-8: an odd name
        fh.write(GOOD.format("latin1").encode())
    shutil.copy(DATA / "pdf" / "WhatisMilvus.pdf", root / "real.pdf")
    (root / "locked.md").write_text(GOOD.format("locked"))
    (root / "locked.md").chmod(0)
    (root / "locked_dir").mkdir()
    (root / "locked_dir" / "inside.md").write_text(GOOD.format("inside"))
    (root / "locked_dir").chmod(0)
    (root / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(2000))
    (root / "not_a_zip.docx").write_bytes(b"PK\x03\x04 this is not really a zip archive")
    (root / "surrogate.json").write_text('[{"text": "Milvus lone surrogate \\ud800 probe.", "title": "t"}]')
    (root / "loop").symlink_to(".")
    deep_tree("mixed/deep", 1200)  # loads: the walk has no recursion limit
    deep_tree("mixed/too_deep", 2100)  # past PATH_MAX: that folder is a skip with its reason
    yield root
    (root / "locked_dir").chmod(0o755)


@pytest.mark.skipif(NOCAP is None, reason="running as root without setpriv: a mode-000 file stays readable")
def test_cli_load_of_a_folder_mixing_bad_entries_with_good_files(mixed: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {tmp_path / 'store' / 'milvus.db'}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    cmd = [*(NOCAP or []), sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), "load", str(mixed),
           "-c", "mixed", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    files = json.loads(out.stdout)["files"]
    by_name = {Path(f["source"]).name: f for f in files}
    loaded = {name for name, f in by_name.items() if f["status"] == "loaded"}
    assert loaded == {"good_one.md", "good_two.txt", "odd [red]name[] .md", "-dash.md", "line\nbreak.md",
                      "caf\\xe9 latin1.md", "real.pdf", "top.md", "bottom.md"}
    reasons = {name: f["reason"] for name, f in by_name.items() if f["status"] == "skipped"}
    assert reasons["locked.md"] == "cannot read: permission denied"
    assert reasons["locked_dir"] == "folder not readable: permission denied"
    assert [f["status"] for f in files if "/too_deep/" in f["source"] and f["source"].endswith("/d")] == ["skipped"]
    assert "folder not readable: file name too long" in {f["reason"] for f in files}
    assert reasons["corrupt.pdf"] and reasons["not_a_zip.docx"] and reasons["surrogate.json"]
    assert sum(1 for f in files if Path(f["source"]).name == "good_one.md") == 1  # the loop adds nothing
    assert "Unexpected error" not in out.stderr


def test_a_file_removed_during_the_load_is_skipped_and_the_rest_loads(make_app, tmp_path: Path) -> None:
    folder = tmp_path / "vanish"
    folder.mkdir()
    for name in ("a.md", "z.md"):
        (folder / name).write_text(GOOD.format(name))

    def remove_z(event: object) -> None:
        if isinstance(event, LoadStart):  # files listed, none read yet
            (folder / "z.md").unlink()

    summary = make_app().load([str(folder)], "vanish", on_event=remove_z)
    result = {Path(f.source).name: (f.status, f.reason) for f in summary.files}
    assert result == {"a.md": ("loaded", ""),
                      "z.md": ("skipped", "cannot read: no such file or directory (removed during the load?)")}


def test_a_value_the_store_refuses_skips_that_source_only(tmp_path: Path) -> None:
    """Milvus refuses a document whose metadata is not JSON: the batch is written again source by source."""
    from deepsearcher.vectordb.milvus import MilvusStore

    store = MilvusStore(str(tmp_path / "milvus.db"))
    items = [SourceItem(f"/docs/{name}.md", "v1", (lambda name=name, meta=meta: [
        Document(GOOD.format(name), f"/docs/{name}.md", name, metadata=meta)]))
        for name, meta in (("a", {}), ("bad", {"raw": b"\x00\x01"}), ("c", {"pages": 3}))]
    pipeline = LoadPipeline(store, HashEmbedder(64, "hash-64"), Splitter(240, 32, tokenizer=None,
                                                                          model_max_tokens=None), 256)
    summary = pipeline.run(items, "refused", description="test")
    status = {f.source: (f.status, f.reason) for f in summary.files}
    assert status["/docs/a.md"] == ("loaded", "") and status["/docs/c.md"] == ("loaded", "")
    assert status["/docs/bad.md"][0] == "skipped"
    assert status["/docs/bad.md"][1].startswith("the vector store refused it: DataNotMatchException")
    assert summary.chunks_written == store.count("refused") == 2
    store.close()


def test_a_url_longer_than_the_source_field_is_unchanged_on_reload(make_app) -> None:
    """A 4,100-character URL: stored under a hashed head, found again on re-load."""
    from tests.integration.hostile_http import HostileServer

    site = HostileServer(robots="ok")
    try:
        url = site.url("/page?pad=" + "x" * 4100)
        app = make_app()
        first = app.load([url], "long_url")
        again = app.load([url], "long_url")
    finally:
        site.close()
    assert [f.status for f in first.files] == ["loaded"]
    assert [f.status for f in again.files] == ["unchanged"] and again.chunks_written == 0
    assert app.store.count("long_url") == first.chunks_written


def test_cli_glob_over_symlink_loops_ends_with_each_file_once(tmp_path: Path) -> None:
    """glob_symlink_loop.sh: ``load "dir/**/*.md"`` with s1 -> . and s2 -> . ran until killed."""
    loops = tmp_path / "loops"
    loops.mkdir()
    (loops / "a.md").write_text(GOOD.format("loop probe"))
    (loops / "s1").symlink_to(".")
    (loops / "s2").symlink_to(".")
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {tmp_path / 'milvus.db'}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    # that it ends (each folder read once) is tests/unit/ingest/test_sources.py's; the timeout only ends a failure
    out = subprocess.run([sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), "load",
                          str(loops / "**" / "*.md"), "-c", "loops", "--json"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert [Path(f["source"]).name for f in json.loads(out.stdout)["files"]] == ["a.md"]
