"""Issue #13's "must show": a folder mixing every failing ingestion case (../shared/cases/ingest, rebuilt by
tests/fidelity) with the rest of the fidelity suite and good files loads through the CLI with exit code 0; the files
that cannot be used are listed as skipped with their reasons; every other file's text is stored whole and clean;
identical text in two folders takes one retrieval slot with the other path shown.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from tests.conftest import DATA
from tests.fidelity.build import all_fixtures
from tests.fidelity.fixture import Fixture, fold, score

pytestmark = pytest.mark.integration

#: the fidelity fixtures that need a non-default loader option (a JSON path): covered by tests/fidelity
FIXTURES = [f for f in all_fixtures() if not f.options]
GOOD = ["milvus_docs/limitations.md", "pdf/WhatisMilvus.pdf", "office/handbook-1p.docx", "html/Duck.html"]


def _stored(uri: Path, collection: str) -> dict[str, list[dict]]:
    """Every stored chunk by source, in (page, chunk_index) order."""
    from deepsearcher.vectordb.milvus import MilvusStore

    store = MilvusStore(str(uri))
    try:
        store.count(collection)  # loads the collection
        rows = store.client.query(collection, filter="chunk_index >= 0", limit=16384,
                                  output_fields=["text", "source", "page", "chunk_index", "title"])
    finally:
        store.close()
    by_source: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: (r["source"], r["page"], r["chunk_index"])):
        by_source.setdefault(row["source"], []).append(row)
    return by_source


def _merged(texts: list[str]) -> str:
    """Consecutive chunks of one document joined back into its text (the overlap each repeats dropped)."""
    merged = fold(texts[0])
    for text in texts[1:]:
        nxt = fold(text)
        overlap = next((k for k in range(min(len(merged), len(nxt)), 0, -1) if merged.endswith(nxt[:k])), 0)
        merged += ("" if overlap else " ") + nxt[overlap:]
    return merged


def _check_whole_and_clean(fixture: Fixture, chunks: list[dict]) -> None:
    pages: dict[int, list[str]] = {}
    for chunk in chunks:
        pages.setdefault(chunk["page"], []).append(chunk["text"])
    result = score(fixture, "\n\n".join(_merged(texts) for texts in pages.values()))
    assert not result.missing and not result.present_noise, (fixture.name, result.missing, result.present_noise)


def test_a_folder_of_every_failing_case_loads_with_exit_code_0(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    for fixture in FIXTURES:
        path = folder / fixture.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fixture.data)
    policy = next(f for f in FIXTURES if f.source_case == "same_file_two_folders")
    (folder / "copies").mkdir()
    (folder / "copies" / "policy.md").write_bytes(policy.data)  # same_file_two_folders: the second folder
    for name in GOOD:
        (folder / "good").mkdir(exist_ok=True)
        shutil.copy(DATA / name, folder / "good")
    (folder / "good" / "odd\nname.txt").write_text("A file name with a line break in it still loads.\n")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db:\n  uri: ./store/milvus.db\n")
    runner = CliRunner()

    loaded = runner.invoke(main, ["--config", str(cfg), "load", str(folder), "-c", "cases", "--json"],
                           catch_exceptions=False)
    assert loaded.exit_code == 0, loaded.output
    summary = json.loads(loaded.stdout)
    status = {Path(f["source"]).relative_to(folder.resolve()).as_posix(): f for f in summary["files"]}
    assert len(status) == len(FIXTURES) + 1 + len(GOOD) + 1
    skipped = {name: f["reason"] for name, f in status.items() if f["status"] == "skipped"}
    assert skipped == {"pdf/user_password.pdf": "encrypted PDF that needs a password",
                       "pdf/no_text.pdf": "no text layer in any page (scanned? run OCR first)",
                       "pdf/truncated.pdf": skipped.get("pdf/truncated.pdf")}
    assert skipped["pdf/truncated.pdf"].startswith("unreadable PDF")
    assert all(f["status"] == "loaded" and f["chunks"] > 0 for n, f in status.items() if n not in skipped)
    assert status["json/records.jsonl"]["skipped_records"] == {"text is a number": 1, "text is an object": 1}

    stored = _stored(tmp_path / "store" / "milvus.db", "cases")
    for fixture in FIXTURES:
        if not fixture.skip:
            _check_whole_and_clean(fixture, stored[(folder / fixture.name).resolve().as_posix()])
    base64_note = stored[(folder / "md" / "note_base64.md").resolve().as_posix()]
    assert len(base64_note) == 1  # was ~577 chunks of base64 noise
    assert all("\x00" not in c["text"] and "\u00ad" not in c["text"] for rows in stored.values() for c in rows)

    # the table lists the skipped files with reasons, and a line break in a name cannot break its row
    again = runner.invoke(main, ["--config", str(cfg), "load", str(folder), "-c", "cases"], catch_exceptions=False,
                          env={"COLUMNS": "300"})  # wide enough for the paths of tmp_path on one line
    assert again.exit_code == 0
    table = again.stdout
    assert f"({len(status) - 3} loaded or unchanged sources not listed)" in table  # the skipped ones are
    for name, reason in skipped.items():
        assert name.split("/")[-1] in table and reason in table
    assert f"0 loaded, {len(status) - 3} unchanged, 3 skipped" in table
    assert "2 JSON record(s) without text skipped" not in table  # unchanged files report no records this time
    odd = runner.invoke(main, ["--config", str(cfg), "load", str(folder / "good"), "-c", "cases"],
                        catch_exceptions=False, env={"COLUMNS": "300"})
    assert "odd\\nname.txt" in odd.stdout and "odd\nname" not in odd.stdout

    hits = json.loads(runner.invoke(main, ["--config", str(cfg), "retrieve", "travel policy trains flights", "-k",
                                           "3", "-c", "cases", "--json"], catch_exceptions=False).stdout)
    policies = [h for h in hits if h["text"].startswith("# Travel policy")]
    assert len(policies) == 1  # one slot; the other copy is named on it
    assert {Path(policies[0]["source"]).parent.name, Path(policies[0]["also_in"][0]["source"]).parent.name} == {
        "md", "copies"}
    plain = runner.invoke(main, ["--config", str(cfg), "retrieve", "travel policy trains flights", "-k", "3", "-c",
                                 "cases"], catch_exceptions=False, env={"COLUMNS": "300"})
    assert f"(also in {policies[0]['also_in'][0]['source']})" in plain.stdout
