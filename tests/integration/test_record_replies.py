"""``scripts/record_replies.py``: one question run against a real OpenAI-compatible HTTP server (scripted), every raw
reply recorded as a JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from tests.integration.scripted_openai import ScriptedOpenAI, subprocess_config
from tests.integration.server_support import ANSWER, DOCS, QUESTION

pytestmark = pytest.mark.integration
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "record_replies.py"


def test_every_reply_of_a_run_is_recorded_with_its_step(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with ScriptedOpenAI() as api:
        config = tmp_path / "config.yaml"
        config.write_text(subprocess_config(api, str(tmp_path / "m.db"), str(tmp_path)), encoding="utf-8")
        loaded = CliRunner().invoke(main, ["--config", str(config), "load", str(docs), "-c", "docs", "-d", "Notes"])
        assert loaded.exit_code == 0, loaded.output
        out = tmp_path / "replies.jsonl"
        run = subprocess.run([sys.executable, str(SCRIPT), QUESTION, "--config", str(config), "--agent",
                              "deep_search", "--collection", "docs", "--out", str(out)],
                             capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONPATH": str(SCRIPT.parents[1])})
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    replies = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(replies) == summary["llm_calls"] == len(api.prompts)
    assert replies[0]["schema"] == "Decomposition" and json.loads(replies[0]["reply"]) == {"sub_queries": [QUESTION]}
    assert replies[0]["prompt_tail"].endswith(api.prompts[0][-1500:])
    assert replies[-1]["schema"] is None and replies[-1]["reply"] == ANSWER  # the report, free text
    assert summary["fallbacks"] == [] and summary["short_answer"]
