#!/usr/bin/env bash
# Install deepsearcher into ./.venv (CPU torch), load the bundled sample corpus data/ into a local Milvus Lite
# collection, list it, and retrieve from it. Safe to re-run: the second load skips every unchanged file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh dev
export HF_HUB_OFFLINE=1
.venv/bin/deepsearcher --config config.yaml load data \
  --collection sample --description "Milvus documentation, the 'What is Milvus' PDF, the Wikipedia article on ducks, and two office samples"
.venv/bin/deepsearcher --config config.yaml collections
.venv/bin/deepsearcher --config config.yaml retrieve "What consistency levels does Milvus offer?" -k 3
