"""The watch's words and selection rules, without a watcher (the real watcher: tests/integration/test_watch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.ingest.load import changed_files
from deepsearcher.ingest.watch import WatchBatch, WatchTotals, force_polling
from deepsearcher.types import FileResult


def test_a_batch_says_what_it_did_in_one_line_relative_to_the_folder() -> None:
    batch = WatchBatch("/data/docs", added=("/data/docs/a.md",), replaced=("/data/docs/sub/b.md",),
                       removed=("/data/docs/c.md", "/data/docs/d.md"),
                       skipped=(FileResult("/data/docs/e.pdf", "skipped", "unreadable PDF (bad)\nmore"),),
                       seconds=0.42)
    assert batch.describe() == ("added a.md · replaced sub/b.md · removed c.md, d.md · "
                                "skipped e.pdf (unreadable PDF (bad)) · 0.4 s")
    assert batch.did_something and not WatchBatch("/data/docs", seconds=1.0).did_something
    failed = WatchBatch("/data/docs", error="the vector store failed")
    assert failed.describe() == "batch failed, tried again later: the vector store failed"


def test_totals_add_up_every_batch() -> None:
    totals = WatchTotals()
    totals.add(WatchBatch("/d", added=("/d/a", "/d/b"), removed=("/d/c",)))
    totals.add(WatchBatch("/d", error="down"))
    assert totals.describe() == "2 change batches: 2 added, 0 replaced, 1 removed, 0 skipped, 1 failed"


def test_a_batch_loads_the_changed_files_and_everything_below_a_changed_folder(tmp_path: Path) -> None:
    files = [tmp_path / "a.md", tmp_path / "ab.md", tmp_path / "sub" / "x.md", tmp_path / "subway" / "y.md"]
    chosen = changed_files(files, [str(tmp_path / "a.md"), str(tmp_path / "sub"), str(tmp_path / "gone.md")])
    assert chosen == [tmp_path / "a.md", tmp_path / "sub" / "x.md"]


@pytest.mark.parametrize(("value", "polls"), [("", False), ("1", True), ("true", True), ("false", False),
                                              ("Disabled", False)])
def test_polling_only_when_the_variable_asks_for_it(monkeypatch: pytest.MonkeyPatch, value: str,
                                                    polls: bool) -> None:
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", value)
    assert force_polling() is polls
