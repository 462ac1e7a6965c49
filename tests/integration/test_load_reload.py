"""Re-loads leave exactly the folder's current content (issue 24), on real Milvus Lite with the real loaders.

Interrupted re-loads are reproduced at named points of the pipeline (``pipeline.crash_hook``), never by a timed kill:
every crash point of a changed re-load, then a plain re-run, must equal a fresh load of the new folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from deepsearcher.ingest import pipeline
from deepsearcher.testing import HashEmbedder

pytestmark = pytest.mark.integration

COLLECTION = "reload"
SENTENCE = "Sentence {i} of {name}: the {word} archive keeps ledger {i} beside lantern {n}. "


class Crash(BaseException):
    """Stands for a kill at a crash point (a BaseException: nothing in the load may catch it)."""


def paragraph(name: str, word: str, sentences: int) -> str:
    return "".join(SENTENCE.format(i=i, name=name, word=word, n=i * 7) for i in range(sentences))


@pytest.fixture
def app_on(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """DeepSearcher on a Milvus Lite file with the hash embedder (fast) and small chunks and batches."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    apps: list[Any] = []

    def build(db: str = "milvus.db", **ingest: Any) -> Any:
        settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / db)}, "llm": None,
                                        "ingest": {"chunk_size_tokens": 40, "chunk_overlap_tokens": 0,
                                                   "batch_size": 4, **ingest}})
        app = DeepSearcher(settings, embedder=HashEmbedder(64, "hash-64"))
        apps.append(app)
        return app

    yield build
    pipeline.crash_hook = None
    for app in apps:
        app.close()


def rows(app: Any) -> dict[str, tuple[str, str]]:
    """id -> (source, doc_hash) of every stored chunk, read straight through pymilvus."""
    return {r["id"]: (r["source"], r["doc_hash"]) for r in _query(app, ["id", "source", "doc_hash"])}


def content(app: Any) -> list[tuple[str, str, int, str]]:
    """(file name, version, chunk index, text) of every stored chunk, sorted: equal for equal folders wherever they
    are (chunk ids include the path)."""
    return sorted((Path(r["source"]).name, r["doc_hash"], r["chunk_index"], r["text"])
                  for r in _query(app, ["source", "doc_hash", "chunk_index", "text"]))


def _query(app: Any, fields: list[str]) -> list[dict[str, Any]]:
    client = app.store.client.raw
    client.load_collection(COLLECTION)
    it = client.query_iterator(COLLECTION, batch_size=1000, filter="", output_fields=fields,
                               consistency_level="Strong")
    out: list[dict[str, Any]] = []
    while batch := it.next():
        out.extend(batch)
    it.close()
    return out


def crash_at(point: str, nth: int) -> Callable[[str], None]:
    passes = {"n": 0}

    def hook(name: str) -> None:
        if name == point:
            passes["n"] += 1
            if passes["n"] == nth:
                raise Crash(f"{point} #{nth}")

    return hook


def write_v1(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "a.md").write_text("# Launch\n\nThe launch code is ALPHA-1111. " + paragraph("a", "copper", 3))
    (folder / "b_big.md").write_text("# Big\n\n" + paragraph("b", "violet", 40))
    (folder / "c.txt").write_text(paragraph("c", "meadow", 12))


def write_v2(folder: Path) -> None:
    (folder / "a.md").write_text("# Launch\n\nThe launch code is BRAVO-2222. " + paragraph("a", "copper", 3))
    (folder / "b_big.md").write_text("# Big\n\nAdded in version two. " + paragraph("b", "violet", 40))
    (folder / "c.txt").write_text(paragraph("c", "granite", 12))


def reference(tmp_path: Path, app_on: Callable[..., Any]) -> list[tuple[str, str, int, str]]:
    """The stored chunks of a fresh load of the v2 folder."""
    folder = tmp_path / "ref"
    write_v1(folder)
    write_v2(folder)
    app = app_on("ref.db")
    app.load([str(folder)], COLLECTION, "ref")
    return content(app)


def passes_of(point: str, tmp_path: Path, app_on: Callable[..., Any]) -> int:
    """How often a v1 -> v2 re-load passes ``point``."""
    folder = tmp_path / "count"
    write_v1(folder)
    app = app_on("count.db")
    app.load([str(folder)], COLLECTION, "x")
    write_v2(folder)
    seen: list[str] = []
    pipeline.crash_hook = seen.append
    app.load([str(folder)], COLLECTION)
    pipeline.crash_hook = None
    return seen.count(point)


@pytest.mark.parametrize("point", ["after-upsert", "before-delete-stale", "before-seal"])
def test_a_changed_reload_interrupted_at_every_crash_point_recovers_on_the_next_run(
        tmp_path: Path, app_on: Callable[..., Any], point: str) -> None:
    ref = reference(tmp_path, app_on)
    total = passes_of(point, tmp_path, app_on)
    assert total >= 1
    for nth in range(1, total + 1):
        folder = tmp_path / f"{point}-{nth}"
        write_v1(folder)
        app = app_on(f"{point}-{nth}.db")
        app.load([str(folder)], COLLECTION, "x")
        write_v2(folder)
        pipeline.crash_hook = crash_at(point, nth)
        with pytest.raises(Crash):
            app.load([str(folder)], COLLECTION)
        pipeline.crash_hook = None
        app.load([str(folder)], COLLECTION)
        got = content(app)
        assert got == ref, f"{point} #{nth}: {len(set(got) - set(ref))} extra, {len(set(ref) - set(got))} missing"
        again = app.load([str(folder)], COLLECTION)
        assert again.chunks_written == again.chunks_deleted == 0


def test_old_chunks_left_beside_a_complete_new_version_are_deleted_as_unchanged(
        tmp_path: Path, app_on: Callable[..., Any]) -> None:
    """The finding's exact state: a.md's new chunks all stored, its old ones too (killed before the delete)."""
    folder = tmp_path / "f1"
    write_v1(folder)
    app = app_on()
    app.load([str(folder)], COLLECTION, "launch notes")
    write_v2(folder)
    pipeline.crash_hook = crash_at("before-delete-stale", 1)  # a.md is the first source to finish
    with pytest.raises(Crash):
        app.load([str(folder)], COLLECTION)
    pipeline.crash_hook = None
    a_versions = {v for src, v in rows(app).values() if src.endswith("/a.md")}
    assert len(a_versions) == 2  # the state the next run must repair
    summary = app.load([str(folder)], COLLECTION)
    status = {Path(f.source).name: f.status for f in summary.files}
    assert status["a.md"] == "unchanged" and summary.chunks_deleted > 0
    assert len({v for src, v in rows(app).values() if src.endswith("/a.md")}) == 1
    hits = app.store.search(COLLECTION, app.embedder.embed_query("launch code"), "launch code", 10, mode="dense")
    texts = " ".join(h.chunk.text for h in hits)
    assert "ALPHA-1111" not in texts and "BRAVO-2222" in texts


def test_a_source_loses_its_old_version_once_written_not_at_the_end_of_the_load(
        tmp_path: Path, app_on: Callable[..., Any]) -> None:
    """a.md shares the first batch with b_big.md's chunks: its old version is gone before b_big.md is written."""
    folder = tmp_path / "early"
    write_v1(folder)
    app = app_on()
    app.load([str(folder)], COLLECTION, "x")
    write_v2(folder)
    pipeline.crash_hook = crash_at("after-upsert", 2)  # two batches in: b_big.md is far from done
    with pytest.raises(Crash):
        app.load([str(folder)], COLLECTION)
    pipeline.crash_hook = None
    a_versions = {v for src, v in rows(app).values() if src.endswith("/a.md")}
    assert len(a_versions) == 1


# --- files gone from the folder (finding 2) ------------------------------------------------------------------------
def names(app: Any) -> set[str]:
    return {Path(src).name for src, _ in rows(app).values()}


def test_a_folder_reload_removes_deleted_renamed_emptied_and_binary_files(
        tmp_path: Path, app_on: Callable[..., Any]) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.txt", "f.md", "h.md"):
        (folder / name).write_text(f"# {name}\n\n" + paragraph(name, "harbor", 6))
    (folder / "sub").mkdir()
    (folder / "sub" / "d.md").write_text(paragraph("d", "falcon", 6))
    app = app_on()
    app.load([str(folder)], COLLECTION, "x")
    (folder / "b.md").unlink()
    (folder / "c.txt").rename(folder / "c2.txt")
    (folder / "f.md").write_text("")
    (folder / "h.md").write_bytes(bytes(range(256)) * 80)
    (folder / "sub" / "d.md").unlink()
    summary = app.load([str(folder)], COLLECTION)
    removed = {Path(r.source).name: r.reason for r in summary.removed}
    assert removed == {"b.md": "no longer in the folder", "c.txt": "no longer in the folder",
                       "d.md": "no longer in the folder", "f.md": "no longer loadable: empty file",
                       "h.md": removed["h.md"]}
    assert removed["h.md"].startswith("no longer loadable: ")
    assert all(r.status == "removed" and r.chunks > 0 for r in summary.removed)
    assert names(app) == {"a.md", "c2.txt"}
    fresh = app_on("fresh.db")
    fresh.load([str(folder)], COLLECTION, "x")
    assert content(app) == content(fresh)
    assert app.load([str(folder)], COLLECTION).removed == []


def test_loading_folder_a_never_removes_folder_b_and_a_file_load_removes_no_other_file(
        tmp_path: Path, app_on: Callable[..., Any]) -> None:
    a, b = tmp_path / "A", tmp_path / "AB"  # "AB" shares A's prefix as a string, not as a folder
    for folder in (a, b):
        folder.mkdir()
        for name in ("one.md", "two.md"):
            (folder / name).write_text(paragraph(f"{folder.name}-{name}", "orchard", 4))
    app = app_on()
    app.load([str(a), str(b)], COLLECTION, "x")
    (b / "two.md").unlink()
    (a / "two.md").unlink()
    assert app.load([str(a / "one.md")], COLLECTION).removed == []  # a single file: nothing else goes
    assert {Path(s).parent.name + "/" + Path(s).name for s, _ in rows(app).values()} == {
        "A/one.md", "A/two.md", "AB/one.md", "AB/two.md"}
    summary = app.load([str(a)], COLLECTION)
    assert [Path(r.source).parent.name + "/" + Path(r.source).name for r in summary.removed] == ["A/two.md"]
    assert {Path(s).parent.name + "/" + Path(s).name for s, _ in rows(app).values()} == {
        "A/one.md", "AB/one.md", "AB/two.md"}


def test_a_load_with_other_include_rules_removes_nothing_outside_them_and_keep_missing_keeps_all(
        tmp_path: Path, app_on: Callable[..., Any]) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "notes.md").write_text(paragraph("notes", "signal", 4))
    (folder / "plain.txt").write_text(paragraph("plain", "thistle", 4))
    (folder / "gone.md").write_text(paragraph("gone", "quarry", 4))
    app = app_on()
    app.load([str(folder)], COLLECTION, "x")
    (folder / "gone.md").unlink()
    app.settings.loader.include = ["*.txt"]  # as `load --include '*.txt'`
    assert app.load([str(folder)], COLLECTION).removed == []  # gone.md is not in a *.txt load's scope
    app.settings.loader.include = []
    assert app.load([str(folder)], COLLECTION, keep_missing=True).removed == []
    assert "gone.md" in names(app)
    assert [Path(r.source).name for r in app.load([str(folder)], COLLECTION).removed] == ["gone.md"]


def test_the_summary_says_what_was_removed() -> None:
    from rich.console import Console

    from deepsearcher.cli.render import render_removed
    from deepsearcher.types import FileResult

    console = Console(record=True, width=200)
    render_removed(console, [FileResult("/d/b.md", "removed", "no longer in the folder", chunks=3),
                             FileResult("/d/c.md", "removed", "no longer in the folder", chunks=2),
                             FileResult("/d/f.md", "removed", "no longer loadable: empty file", chunks=1)])
    text = console.export_text()
    assert "removed: 2 files no longer in the folder (5 chunks)" in text
    assert "removed: 1 file no longer loadable (1 chunks)" in text
    assert "/d/f.md (empty file)" in text


# --- the description of an interrupted first load (finding 4) ------------------------------------------------------
def test_an_interrupted_first_load_is_described_by_the_next_run(tmp_path: Path, app_on: Callable[..., Any]) -> None:
    from deepsearcher.ingest.load import is_placeholder

    folder = tmp_path / "first"
    write_v1(folder)
    app = app_on()
    pipeline.crash_hook = crash_at("after-upsert", 1)
    with pytest.raises(Crash):
        app.load([str(folder)], COLLECTION)
    pipeline.crash_hook = None
    info = app.store.describe(COLLECTION)
    assert is_placeholder(info.description) and info.description_generated  # never shown as the user's
    summary = app.load([str(folder)], COLLECTION)
    assert not summary.created and summary.description is not None and summary.description.origin == "files"
    info = app.store.describe(COLLECTION)
    assert not is_placeholder(info.description) and info.description_generated
    assert app.load([str(folder)], COLLECTION).description is None  # described once


def test_a_user_description_is_kept_and_d_replaces_only_the_stand_in(tmp_path: Path,
                                                                     app_on: Callable[..., Any]) -> None:
    folder = tmp_path / "given"
    write_v1(folder)
    app = app_on()
    app.load([str(folder)], COLLECTION, "launch notes")
    assert app.load([str(folder)], COLLECTION).description is None
    assert app.store.describe(COLLECTION).description == "launch notes"
    other = app_on("other.db")
    pipeline.crash_hook = crash_at("after-upsert", 1)
    with pytest.raises(Crash):
        other.load([str(folder)], COLLECTION)
    pipeline.crash_hook = None
    other.load([str(folder)], COLLECTION, "the launch folder")
    info = other.store.describe(COLLECTION)
    assert (info.description, info.description_generated) == ("the launch folder", False)


# --- a full disk (finding 3) ---------------------------------------------------------------------------------------
class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64, "hash-64")
        self.batches = 0

    def embed_documents(self, texts: Any) -> Any:
        self.batches += 1
        return super().embed_documents(texts)


def test_a_full_disk_stops_the_load_at_the_first_write_and_keeps_what_is_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from deepsearcher.errors import DiskFullError
    from deepsearcher.ingest.splitter import Splitter
    from deepsearcher.ingest.sources import SourceItem
    from deepsearcher.types import Document
    from deepsearcher.vectordb.milvus import MilvusStore

    store = MilvusStore(str(tmp_path / "milvus.db"))
    embedder = CountingEmbedder()
    splitter = Splitter(40, 0, tokenizer=None, model_max_tokens=None)

    def items(prefix: str, n: int) -> list[SourceItem]:
        return [SourceItem(f"/docs/{prefix}{i}.md", "v1", lambda i=i: [
            Document(paragraph(f"{prefix}{i}", "ember", 8), f"/docs/{prefix}{i}.md", f"{prefix}{i}")])
            for i in range(n)]

    pipe = pipeline.LoadPipeline(store, embedder, splitter, 4)
    stored = pipe.run(items("v", 2), COLLECTION, description="x").chunks_written
    assert stored == store.count(COLLECTION) > 0

    def no_space(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.client.raw, "upsert", no_space)
    embedder.batches = 0
    with pytest.raises(DiskFullError) as caught:
        pipe.run(items("more", 10), COLLECTION, description="x")
    assert str(caught.value.args[0]).startswith(f"disk full at {tmp_path.resolve()}")
    assert embedder.batches == 1  # stopped at the first write: nothing more embedded, no file blamed
    monkeypatch.undo()
    assert store.count(COLLECTION) == stored
    store.close()


def test_a_lite_write_failing_on_a_nearly_full_disk_is_called_disk_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Milvus Lite's own message often does not say why: the free space beside the file does."""
    from pymilvus.exceptions import MilvusException

    from deepsearcher.errors import DiskFullError
    from deepsearcher.vectordb import milvus

    store = milvus.MilvusStore(str(tmp_path / "milvus.db"))

    def broken(*args: Any, **kwargs: Any) -> None:
        raise MilvusException(message="flush failed: segment writer closed")

    class Usage:
        free = 300 * 1024

    monkeypatch.setattr(store.client.raw, "flush", broken)
    store.create_collection(COLLECTION, description="x", model_name="m", dim=8)
    monkeypatch.setattr(milvus.shutil, "disk_usage", lambda path: Usage())
    with pytest.raises(DiskFullError, match="disk full at"):
        store.seal(COLLECTION)
    store.close()


def test_a_server_saying_no_space_is_disk_full_named_by_the_configured_uri() -> None:
    from pymilvus.exceptions import MilvusException

    from deepsearcher.errors import DiskFullError
    from deepsearcher.vectordb.connection import translate_error

    err = translate_error(MilvusException(message="failed to flush: write /var/lib/milvus/wal: no space left on "
                                                  "device (internal 10.0.3.7:21123)"), "http://milvus:19530", "upsert")
    assert isinstance(err, DiskFullError)
    assert err.args[0].startswith("disk full at the Milvus server http://milvus:19530")
    assert "10.0.3.7" not in str(err)


# --- reporting (finding 5) -----------------------------------------------------------------------------------------
def test_a_store_failing_as_a_whole_is_named_by_our_message_not_the_raw_library_text() -> None:
    import numpy as np

    from deepsearcher.errors import ProviderError
    from deepsearcher.testing import MemoryStore
    from deepsearcher.types import Chunk

    class Down(MemoryStore):
        def upsert(self, *args: Any, **kwargs: Any) -> int:
            raise ProviderError("cannot reach Milvus at http://milvus:19530 (upsert): the server is down") \
                from RuntimeError("<_InactiveRpcError: 10.0.3.7:19530 Connection refused>")

        def has_collection(self, name: str) -> bool:
            raise ProviderError("cannot reach Milvus at http://milvus:19530 (has collection): the server is down") \
                from RuntimeError("<_InactiveRpcError: 10.0.3.7:19530 Connection refused>")

    chunk = Chunk(id="1", text="t", source="/a.md", title="a", page=None, chunk_index=0, doc_hash="v")
    with pytest.raises(ProviderError) as caught:
        pipeline.write_batch(Down(), COLLECTION, [chunk], np.zeros((1, 4)), {"/a.md": 1})
    text = str(caught.value)
    assert "http://milvus:19530" in text and "10.0.3.7" not in text and "_InactiveRpcError" not in text


def _cli(tmp_path: Path, folder: Path, env: dict[str, str], *args: str, prelude: str = "") -> Any:
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {tmp_path / 'cli.db'}\ningest:\n  batch_size: 2\n")
    code = (prelude + "\nimport sys\nfrom deepsearcher.cli import main\n"
            f"sys.argv = ['deepsearcher', '--config', {str(cfg)!r}, 'load', {str(folder)!r}, *{list(args)!r}]\n"
            "main()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", **env})


def test_sigterm_stops_a_load_with_one_line_saying_what_was_kept(tmp_path: Path) -> None:
    folder = tmp_path / "term"
    write_v1(folder)
    out = _cli(tmp_path, folder, {"DEEPSEARCHER_TEST_SIGNAL_AT": "after-upsert:2:TERM"}, "-c", "term")
    assert out.returncode == 143, out.stderr[-2000:]
    assert "Stopped (SIGTERM). The 4 chunks written by this run are kept" in " ".join(out.stderr.split())
    assert "Traceback" not in out.stderr
    again = _cli(tmp_path, folder, {}, "-c", "term", "--json")
    assert again.returncode == 0, again.stderr[-2000:]


def test_ctrl_c_during_the_final_flush_prints_the_interrupted_line_not_a_traceback(tmp_path: Path) -> None:
    """The signal arrives inside Milvus Lite's flush (its servicer thread): the flush it cuts short logs a traceback
    from a thread at exit unless milvus-lite's logger is quiet, and the store's close could wait on that flush (seen
    twice under load: the process never exited), so the stop abandons a close that does not end (``exit_now``)."""
    folder = tmp_path / "flush"
    write_v1(folder)
    prelude = ("import os, signal\nfrom milvus_lite.engine import collection as _c\n_flush = _c.Collection.flush\n"
               "def flush(self):\n    _c.Collection.flush = _flush\n    os.kill(os.getpid(), signal.SIGINT)\n"
               "    return _flush(self)\n_c.Collection.flush = flush\n")  # once: the first flush only
    out = _cli(tmp_path, folder, {}, "-c", "flush", prelude=prelude)
    assert out.returncode == 130, out.stderr[-2000:]
    assert "Interrupted." in out.stderr and "Re-run the same command to resume" in out.stderr
    assert "Traceback" not in out.stderr


# --- a huge text file (finding 5): read, split and written in pieces ------------------------------------------------
@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stream files from 4 kB on, in pieces of 3,000 characters (the real sizes are 16 MB and 1 M characters)."""
    from deepsearcher.ingest import loaders
    from deepsearcher.ingest.formats import text

    monkeypatch.setattr(loaders, "STREAM_BYTES", 4096)
    monkeypatch.setattr(text, "PIECE_CHARS", 3000)
    monkeypatch.setattr(text, "BLOCK_BYTES", 1024)


def big_text(path: Path, paragraphs: int) -> Path:
    path.write_text("".join(f"Paragraph {i}: " + paragraph(f"p{i}", "glacier", 2) + "\n\n" for i in range(paragraphs)),
                    encoding="utf-8")
    return path


def test_stream_text_gives_the_whole_text_in_pieces_cut_at_paragraphs(tmp_path: Path, small_pieces: None) -> None:
    from deepsearcher.ingest.formats.text import stream_text

    path = big_text(tmp_path / "big.txt", 60)
    pieces = [d.text for d in stream_text(path, "/big.txt", "big")]
    assert len(pieces) > 3 and "".join(pieces) == path.read_text(encoding="utf-8")
    assert all(p.endswith("\n\n") for p in pieces[:-1]) and all(len(p) <= 3000 for p in pieces)
    latin = tmp_path / "latin.txt"
    latin.write_bytes(("Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e. " * 400).encode("cp1252"))
    assert "".join(d.text for d in stream_text(latin, "/latin.txt")) == ("Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e. "
                                                                         * 400)


def test_a_large_text_file_is_written_batch_by_batch_with_progress_and_resumes(
        tmp_path: Path, app_on: Callable[..., Any], small_pieces: None) -> None:
    from deepsearcher.events import LoadBatch

    folder = tmp_path / "huge"
    folder.mkdir()
    big_text(folder / "big.txt", 120)
    (folder / "small.md").write_text("# Small\n\nA small file beside the big one.")
    events: list[Any] = []
    app = app_on()
    pipeline.crash_hook = crash_at("after-upsert", 3)
    with pytest.raises(Crash):
        app.load([str(folder)], COLLECTION, "x", on_event=events.append)
    pipeline.crash_hook = None
    counting = [e for e in events if isinstance(e, LoadBatch) and e.chunks == 0]
    assert counting, "no progress while the big file's chunks were counted"
    before = len(_query(app, ["id"]))  # the batches written before the crash
    embedded: list[str] = []
    embed = app.embedder.embed_documents
    app.embedder.embed_documents = lambda texts: (embedded.extend(texts), embed(texts))[1]
    progress: list[Any] = []
    summary = app.load([str(folder)], COLLECTION, on_event=progress.append)
    status = {Path(f.source).name: (f.status, f.chunks) for f in summary.files}
    big = status["big.txt"]
    assert big[0] == "loaded" and big[1] > 3 * 4
    after = len(_query(app, ["id"]))
    # only what the crash left unwritten is embedded and written again, and the progress still ends complete
    assert before >= 3 and summary.chunks_written == len(embedded) == after - before
    last = [e for e in progress if isinstance(e, LoadBatch)][-1]
    assert last.written == last.queued == summary.chunks_written
    stored = [r for r in _query(app, ["source", "chunk_index", "doc_chunks"]) if r["source"].endswith("big.txt")]
    indexes = sorted(r["chunk_index"] for r in stored)  # one index across the pieces (a duplicate leaves a gap)
    assert indexes[0] == 0 and len(set(indexes)) == len(indexes) == big[1]
    assert {r["doc_chunks"] for r in stored} == {big[1]}
    again = app.load([str(folder)], COLLECTION)
    assert again.chunks_written == 0 and {f.status for f in again.files} == {"unchanged"}


def test_peak_memory_of_a_large_text_file_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Two files, 2 and 8 MB, streamed from 512 kB on, through the real loader and pipeline (a store that keeps
    nothing): peak RSS grows by far less than the 6 MB between them (read whole, it grew ~5x the file)."""
    import subprocess
    import sys

    from tests.conftest import REPO

    script = REPO / "scripts" / "bench_load_memory.py"
    peaks = []
    for mb in (2, 8):
        out = subprocess.run([sys.executable, str(script), str(mb), "--stream-bytes", str(2**19), "--json"],
                             capture_output=True, text=True,
                             timeout=600, env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin"})
        assert out.returncode == 0, out.stderr[-2000:]
        peaks.append(__import__("json").loads(out.stdout.splitlines()[-1])["peak_load_mb"])
    assert peaks[1] - peaks[0] < 4, peaks


def test_a_stop_whose_store_close_never_ends_still_exits_with_its_code() -> None:
    """``exit_now`` abandons a close stuck behind a write the signal cut short (the hang of the test above, under
    load): the process ends with the stop's code and its output flushed, whatever the close does."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    code = ("import threading, click\nfrom deepsearcher.cli import commands\ncommands.CLOSE_GRACE_S = 0.2\n"
            "ctx = click.Context(click.Command('load'))\nctx.call_on_close(threading.Event().wait)  # never ends\n"
            "print('stopping', flush=False)\ncommands.exit_now(ctx, 130)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 130, out.stderr[-2000:]
    assert out.stdout == "stopping\n"
