"""Wall time of one search round with the sub-queries run one after the other vs concurrently.

Usage:
    python scripts/bench_concurrency.py [--delay 1.0] [--out docs/benchmarks.md]

Loads data/ into a fresh Milvus Lite file as two collections (milvus_docs, samples) with the real bundled embedder,
then runs ``DeepSearcher.query`` (DeepSearch) with a ``ScriptedChatModel`` whose every call sleeps ``--delay``
seconds before it answers, like a model that takes that long per reply. Round 1 searches the question and 3
sub-queries; each is routed (two collections: one call), retrieved and judged (one call). The round's wall time is
measured from the ``query.sub_queries`` event of round 1 to its last ``query.accepted`` event, for
``query.concurrency`` 1 (one after the other) and 4. Concurrently, a round should take about as long as its slowest
sub-query (route + judge: 2 × delay), not the sum over sub-queries. Prints a Markdown section; ``--out`` writes it
into that file (replacing an earlier "Sub-queries of a round, concurrently" section).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
HEADING = "## Sub-queries of a round, concurrently"
QUESTION = "What is Milvus Lite, how does Milvus handle consistency, and what limits apply to collections?"
SUB_QUERIES = ["What is Milvus Lite?", "Milvus consistency levels", "Milvus limits on collections and fields"]


def slow_reply(delay: float) -> Any:
    """Replies by step after ``delay`` seconds: 3 sub-queries, keyword routing, every other chunk helpful, no gaps."""

    def reply(messages: Sequence[Any]) -> str:
        time.sleep(delay)
        prompt = messages[-1]["content"]
        if prompt.startswith("Break the question"):
            return json.dumps({"sub_queries": SUB_QUERIES})
        if prompt.startswith("Choose the collections"):
            return json.dumps({"collections": ["milvus_docs", "samples"]})
        if "numbered text chunks" in prompt:
            count = int(re.search(r"Below are (\d+) numbered", prompt).group(1))  # type: ignore[union-attr]
            return json.dumps({"relevant": list(range(1, count + 1, 2))})
        if "Search queries already run" in prompt:
            return json.dumps({"gap_queries": []})
        return "Milvus Lite runs in-process [1]."

    return reply


def measure(base: Any, concurrency: int, delay: float) -> dict[str, Any]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.testing.scripted import ScriptedChatModel

    settings = base.settings.model_copy(deep=True)
    settings.query.concurrency = concurrency
    settings.query.max_iter = 1
    llm = ScriptedChatModel([slow_reply(delay)] * 40)
    app = DeepSearcher(settings, llm=llm, store=base.store, embedder=base.embedder)
    marks: dict[str, float] = {}

    def on_event(event: Any) -> None:
        if event.kind == "query.sub_queries" and event.iteration == 1:
            marks["start"] = time.perf_counter()
        elif event.kind == "query.accepted" and event.iteration == 1:
            marks["end"] = time.perf_counter()

    started = time.perf_counter()
    report = app.query(QUESTION, on_event=on_event)
    total = time.perf_counter() - started
    round_calls = sum(1 for p in llm.prompts if p.startswith("Choose the collections") or "numbered text chunks" in p)
    return {"concurrency": concurrency, "round_s": marks["end"] - marks["start"], "total_s": total,
            "round_calls": round_calls, "queries": len(report.sub_queries), "calls": report.usage.llm_calls}


def section(rows: list[dict[str, Any]], delay: float) -> str:
    lines = ["| query.concurrency | queries in round 1 | LLM calls in the round | round wall time | whole query |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['concurrency']} | {r['queries']} | {r['round_calls']} | **{r['round_s']:.2f} s** | "
                     f"{r['total_s']:.2f} s ({r['calls']} calls) |")
    seq, par = rows[0], rows[-1]
    return f"""{HEADING}

Measured by `scripts/bench_concurrency.py --delay {delay:g}` ({date.today().isoformat()}): `data/` in Milvus Lite as
two collections, the DeepSearch agent with a scripted model that takes {delay:g} s per call. Round 1 searches the
question and its 3 sub-queries; each is routed (one call, two collections) and its new chunks judged (one call). With
`query.concurrency` 1 the round costs the sum of its calls; with 4 it costs about the slowest sub-query (routing, then
judging: {2 * delay:g} s), plus retrieval. The events keep the sub-queries' order either way.

{chr(10).join(lines)}

Round 1 took {seq['round_s'] / par['round_s']:.1f}× less wall time with 4 threads.
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=1.0, help="Seconds per scripted LLM call.")
    parser.add_argument("--out", default=None, help="Markdown file to write the section into.")
    args = parser.parse_args()

    from deepsearcher.eval.sections import publish, sample_app

    with sample_app(DATA) as base:
        rows = [measure(base, c, args.delay) for c in (1, 4)]
    publish(section(rows, args.delay), HEADING, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
