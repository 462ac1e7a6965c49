"""Real passages for load tests: 2WikiMultiHopQA's corpus (the shared evaluation data) cut into JSONL files."""

from __future__ import annotations

import json
from pathlib import Path

#: the corpus, relative to the shared data folder (``shared_data`` fixture)
CORPUS = Path("qa") / "2wikimultihopqa_hipporag" / "2wikimultihopqa_corpus.json"


def passage_files(folder: Path, corpus: Path, names: list[str], per_file: int = 60) -> list[Path]:
    """JSONL files ``<folder>/<name>.jsonl`` of 2Wiki passages, file i holding passages [i*per_file,
    (i+1)*per_file) (keys ``title`` and ``text``)."""
    passages = json.loads(corpus.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i, name in enumerate(names):
        rows = passages[i * per_file:(i + 1) * per_file]
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        files.append(path)
    return files
