"""Local-first: libraries that phone home are switched off before they load (unless the user chose otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

PROBE = ("import os, deepsearcher.embedding.onnx_backend, onnxruntime; "
         "print(os.environ.get('ORT_DISABLE_TELEMETRY'))")


def _probe(extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(extra, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_onnxruntime_telemetry_is_off_by_default_and_the_users_choice_wins():
    # onnxruntime >= 1.29 uploads telemetry on Linux unless ORT_DISABLE_TELEMETRY=1 before its first session
    # (measured with strace: DNS + port-443 connects with the variable at 0, none with it at 1)
    assert _probe({}) == "1"
    assert _probe({"ORT_DISABLE_TELEMETRY": "0"}) == "0"
