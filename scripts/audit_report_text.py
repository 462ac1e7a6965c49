"""How often stored reports hold text that looks checked or sourced when it is not: verdicts on the answer, source
text told again uncited, and sources named by their place in sentences citing nothing.

Reads the ``rows.jsonl`` files of ``bench_vs_reference.py --answers`` work folders (each folder holds its
``corpus_slice.json``) and runs today's report steps over each stored report: ``filler.without_support_claims`` (a
verdict on the answer: "The answer is correct because …", 'The answer "X" is supported by both sources [1] and
[2].') and ``support.cite_copies`` against the passages of the titles the row kept or retrieved (a paragraph, else a
sentence, of 8 words or more told again word for word and citing nothing) and ``support.cite_ordinals`` ("The first
source states that …" in a sentence citing nothing). Prints, per folder and in total, how
many reports each step changes; ``--show N`` prints N changed reports of each kind, before and after.

    python scripts/audit_report_text.py /work/bench/hotpot /work/bench/musique [--show 3]

The stored reports went through the report steps of the commit that wrote them, so a count is what the steps of
this checkout would still change. The passages are found by title, not the exact chunks a prompt showed: a copy's
number is the title's, an estimate of which source the model copied.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from deepsearcher.agents.filler import without_support_claims  # noqa: E402
from deepsearcher.agents.support import cite_copies, cite_ordinals  # noqa: E402
from deepsearcher.types import Chunk  # noqa: E402


def passages_by_title(folder: Path) -> dict[str, list[str]]:
    """``title -> [text, …]`` of the folder's ``corpus_slice.json`` (a list of ``{"title", "text"}``)."""
    by: dict[str, list[str]] = {}
    for passage in json.loads((folder / "corpus_slice.json").read_text(encoding="utf-8")):
        by.setdefault(passage.get("title") or "", []).append(passage.get("text") or "")
    return by


def audit(folder: Path) -> dict[str, list[tuple[str, str, str]]]:
    """``{"reports": …, "verdicts": …, "copies": …, "ordinals": …}``: each a list of (row id, report before, report
    after)."""
    by = passages_by_title(folder)
    found: dict[str, list[tuple[str, str, str]]] = {"reports": [], "verdicts": [], "copies": [], "ordinals": []}
    for rows in sorted(folder.glob("*/rows.jsonl")):
        for line in rows.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            report = row.get("answer") or ""
            found["reports"].append((row["id"], report, report))
            text = f"Answer: {row.get('short_answer') or ''}\n\n{report}"
            after = without_support_claims(text)
            if after != text:
                found["verdicts"].append((row["id"], text, after))
            titles = dict.fromkeys([*(row.get("kept_titles") or []), *(row.get("retrieved_titles") or [])])
            chunks = [Chunk(id=str(n), text=t, source=title, title=title, page=None, chunk_index=n, doc_hash="")
                      for title in titles for n, t in enumerate(by.get(title, []))]
            cited, count = cite_copies(report, chunks)
            if count:
                found["copies"].append((row["id"], report, cited))
            named, count = cite_ordinals(report, 10)
            if count:
                found["ordinals"].append((row["id"], report, named))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="bench_vs_reference.py --answers work folders")
    parser.add_argument("--show", type=int, default=0, help="print this many changed reports of each kind")
    args = parser.parse_args(argv)
    totals = {"reports": 0, "verdicts": 0, "copies": 0, "ordinals": 0}
    for folder in args.folders:
        if not (folder / "corpus_slice.json").is_file():
            print(f"{folder}: no corpus_slice.json here (not a bench_vs_reference.py --answers work folder)",
                  file=sys.stderr)
            return 2
        found = audit(folder)
        counts = {kind: len(items) for kind, items in found.items()}
        for kind in totals:
            totals[kind] += counts[kind]
        print(f"{folder}: {counts['reports']} reports, {counts['verdicts']} with a verdict on the answer, "
              f"{counts['copies']} with source text told again uncited, {counts['ordinals']} naming a source by "
              "its place")
        for kind in ("verdicts", "copies", "ordinals"):
            for row_id, before, after in found[kind][:args.show]:
                print(f"\n--- {kind}: {row_id}")
                for diff in difflib.ndiff(before.split("\n"), after.split("\n")):
                    if diff[:1] in "-+":
                        print(diff)
    print(f"total: {totals['reports']} reports, {totals['verdicts']} with a verdict on the answer, "
          f"{totals['copies']} with source text told again uncited, {totals['ordinals']} naming a source by its "
          "place")
    return 0


if __name__ == "__main__":
    sys.exit(main())
