"""A question file with broken JSON is named with the file's own line and column (found by a new user: a JSONL file
said "Unterminated string starting at at line 1" for its third line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.errors import ConfigError
from deepsearcher.eval.datasets import _read_records

GOOD = '{"question": "q1?", "answers": ["a"]}'


@pytest.mark.parametrize("name, text, where", [
    ("q.jsonl", f'{GOOD}\n\n{{"question": "unterminated\n', "line 3, column 14: Unterminated string starting"),
    ("q.jsonl", f'{GOOD}\n{GOOD}\n{{"question": }}\n', "line 3, column 14: Expecting value"),
    ("q.json", f'[\n  {GOOD},\n  {{"question": ]\n', "line 3, column 16: Expecting value"),
])
def test_broken_json_names_the_files_line(tmp_path: Path, name: str, text: str, where: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        _read_records(path)
    assert str(error.value).startswith(f"{path}: invalid JSON at {where}")
    assert " at at " not in str(error.value)


def test_good_files_read_as_before(tmp_path: Path) -> None:
    lines = tmp_path / "q.jsonl"
    lines.write_text(f"{GOOD}\n\n{GOOD}\n", encoding="utf-8")
    assert len(_read_records(lines)) == 2
    array = tmp_path / "q.json"
    array.write_text(f"[{GOOD}, {GOOD}, {GOOD}]", encoding="utf-8")
    assert len(_read_records(array)) == 3
    one = tmp_path / "one.json"
    one.write_text(GOOD, encoding="utf-8")
    assert _read_records(one) == [{"question": "q1?", "answers": ["a"]}]
