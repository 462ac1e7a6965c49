"""``scripts/install.sh`` says what it is doing before each quiet pip step (a first install takes minutes with no
other output), run here against a stand-in ``.venv/bin/python`` that records the pip calls instead of installing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO

STAND_IN = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../../calls.log"
echo "pip: $*" >&2
"""


def test_install_announces_each_step_before_pip_runs_it(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "install.sh", tmp_path / "scripts" / "install.sh")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN)
    python.chmod(0o755)
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "install.sh"), "dev,model"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "==> upgrading pip in .venv", "pip: -m pip install -q --upgrade pip",
        "==> installing torch 2.13.0", "pip: -m pip install -q torch==2.13.0",
        "==> installing deepsearcher with the extras dev,model", "pip: -m pip install -q -e .[dev,model]",
        "==> installed: .venv/bin/deepsearcher"]
    assert (tmp_path / "calls.log").read_text().count("pip install") == 3
