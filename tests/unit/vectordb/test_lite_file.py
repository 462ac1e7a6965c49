"""What is at ``vector_db.uri`` when it is a file and milvus-lite 3.x (a folder) is installed: a Lite 2.x database
(an SQLite file) gets the way to open it; an empty or junk file is named as what it is, never as a 2.x database
(found by a new user: ``touch milvus.db`` was told to install an older milvus-lite)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deepsearcher.errors import ProviderError
from deepsearcher.vectordb import milvus_lite
from deepsearcher.vectordb.milvus_lite import check_lite_format


@pytest.fixture(autouse=True)
def lite3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(milvus_lite, "lite_engine_major", lambda: 3)


def test_an_sqlite_file_is_a_lite2_database(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as db:
        db.execute("create table t (x)")
    with pytest.raises(ProviderError, match="is a Milvus Lite 2.x database") as error:
        check_lite_format(path)
    assert "milvus-lite==2.5.1" in (error.value.hint or "")


@pytest.mark.parametrize("content, what", [(b"", "an empty file"),
                                           (b"\x89junk" * 100, "a file that is not a Milvus Lite database")])
def test_an_empty_or_junk_file_is_named_as_what_it_is(tmp_path: Path, content: bytes, what: str) -> None:
    path = tmp_path / "milvus.db"
    path.write_bytes(content)
    with pytest.raises(ProviderError, match=f"is {what}") as error:
        check_lite_format(path)
    assert "2.x" not in str(error.value) and "new path" in (error.value.hint or "")
    assert path.read_bytes() == content  # nothing touched


def test_a_folder_or_nothing_passes(tmp_path: Path) -> None:
    check_lite_format(tmp_path)
    check_lite_format(tmp_path / "new.db")


def test_a_file_in_the_way_of_the_folder_is_named(tmp_path: Path) -> None:
    # found by a new user: "cannot create the Milvus Lite file …: File exists" when a parent was a file
    from deepsearcher.vectordb.milvus import MilvusStore

    (tmp_path / "data").write_text("not a folder")
    with pytest.raises(ProviderError, match=f"{tmp_path / 'data'} is a file, not a folder"):
        MilvusStore(str(tmp_path / "data" / "sub" / "milvus.db")).list_collections()
