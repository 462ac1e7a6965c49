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
