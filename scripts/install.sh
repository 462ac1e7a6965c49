#!/usr/bin/env bash
# Create ./.venv if missing and install deepsearcher into it with the given extras (e.g. "dev" or "dev,local").
# torch goes first, pinned to a CPU build: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# pip runs quietly; these lines say what it is doing, since a first install takes minutes with no other output
say() { echo "==> $*" >&2; }
[ -x .venv/bin/python ] || { say "creating .venv"; "$PY" -m venv .venv; }
say "upgrading pip in .venv"
.venv/bin/python -m pip install -q --upgrade pip
say "installing torch 2.13.0 (CPU build)"
.venv/bin/python -m pip install -q "torch==2.13.0"
# llama-cpp-python (extra `local`) compiles llama.cpp. A native build (-march=native) of 0.3.36 segfaults on the first
# generation on this project's machines (x86_64 with AVX-512 and AMX); a portable AVX2 build does not. Set CMAKE_ARGS
# yourself to override (e.g. "-DGGML_CUDA=on").
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
say "installing deepsearcher with the extras ${1:-dev} (minutes on a first install; pip's cache makes re-runs quick)"
.venv/bin/python -m pip install -q -e ".[${1:-dev}]"
say "installed: .venv/bin/deepsearcher"
