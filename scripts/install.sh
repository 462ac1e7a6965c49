#!/usr/bin/env bash
# Create ./.venv if missing and install deepsearcher into it with the given extras (e.g. "dev" or "dev,local").
# torch goes first, pinned to a CPU build: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[${1:-dev}]"
