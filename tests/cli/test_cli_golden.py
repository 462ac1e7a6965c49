"""The recorded outputs of `load`, `collections` and `retrieve` on data/ (issue #10: the refactor must not change
what the CLI prints). The golden files were recorded with the code before the architecture change; timings are
masked, paths replaced by placeholders. Re-record (only for an intended change) with
``DEEPSEARCHER_UPDATE_GOLDEN=1 pytest tests/cli/test_cli_golden.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import DATA, REPO

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"
#: a location of fixed length (that of the recording, /tmp/deepsearcher-golden), so rich wraps and truncates paths
#: the same way wherever the checkout lives; unique per run, so two runs of the suite at once never share it
WORK = Path("/tmp") / f"dsgolden-{uuid.uuid4().hex[:10]}"
COMMANDS = {
    "load_first": ["load", "{data}", "-c", "sample", "-d", "Sample corpus"],
    "load_again": ["load", "{data}", "-c", "sample", "-d", "Sample corpus"],
    "load_json": ["load", "{data}", "-c", "sample", "--json"],
    "collections": ["collections"],
    "retrieve": ["retrieve", "What consistency levels does Milvus offer?", "-k", "3"],
    "retrieve_bm25_json": ["retrieve", "duck", "-k", "3", "--mode", "bm25", "--json"],
}


def normalise(text: str) -> str:
    text = text.replace(str(WORK), "<WORK>")
    text = re.sub(r"\d+\.\d+ s\b", "X.X s", text)
    text = re.sub(r'"(mtime|date)": [0-9.e+]+', r'"\1": X', text)  # the files' times where this run copied them
    text = re.sub(r'"id": "[0-9a-f]{32}"', '"id": X', text)  # chunk ids hash the source path, unique per run here
    return re.sub(r'"(seconds|embed_seconds)": [0-9.e-]+', r'"\1": X', text)


def run_all(pythonpath: str) -> dict[str, str]:
    """Run every command in order on a fresh copy of data/; returns name -> normalised stdout + stderr."""
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.copytree(DATA, WORK / "data")
    (WORK / "cfg.yaml").write_text("vector_db:\n  uri: ./db/milvus.db\nllm: null\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": pythonpath, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1", "COLUMNS": "200",
           "TERM": "dumb"}
    out: dict[str, str] = {}
    for name, args in COMMANDS.items():
        argv = [a.format(data=WORK / "data") for a in args]
        proc = subprocess.run([sys.executable, "-m", "deepsearcher.cli", "--config", str(WORK / "cfg.yaml"), *argv],
                              cwd=WORK, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        # plain progress lines ("Loading into ...", every 5 s when stderr is not a terminal) carry timings
        stderr = "\n".join(line for line in proc.stderr.splitlines() if "Warning" not in line and
                           not line.startswith(("  ", "WARNING root", "Loading into ")))
        out[name] = normalise(f"--- stdout\n{proc.stdout}--- stderr\n{stderr}\n")
    shutil.rmtree(WORK, ignore_errors=True)
    return out


def test_cli_outputs_match_the_recorded_ones() -> None:
    outputs = run_all(str(REPO))
    if os.environ.get("DEEPSEARCHER_UPDATE_GOLDEN"):
        for name, text in outputs.items():
            (GOLDEN / f"{name}.txt").write_text(text, encoding="utf-8")
    for name, text in outputs.items():
        assert text == (GOLDEN / f"{name}.txt").read_text(encoding="utf-8"), name


if __name__ == "__main__":  # record from another checkout: python tests/cli/test_cli_golden.py PYTHONPATH
    for key, value in run_all(sys.argv[1]).items():
        (GOLDEN / f"{key}.txt").write_text(value, encoding="utf-8")
