"""LLM calls per query: deepsearcher's DeepSearch agent vs the reference design, on the same scripted run.

Usage:
    python scripts/bench_llm_calls.py [--out docs/benchmarks.md]

Loads data/ into a fresh Milvus Lite file as two collections (milvus_docs, samples) with the real bundled embedder,
then runs ``DeepSearcher.query`` with a ``ScriptedChatModel`` that answers every step deterministically (the same
sub-queries, routes, relevance marks and gap queries for both counts). Our count is the calls the run made. The
reference count is what zilliztech/deep-searcher's DeepSearch makes for the same run: one decomposition call, one
routing call per sub-query when there is more than one collection, **one relevance call per retrieved chunk** (every
chunk of every (sub-query, collection) search), one reflection per round except the last, one summary. Prints a
Markdown section; ``--out`` writes it into that file (replacing an earlier "LLM calls per query" section).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
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


def run(app: Any, scenario: Scenario) -> dict[str, Any]:
    from deepsearcher.llm.scripted import ScriptedChatModel

    llm = ScriptedChatModel([responder(scenario)] * 200)
    app._llm, app._llm_checked = llm, True
    app.settings.query.top_k = scenario.top_k
    searched: list[int] = []
    store_search = app.store.search

    def counting_search(*args: Any, **kwargs: Any) -> Any:
        hits = store_search(*args, **kwargs)
        searched.append(len(hits))
        return hits

    app.store.search = counting_search
    try:
        report = app.query(QUESTION, collections=scenario.collections, max_iter=scenario.max_iter)
    finally:
        app.store.search = store_search
    ours = {step: 0 for step in STEPS}
    for prompt in llm.prompts:
        ours[step_of(prompt)] += 1
    stopped_at_max = report.iterations == scenario.max_iter and scenario.gap_rounds >= scenario.max_iter
    reference = {"decompose": 1, "route": ours["route"], "relevance": sum(searched),
                 "reflect": ours["reflect"] - (1 if stopped_at_max else 0), "synthesise": 1}
    assert report.usage.llm_calls == sum(ours.values())
    return {"scenario": scenario, "rounds": report.iterations, "sub_queries": len(report.sub_queries),
            "retrieved": sum(searched), "ours": ours, "reference": reference}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| run | collections | rounds | sub-queries | chunks retrieved | deepsearcher calls | reference design "
             "calls | reference / ours |", "|---|---|---|---|---|---|---|---|"]
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
the same run: one relevance call per retrieved chunk (every chunk of every sub-query × collection search), a routing
call per sub-query with more than one collection, a reflection per round except the last. Calls are split as
decompose/route/relevance/reflect/synthesise. deepsearcher also reflects after the last round (to report the gaps
still open), and judges only chunks it has not accepted yet, in one call per sub-query.

{table(rows)}
"""


def write_section(path: Path, text: str, heading: str = HEADING) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = old.find(heading)
    if start == -1:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        nxt = old.find("\n## ", start + len(heading))
        new = old[:start] + text + (old[nxt:] if nxt != -1 else "")
    path.write_text(new, encoding="utf-8")


# --- per agent: naive, deep_search, chain_of_rag, deep_research on one scripted scenario ------------------------------
AGENTS_HEADING = "## LLM calls and tokens per agent"
GAP_1, GAP_2 = "Which features does Milvus Lite not support?", "How are sparse vectors searched in Milvus?"


def _number(prompt: str, needle: str) -> int:
    """The [n] of the first knowledge item whose text contains ``needle`` (DeepResearch prompts), else 1."""
    for block in prompt.split("\n\n"):
        if block.startswith("[") and needle.casefold() in block.casefold():
            return int(block[1:].split("]", 1)[0])
    return 1


def research_script() -> list[Any]:
    """DeepResearch's decisions: search (3 queries), reflect (2 gaps), search each gap, a rejected answer, a gap
    answered, a read, then an accepted answer: 8 steps with 1 rejection, the evaluator's usual path."""
    checks = json.dumps({"definitive": True, "freshness": False, "plurality": False, "completeness": True,
                         "attribution": True})
    ok = json.dumps({"definitive": True, "completeness": True, "attribution": True, "critique": "", "plan": ""})
    reject = json.dumps({"definitive": True, "completeness": False, "attribution": True,
                         "critique": "The limits of collections are missing.", "plan": "Cite the limits."})
    gap_ok = json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})

    def answer(text: str, needle: str) -> Any:
        return lambda m: json.dumps({"action": "answer", "answer": text.format(n=_number(m[-1]["content"], needle))})

    return [
        json.dumps({"action": "search", "queries": SUB_QUERIES}),
        json.dumps({"action": "reflect", "questions": [GAP_1, GAP_2]}),
        json.dumps({"action": "search", "queries": ["Milvus Lite unsupported features"]}),
        json.dumps({"action": "search", "queries": ["sparse vector search"]}),
        answer("Milvus Lite runs in-process [{n}].", "Milvus Lite"), checks, reject,
        answer("Milvus Lite lacks some index types [{n}].", "Milvus Lite"), gap_ok,
        lambda m: json.dumps({"action": "read", "items": [int(n) for n in re.findall(r"\[(\d+)\]", m[-1][
            "content"].split("Items not opened yet: ", 1)[1].split("\n", 1)[0])][:2]}),
        answer("Milvus Lite runs in-process [{n}]; consistency is tunable and collections have limits.",
               "Milvus Lite"), ok,
    ]


def agent_responder(agent: str) -> Any:
    """Replies for the prompts of ``agent`` (DeepSearch's decisions are ``responder``'s, gaps in round 1)."""
    search_like = responder(Scenario("per agent", ["milvus_docs", "samples"], max_iter=3, gap_rounds=1))
    follow_ups = iter([SUB_QUERIES[0], SUB_QUERIES[1], ""])

    def reply(messages: Sequence[Any]) -> str:
        prompt = messages[-1]["content"]
        if prompt.startswith("Question:") and "Research steps so far" in prompt:  # chain_of_rag follow-up
            nxt = next(follow_ups)
            return json.dumps({"enough": not nxt, "follow_up": nxt})
        if prompt.startswith("Answer the follow-up question"):
            return json.dumps({"answer": "Milvus Lite runs in-process.", "supporting": [1, 2]})
        return search_like(messages)

    return reply


def research_responder() -> Any:
    """DeepResearch's replies: routing as ``responder`` routes, everything else from ``research_script`` in order."""
    steps = iter(research_script())
    route = responder(Scenario("route", [], 3, 0))

    def reply(messages: Sequence[Any]) -> Any:
        if messages[-1]["content"].startswith("Choose the collections"):
            return route(messages)
        nxt = next(steps)
        return nxt(messages) if callable(nxt) else nxt

    return reply


def run_agent(app: Any, agent: str) -> dict[str, Any]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.llm.scripted import ScriptedChatModel

    llm = ScriptedChatModel([research_responder() if agent == "deep_research" else agent_responder(agent)] * 200)
    searcher = DeepSearcher(app.settings, embedder=app.embedder, store=app.store, llm=llm)
    report = searcher.query(QUESTION, collections=["milvus_docs", "samples"], agent=agent)
    u = report.usage
    return {"agent": agent, "calls": u.llm_calls, "prompt": u.prompt_tokens, "completion": u.completion_tokens,
            "iterations": report.iterations, "sources": len(report.sources), "beast": report.beast_mode}


def agents_section(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | LLM calls | prompt tokens | completion tokens | rounds / steps | sources cited |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | **{r['calls']}** | {r['prompt']:,} | {r['completion']:,} | {r['iterations']} "
                     f"| {r['sources']} |")
    return f"""{AGENTS_HEADING}

Measured by `scripts/bench_llm_calls.py` ({date.today().isoformat()}) on the same data and question as above (two
collections, so every search is routed by one LLM call). The scripted model makes each agent's usual decisions:
naive answers from one search; deep_search decomposes into 3 sub-queries and finds gaps once; chain_of_rag follows up
twice; deep_research searches (3 queries), reflects (2 gap questions), searches each gap, has one answer rejected by
the evaluator, answers a gap question, reads 2 items and answers (8 steps; 1 choice of checks and 3 verdicts). Tokens
are the scripted model's estimate (characters / 4) of the real prompts. A real model's calls vary with its decisions;
deep_research's are capped by `agents.deep_research.token_budget` and `max_steps` (then one forced answer).

{chr(10).join(lines)}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="Markdown file to write the section into.")
    args = parser.parse_args()

    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        app = DeepSearcher(load_settings(None, {"vector_db": {"uri": str(Path(tmp) / "bench.db")}, "llm": None}))
        try:
            app.load([str(DATA / "milvus_docs")], "milvus_docs",
                     "Milvus documentation: overview, Milvus Lite, consistency, limits, sparse vectors")
            app.load([str(DATA / "pdf"), str(DATA / "office"), str(DATA / "html")], "samples",
                     "Sample files: a PDF about Milvus, an employee handbook, a slide deck, a web page about ducks")
            scenarios = [
                Scenario("one collection, no gaps", ["milvus_docs"], max_iter=3, gap_rounds=0),
                Scenario("two collections, gaps once", ["milvus_docs", "samples"], max_iter=3, gap_rounds=1),
                Scenario("two collections, gaps until max_iter 3", ["milvus_docs", "samples"], max_iter=3,
                         gap_rounds=3),
                Scenario("two collections, gaps once", ["milvus_docs", "samples"], max_iter=3, gap_rounds=1,
                         top_k=10),
            ]
            rows = [run(app, s) for s in scenarios]
            agent_rows = [run_agent(app, agent) for agent in ("naive", "deep_search", "chain_of_rag",
                                                              "deep_research")]
        finally:
            app.close()
    text = section(rows)
    agents_text = agents_section(agent_rows)
    print(text + "\n" + agents_text)
    if args.out:
        write_section(Path(args.out), text)
        write_section(Path(args.out), agents_text, AGENTS_HEADING)
        print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
