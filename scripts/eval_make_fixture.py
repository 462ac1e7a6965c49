"""Cut the small 2WikiMultiHopQA slice in tests/fixtures/eval_slice/ from the shared evaluation data.

Usage: python scripts/eval_make_fixture.py ../shared/data/qa [--questions 20] [--distractors 120]

Writes ``unified/2wiki_slice.jsonl`` (the first N 2Wiki questions with complete gold, plus the first question with
incomplete gold, in the unified record format without the bulky fields) and ``2wikimultihopqa_slice/
2wikimultihopqa_corpus.json`` (their gold passages plus the first D other corpus passages, as distractors).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

KEEP = ("id", "dataset", "question", "answer", "answer_aliases", "question_type", "supporting_titles", "gold_source")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("qa_dir", type=Path)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--distractors", type=int, default=120)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests/fixtures/eval_slice")
    args = parser.parse_args()

    rows = [json.loads(line) for line in (args.qa_dir / "unified/multihop_unified_1100.jsonl").open(encoding="utf-8")]
    wiki = [r for r in rows if r["dataset"] == "2wikimultihopqa"]
    chosen = [r for r in wiki if r["supporting_titles"]][:args.questions - 1]
    chosen.append(next(r for r in wiki if r["supporting_titles"] is None and r["gold_passages"]))
    corpus = json.loads((args.qa_dir / "2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json").read_text("utf-8"))
    gold = {p["title"] for r in chosen for p in r["gold_passages"]}
    passages = [p for p in corpus if p["title"] in gold]
    passages += [p for p in corpus if p["title"] not in gold][:args.distractors]

    (args.out / "unified").mkdir(parents=True, exist_ok=True)
    (args.out / "2wikimultihopqa_slice").mkdir(parents=True, exist_ok=True)
    with (args.out / "unified/2wiki_slice.jsonl").open("w", encoding="utf-8") as fh:
        for r in chosen:
            rec = {k: r[k] for k in KEEP}
            rec["gold_passages"] = [{"title": p["title"]} for p in r["gold_passages"]]
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (args.out / "2wikimultihopqa_slice/2wikimultihopqa_corpus.json").write_text(
        json.dumps(passages, ensure_ascii=False, indent=0), encoding="utf-8")
    print(f"{len(chosen)} questions, {len(passages)} passages ({len(gold)} gold) -> {args.out}")


if __name__ == "__main__":
    main()
