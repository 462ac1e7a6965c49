"""scripts/audit_report_text.py counts, over stored bench rows, the reports today's report steps would still change:
verdicts on the answer, and source text told again uncited (a bench work folder built here, not ../shared)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "audit_report_text.py"
ALU = ("In Akkadian and Sumerian mythology, Alû is a vengeful spirit of the Utukku that goes down to the underworld "
       "Kur.")


def load():
    spec = importlib.util.spec_from_file_location("audit_report_text", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_it_counts_verdicts_and_uncited_copies_per_folder(tmp_path: Path, capsys):
    work = tmp_path / "hotpot"
    (work / "ours-chain_of_rag").mkdir(parents=True)
    (work / "corpus_slice.json").write_text(json.dumps([{"title": "Alû", "text": ALU}, {"title": "x", "text": "y"}]))
    rows = [
        {"id": "a", "short_answer": "a spirit", "kept_titles": ["Alû"], "retrieved_titles": [],
         "answer": f"A lilu is a spirit [1].\n\n{ALU}\n\nThe answer is supported by both sources, making it reliable."},
        {"id": "b", "short_answer": "Kur", "kept_titles": ["x"], "answer": "It goes down to Kur [1]."},
    ]
    (work / "ours-chain_of_rag" / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert load().main([str(work), "--show", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{work}: 2 reports, 1 with a verdict on the answer, 1 with source text told again uncited, 0 naming a " \
           "source by its place" in out
    assert "+ In Akkadian and Sumerian mythology, Alû is a vengeful spirit of the Utukku that goes down to the " \
           "underworld Kur [1]." in out
    assert "- The answer is supported by both sources, making it reliable." in out


def test_a_folder_that_is_not_a_work_folder_is_a_clear_error(tmp_path: Path, capsys):
    assert load().main([str(tmp_path)]) == 2
    assert "no corpus_slice.json here" in capsys.readouterr().err
