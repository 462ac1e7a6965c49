#!/usr/bin/env bash
# Install deepsearcher with every extra the tests exercise into ./.venv, then run the whole test suite.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/unit -x).
set -euo pipefail
cd "$(dirname "$0")/.."
# `local` builds llama-cpp-python from source the first time (~16 min on 2 cores), then pip's wheel cache serves it
bash scripts/install.sh dev,local,server,mcp,export,cjk,multilingual,crawl,onnx,ray
# Chromium and a CJK font for the browser and PDF tests, when missing and apt-get can run (else those checks skip)
bash scripts/system_packages.sh
# Milvus Lite 2.x (the C++ engine) beside the venv's 3.x, for tests/integration/test_milvus_lite2.py; its __init__
# imports pkg_resources, which setuptools 81 removed
if [ ! -d .venv/milvus-lite-2/milvus_lite ]; then
  .venv/bin/python -m pip install -q --target .venv/milvus-lite-2 --no-deps "milvus-lite==2.5.1" "setuptools<81"
fi
export HF_HUB_OFFLINE=1 DO_NOT_TRACK=1
exec .venv/bin/python -m pytest "$@"
