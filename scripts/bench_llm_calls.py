"""LLM calls per query: deepsearcher's DeepSearch agent vs the reference design, on the same scripted run.

Usage:
    python scripts/bench_llm_calls.py [--out docs/benchmarks.md]

Loads data/ into a fresh Milvus Lite file as two collections (milvus_docs, samples) with the real bundled embedder,
then runs ``DeepSearcher.query`` with a ``ScriptedChatModel`` that answers every step deterministically (the same
sub-queries, routes, relevance marks and gap queries for both counts). Our count is the calls the run made. The
reference count is what zilliztech/deep-searcher's DeepSearch makes for the same sub-queries: one decomposition call,
one routing call per sub-query when there is more than one collection, **one relevance call per retrieved chunk**
(every chunk of every (sub-query, collection) search), one reflection per round except the last, one summary.

Retrieved chunks are counted where the agent searches: the store is wrapped (``CountingStore``) and passed to
``DeepSearcher``, so only the agent's own searches count, not the dense and BM25 candidate lists a hybrid search
fetches inside the store (an earlier version patched the store's ``search`` method, which also counted those inner
calls). deepsearcher also searches the original question in round 1; the reference does not, so the question's
searches are left out of the reference count. Prints a Markdown section; ``--out`` writes it into that file
(replacing an earlier "LLM calls per query" section).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
HEADING = "## LLM calls per query"
STEPS = ("decompose", "route", "relevance", "reflect", "synthesise")

QUESTION = "What is Milvus Lite, how does Milvus handle consistency, and what limits apply to collections?"
SUB_QUERIES = ["What is Milvus Lite?", "Milvus consistency levels", "Milvus limits on collections and fields"]
GAPS = [["How are sparse vectors searched in Milvus?", "Which features does Milvus Lite not support?"],
        ["What index types does Milvus offer?"], ["How is Milvus deployed in production?"]]


@dataclass
class Scenario:
    name: str
    collections: list[str]
    max_iter: int
    gap_rounds: int  # rounds whose reflection proposes gaps
    top_k: int = 5
    rounds_seen: int = field(default=0)


def step_of(prompt: str) -> str:
    if prompt.startswith("Break the question"):
        return "decompose"
    if prompt.startswith("Choose the collections"):
        return "route"
    if "numbered text chunks" in prompt:
        return "relevance"
    if "Search queries already run" in prompt:
        return "reflect"
    if prompt.startswith("Write a report"):
        return "synthesise"
    raise AssertionError(f"unexpected prompt: {prompt[:120]}")


def responder(scenario: Scenario) -> Any:
    """Deterministic replies by step: the same decisions whatever the retrieval returns."""

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        step = step_of(prompt)
        if step == "decompose":
            return json.dumps({"sub_queries": SUB_QUERIES})
        if step == "route":
            query = prompt.split("Search query: ", 1)[1].split("\n", 1)[0].casefold()
            return json.dumps({"collections": ["milvus_docs"] if "milvus" in query else ["samples"]})
        if step == "relevance":
            count = int(re.search(r"Below are (\d+) numbered", prompt).group(1))  # type: ignore[union-attr]
            return json.dumps({"relevant": list(range(1, count + 1, 2))})  # every other chunk helps
        if step == "reflect":
            scenario.rounds_seen += 1
            gaps = GAPS[scenario.rounds_seen - 1] if scenario.rounds_seen <= scenario.gap_rounds else []
            return json.dumps({"gap_queries": gaps})
        return "Milvus Lite runs in-process [1]. Consistency is tunable [2]. Names are restricted [3]."

    return reply


class CountingStore:
    """A ``VectorStore`` wrapper that records every search the agent makes: ``(query text, hits returned)``."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.searches: list[tuple[str, int]] = []

    def search(self, name: str, query_vector: Any, query_text: str, top_k: int, mode: Any = "hybrid") -> Any:
        hits = self.store.search(name, query_vector, query_text, top_k, mode=mode)
        self.searches.append((query_text, len(hits)))
        return hits

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.store, attr)


def run(base: Any, scenario: Scenario) -> dict[str, Any]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.llm.scripted import ScriptedChatModel

    llm = ScriptedChatModel([responder(scenario)] * 200)
    settings = base.settings.model_copy(deep=True)
    settings.query.top_k = scenario.top_k
    settings.query.concurrency = 1  # the scripted replies count rounds in call order
    store = CountingStore(base.store)
    app = DeepSearcher(settings, llm=llm, store=store, embedder=base.embedder)  # type: ignore[arg-type]
    report = app.query(QUESTION, collections=scenario.collections, max_iter=scenario.max_iter)
    ours = {step: 0 for step in STEPS}
    for prompt in llm.prompts:
        ours[step_of(prompt)] += 1
    stopped_at_max = report.iterations == scenario.max_iter and scenario.gap_rounds >= scenario.max_iter
    routed_question = 1 if len(scenario.collections) > 1 else 0
    reference = {"decompose": 1, "route": ours["route"] - routed_question,
                 "relevance": sum(n for text, n in store.searches if text != QUESTION),
                 "reflect": ours["reflect"] - (1 if stopped_at_max else 0), "synthesise": 1}
    assert report.usage.llm_calls == sum(ours.values())
    return {"scenario": scenario, "rounds": report.iterations, "sub_queries": len(report.sub_queries) - 1,
            "retrieved": sum(n for _, n in store.searches), "ours": ours, "reference": reference}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| run | collections | rounds | sub-queries | chunks the agent retrieved | deepsearcher calls | "
             "reference design calls | reference / ours |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["scenario"]
        ours, ref = sum(r["ours"].values()), sum(r["reference"].values())
        split = "/".join(str(r["ours"][k]) for k in STEPS)
        ref_split = "/".join(str(r["reference"][k]) for k in STEPS)
        lines.append(f"| {s.name} (top_k {s.top_k}) | {len(s.collections)} | {r['rounds']} | {r['sub_queries']} | "
                     f"{r['retrieved']} | **{ours}** ({split}) | **{ref}** ({ref_split}) | {ref / ours:.1f}× |")
    return "\n".join(lines)


def section(rows: list[dict[str, Any]]) -> str:
    return f"""{HEADING}

Measured by `scripts/bench_llm_calls.py` ({date.today().isoformat()}). `data/` is loaded into Milvus Lite as two
collections (`milvus_docs`, `samples`) with the bundled embedder; `DeepSearcher.query` runs the DeepSearch agent with
a `ScriptedChatModel` that makes the same decisions in every run (3 sub-queries, keyword routing, every other chunk
relevant, gap queries in the first rounds). "Reference design" is what zilliztech/deep-searcher's DeepSearch makes for
the same sub-queries: one relevance call per retrieved chunk (every chunk of every sub-query × collection search), a
routing call per sub-query with more than one collection, a reflection per round except the last. Calls are split as
decompose/route/relevance/reflect/synthesise. deepsearcher also searches the original question in round 1 (one more
routing call with two collections; its chunks are judged in the same per-query call), reflects after the last round
(to report the gaps still open), and judges only chunks no earlier query brought, in one call per query. "Chunks the
agent retrieved" counts the hits of every search the agent made (the question's included), as the store returned them
to the agent; an earlier version of this table counted the dense and BM25 candidate lists a hybrid search fetches
inside the store (315 chunks, "53×" for the first run), which no agent ever sees.

{table(rows)}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="Markdown file to write the section into.")
    args = parser.parse_args()

    from deepsearcher.eval.sections import publish, sample_app

    with sample_app(DATA) as app:
        scenarios = [
            Scenario("one collection, no gaps", ["milvus_docs"], max_iter=3, gap_rounds=0),
            Scenario("two collections, gaps once", ["milvus_docs", "samples"], max_iter=3, gap_rounds=1),
            Scenario("two collections, gaps until max_iter 3", ["milvus_docs", "samples"], max_iter=3,
                     gap_rounds=3),
            Scenario("two collections, gaps once", ["milvus_docs", "samples"], max_iter=3, gap_rounds=1,
                     top_k=10),
        ]
        rows = [run(app, s) for s in scenarios]
    publish(section(rows), HEADING, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
