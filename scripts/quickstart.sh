#!/usr/bin/env bash
# Install deepsearcher into ./.venv (CPU torch), load the bundled sample corpus data/ into a local Milvus Lite
# collection, and list it. Safe to re-run: the second load skips every unchanged file.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: a CPU build (an unpinned torch would pull a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev]"
export HF_HUB_OFFLINE=1
.venv/bin/deepsearcher --config config.yaml load data \
  --collection sample --description "Milvus documentation, the 'What is Milvus' PDF, the Wikipedia article on ducks, and two office samples"
.venv/bin/deepsearcher --config config.yaml collections
.venv/bin/deepsearcher --config config.yaml retrieve "What consistency levels does Milvus offer?" -k 3
