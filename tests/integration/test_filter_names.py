"""File names are outside text, and the store filters rows by source name: ``deepsearcher load`` of a folder whose
file names hold control characters (ESC, BEL, newline), quotes, backslashes, filter operators or a non-UTF-8 byte
loads every file, a second load finds them unchanged, and re-loading changed files replaces exactly their own rows
(``delete_stale`` deletes by a filter on the name: a crafted name must never match another file's rows). Real CLI,
real Milvus Lite (issue #21, finding 6; ``../shared/cases/security3/control_char_filename.sh`` and
``milvus_filter_injection.sh``)."""

from __future__ import annotations

import collections
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main

pytestmark = pytest.mark.integration

NAMES = [b"esc\x1b[31mred\x07.md", b"new\nline.md", b"tab\tcr\r.md", b"del\x7f.md", b'x" || source != "y.md',
         b'x\\" || source != \\"y.md', b'x\\\\" or source like "%.md', b"q' or 1==1 or 'q.md", b"x\\u0022 or true.md",
         b"tail\\", b"ctl\xff byte.md", b"paren) or (1==1.md", b"nul\\x00 and \\n.md"]


def load(cfg: Path, folder: Path) -> str:
    result = CliRunner().invoke(main, ["--config", str(cfg), "load", str(folder), "-c", "names", "-d", "names"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return re.search(r"\d+ loaded, \d+ unchanged, \d+ skipped", result.output).group(0)  # type: ignore[union-attr]


def rows_by_file(tmp_path: Path) -> collections.Counter[str]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path / "milvus.db"))
    try:
        client.load_collection("names")
        rows = client.query("names", filter="chunk_index >= 0", output_fields=["source", "text"], limit=1000)
    finally:
        client.close()
    return collections.Counter(r["text"].split(" version")[0].strip() for r in rows)


def test_crafted_file_names_load_and_reload_without_touching_other_files(tmp_path: Path, config_file) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "victim.md").write_text("victim file about milvus lite\n", encoding="utf-8")
    for i, name in enumerate(NAMES):
        with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as fh:
            fh.write(f"crafted file {i} version one\n")
    cfg = config_file()

    assert load(cfg, folder) == f"{len(NAMES) + 1} loaded, 0 unchanged, 0 skipped"
    assert load(cfg, folder) == f"0 loaded, {len(NAMES) + 1} unchanged, 0 skipped"
    for name in NAMES:  # every crafted file changes: delete_stale runs with each crafted name
        with open(os.path.join(os.fsencode(folder), name), "a", encoding="utf-8") as fh:
            fh.write("version two\n")
    assert load(cfg, folder) == f"{len(NAMES)} loaded, 1 unchanged, 0 skipped"

    counts = rows_by_file(tmp_path)
    assert counts == {"victim file about milvus lite": 1, **{f"crafted file {i}": 1 for i in range(len(NAMES))}}
    assert load(cfg, folder) == f"0 loaded, {len(NAMES) + 1} unchanged, 0 skipped"
