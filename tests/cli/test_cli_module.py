"""``python -m deepsearcher`` runs the command (a new user tried it and got Python's "cannot be directly executed")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_python_m_deepsearcher_is_the_command():
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "deepsearcher", "--help"], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: deepsearcher ") and "query" in done.stdout
