"""How many cited sentences of past benchmark answers their sources do not hold (``agents.cited_support``).

Reads the work folders of ``scripts/bench_answers.py`` (``corpus_slice.json`` and ``ours-*/rows.jsonl``), rebuilds
each answer's sources from its row (``retrieved_titles`` in citation-number order, each the corpus passage of that
title, with the corpus file as its source: the whole passage, so at least the chunk the model saw) and counts, per
agent folder, the answers and cited sentences ``unsupported_citations`` lists. ``--show N`` prints N listed
sentences at random, to read whether the screen is right.

    python scripts/check_cited_support.py /work/bench/hotpotqa /work/bench/musique --show 20
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from deepsearcher.agents.citations import cited_numbers
from deepsearcher.agents.cited_support import unsupported_citations
from deepsearcher.agents.rewrites import sentences
from deepsearcher.types import Chunk, Source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", nargs="+", type=Path, help="bench_answers.py work folders")
    parser.add_argument("--show", type=int, default=0, help="print this many listed sentences (random, seed 1)")
    args = parser.parse_args()
    counts: Counter[tuple[str, str]] = Counter()
    listed: list[tuple[str, str, str, str]] = []
    for work in args.work:
        corpus_file = work / "corpus_slice.json"
        passages: dict[str, str] = {}
        for passage in json.loads(corpus_file.read_text(encoding="utf-8")):
            passages.setdefault(passage["title"], passage["text"])
        for rows in sorted(work.glob("ours-*/rows.jsonl")):
            agent = f"{work.name}/{rows.parent.name}"
            for line in rows.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                if not row.get("answer"):
                    continue
                found = unsupported_citations(row["answer"], [
                    Source(number, Chunk(id=str(number), text=passages.get(title, ""), source=str(corpus_file),
                                         title=title, page=None, chunk_index=0, doc_hash=""), "eval")
                    for number, title in enumerate(row["retrieved_titles"], start=1)])
                counts[agent, "answers"] += 1
                counts[agent, "answers listed"] += bool(found)
                counts[agent, "cited sentences"] += sum(bool(cited_numbers(s)) for s in sentences(row["answer"]))
                counts[agent, "sentences listed"] += len(found)
                listed += [(agent, row["question"], u.sentence, f"{u.cited} {u.share} in {u.found_in}") for u in found]
    columns = ["answers", "answers listed", "cited sentences", "sentences listed"]
    print("| folder | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for agent in sorted({a for a, _ in counts}):
        print(f"| {agent} | " + " | ".join(str(counts[agent, c]) for c in columns) + " |")
    print("| all | " + " | ".join(str(sum(v for (_, c), v in counts.items() if c == col)) for col in columns) + " |")
    for agent, question, sentence, how in random.Random(1).sample(listed, min(args.show, len(listed))):
        print(f"\n{agent}: {question}\n  {sentence}\n  cites {how}")


if __name__ == "__main__":
    main()
