#!/usr/bin/env bash
# Install deepsearcher into ./.venv (CPU torch) with the bundled local model, load the bundled sample corpus data/
# into a local Milvus Lite collection, list it, retrieve from it, and ask it a question: the answer comes from the
# bundled model (Qwen2.5-Coder-1.5B-Instruct, in-process), offline, with no API key. Safe to re-run: the second load
# skips every unchanged file, and the model is assembled into ~/.cache/deepsearcher only once.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh dev,model
export HF_HUB_OFFLINE=1
echo "==> loading the sample corpus data/ into the collection 'sample'" >&2
.venv/bin/deepsearcher --config config.yaml load data \
  --collection sample --description "Milvus documentation, the 'What is Milvus' PDF, the Wikipedia article on ducks, and two office samples"
.venv/bin/deepsearcher --config config.yaml collections
.venv/bin/deepsearcher --config config.yaml retrieve "What consistency levels does Milvus offer?" -k 3
# One search and one cited answer (the naive agent: one LLM call). The first run assembles the model (1.1 GB) into the
# cache (seconds); the answer then needs about 75 CPU seconds (docs/benchmarks.md, "The bundled model").
if [ -t 1 ]; then how="the answer streams as it is written"; else how="the report is printed when it is done"; fi
echo "==> asking the bundled model (minutes on a busy CPU; $how)" >&2
.venv/bin/deepsearcher --config config.yaml query "What consistency levels does Milvus offer?" -c sample --agent naive
