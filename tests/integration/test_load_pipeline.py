"""Ingestion on real Milvus Lite with the real bundled embedder and the real sample documents in data/."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deepsearcher.errors import CollectionError, IngestError, StoreInUseError
from tests.conftest import DATA
from deepsearcher.ingest.load import make_splitter, split_signature

pytestmark = pytest.mark.integration


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A writable copy of several real formats from data/ plus bad inputs."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(DATA / "milvus_docs" / "consistency.md", folder)
    shutil.copy(DATA / "pdf" / "WhatisMilvus.pdf", folder)
    shutil.copy(DATA / "html" / "Duck.html", folder)
    shutil.copy(DATA / "office" / "handbook-1p.docx", folder)
    shutil.copy(DATA / "office" / "sample-presentation.pptx", folder)
    (folder / "empty.txt").write_text("")
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 40)
    (folder / "scanned.pdf").write_bytes(_pdf_without_text())
    (folder / "notes.txt").write_bytes("Café naïve – the rare token ZQX-4471 lives here.".encode("cp1252"))
    return folder


def _pdf_without_text() -> bytes:
    from io import BytesIO

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buf = BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_load_formats_skip_bad_and_reload_is_noop(make_app, docs: Path):
    app = make_app()
    summary = app.load([str(docs)], "docs", "test documents")
    status = {Path(f.source).name: (f.status, f.reason) for f in summary.files}
    assert {n for n, (s, _) in status.items() if s == "loaded"} == {
        "consistency.md", "WhatisMilvus.pdf", "Duck.html", "handbook-1p.docx", "sample-presentation.pptx",
        "notes.txt"}
    assert status["empty.txt"] == ("skipped", "empty file")
    assert status["scanned.pdf"] == ("skipped", "no text layer in any page (scanned? run OCR first)")
    assert status["blob.bin"][0] == "skipped" and "unsupported" in status["blob.bin"][1]
    count = app.store.count("docs")
    assert count == summary.chunks_written > 0

    info = {c.name: c for c in app.collections()}["docs"]
    assert info.description == "test documents"
    assert info.embedding_model == "all-MiniLM-L6-v2" and info.embedding_dim == 384
    assert info.chunk_count == count

    again = app.load([str(docs)], "docs")
    assert again.chunks_written == 0 and len(again.unchanged) == 6
    assert app.store.count("docs") == count


def test_pdf_pages_and_sentence_retrieval(make_app, docs: Path):
    app = make_app()
    app.load([str(docs)], "docs")
    hits = app.retrieve("the rare token ZQX-4471", top_k=3)
    assert Path(hits[0].chunk.source).name == "notes.txt"
    assert "Café naïve" in hits[0].chunk.text  # cp1252 decoded right
    pdf_hits = app.retrieve("Milvus is a vector database", top_k=10, mode="dense")
    pages = {h.chunk.page for h in pdf_hits if h.chunk.source.endswith("WhatisMilvus.pdf")}
    assert pages and all(isinstance(p, int) and p >= 1 for p in pages)
    # a sentence copied from the Markdown file comes back from that file first
    sentence = "Strong is the highest and the most strict level of consistency."
    assert sentence in (docs / "consistency.md").read_text()
    top = app.retrieve(sentence, top_k=1, mode="dense")[0]
    assert top.chunk.source.endswith("consistency.md")


def test_changed_file_replaces_its_chunks(make_app, tmp_path: Path):
    f = tmp_path / "note.md"
    f.write_text("# Note\n\nThe launch code is ALPHA-1.\n")
    app = make_app()
    app.load([str(f)], "notes")
    f.write_text("# Note\n\nThe launch code is BRAVO-2.\n")
    summary = app.load([str(f)], "notes")
    assert summary.chunks_deleted >= 1 and len(summary.loaded) == 1
    texts = [h.chunk.text for h in app.retrieve("launch code", top_k=10)]
    assert any("BRAVO-2" in t for t in texts) and not any("ALPHA-1" in t for t in texts)


def test_interrupted_load_completes_without_duplicates(make_app, tmp_path: Path):
    f = tmp_path / "long.txt"
    f.write_text("\n\n".join(f"Paragraph {i}: " + "retrieval augmented generation " * 30 for i in range(30)))
    app = make_app()
    full = make_splitter(app.settings.ingest, app.embedder).split(app.loader.load(f), "v")
    # simulate an interruption after the first batch: only some chunks of the file are stored
    from deepsearcher.ingest.pipeline import LoadPipeline
    from deepsearcher.ingest.sources import file_items

    class Boom(Exception):
        pass

    calls = {"n": 0}

    def stop_after_first_batch(event):
        if event.kind == "load.batch":
            calls["n"] += 1
            raise Boom()

    pipeline = LoadPipeline(app.store, app.embedder, make_splitter(app.settings.ingest, app.embedder), batch_size=8,
                            on_event=stop_after_first_batch)
    signature = split_signature(app.settings.ingest, app.settings.loader, app.embedder)
    with pytest.raises(Boom):
        pipeline.run(file_items([f], app.loader, signature), "longdoc", description="x")
    assert 0 < app.store.count("longdoc") < len(full)
    summary = app.load([str(f)], "longdoc", batch_size=8)
    assert len(summary.loaded) == 1  # the partial source is not mistaken for an unchanged one
    assert app.store.count("longdoc") == len(full)


def test_force_new_collection_rebuilds(make_app, docs: Path):
    app = make_app()
    app.load([str(docs / "consistency.md")], "docs")
    summary = app.load([str(docs / "notes.txt")], "docs", force_new=True)
    assert app.store.count("docs") == summary.chunks_written
    assert all(h.chunk.source.endswith("notes.txt") for h in app.retrieve("consistency level", top_k=5))


def test_missing_path_writes_nothing(make_app, docs: Path):
    app = make_app()
    with pytest.raises(IngestError, match="not found: .*nope.md"):
        app.load([str(docs / "consistency.md"), str(docs / "nope.md")], "docs")
    assert "docs" not in app.store.list_collections()


def test_model_mismatch_refused_before_any_write(make_app, docs: Path):
    app = make_app()
    app.load([str(docs / "consistency.md")], "docs")
    before = app.store.count("docs")
    from deepsearcher.vectordb.milvus_lite import PROP_MODEL

    app.store.client.alter_collection_properties("docs", properties={PROP_MODEL: "other-model"})
    with pytest.raises(CollectionError, match="other-model"):
        app.load([str(docs / "notes.txt")], "docs")
    with pytest.raises(CollectionError, match="other-model"):
        app.retrieve("anything", collections=["docs"])
    assert app.store.count("docs") == before


def test_invalid_collection_name(make_app, docs: Path):
    with pytest.raises(CollectionError, match="letters, digits and underscores"):
        make_app().load([str(docs)], "my-docs")


def test_second_process_gets_in_use_message(make_app, docs: Path, tmp_path: Path):
    app = make_app(db="locked.db")
    app.load([str(docs / "consistency.md")], "docs")
    script = textwrap.dedent(f"""
        from deepsearcher.vectordb.milvus import MilvusStore
        from deepsearcher.errors import StoreInUseError
        try:
            MilvusStore({str(tmp_path / 'locked.db')!r}).list_collections()
        except StoreInUseError as exc:
            print("IN-USE:", exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "IN-USE:" in out.stdout and "in use by another process" in out.stdout
    assert StoreInUseError  # the exception type the CLI renders as a message


def test_force_new_with_nothing_loadable_keeps_the_old_collection(make_app, docs: Path):
    app = make_app()
    app.load([str(docs / "consistency.md")], "docs")
    before = app.store.count("docs")
    summary = app.load([str(docs / "empty.txt")], "docs", force_new=True)
    assert summary.chunks_written == 0 and summary.skipped
    assert app.store.count("docs") == before


def test_force_new_rebuilds_with_another_model(make_app, docs: Path):
    from deepsearcher.vectordb.milvus_lite import PROP_MODEL

    app = make_app()
    app.load([str(docs / "consistency.md")], "docs")
    app.store.client.alter_collection_properties("docs", properties={PROP_MODEL: "old-model"})
    app.load([str(docs / "notes.txt")], "docs", force_new=True)  # no mismatch error: it is a rebuild
    assert {c.name: c for c in app.collections()}["docs"].embedding_model == "all-MiniLM-L6-v2"


def test_empty_folder_and_empty_collection_name(make_app, tmp_path: Path, docs: Path):
    (tmp_path / "nothing").mkdir()
    app = make_app()
    with pytest.raises(IngestError, match="no files to load in .*nothing"):
        app.load([str(tmp_path / "nothing")], "docs")
    with pytest.raises(CollectionError, match="invalid collection name ''"):
        app.load([str(docs / "notes.txt")], "")
