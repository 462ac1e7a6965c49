"""LLM calls per query: deepsearcher's DeepSearch agent vs the reference design, on the same scripted run.

Usage:
    python scripts/bench_llm_calls.py [--out docs/benchmarks.md]

Loads data/ into a fresh Milvus Lite file as two collections (milvus_docs, samples) with the real bundled embedder,
then runs ``DeepSearcher.query`` with a ``ScriptedChatModel`` that answers every step deterministically (the same
sub-queries, routes, relevance marks and gap queries for both counts). Our count is the calls the run made. The
reference count is what zilliztech/deep-searcher's DeepSearch makes for the same sub-queries: one decomposition call,
one routing call per sub-query when there is more than one collection, **one relevance call per retrieved chunk**
(every chunk of every (sub-query, collection) search), one reflection per round except the last, one summary.

Retrieved chunks are counted where the agent gets them: ``DeepSearcher.search`` (the one search the agents use) is
wrapped (``CountingSearcher``), so a count is the distinct hits a search returned to the agent — not the dense and
BM25 candidate lists a hybrid search fetches inside the store (an earlier version patched the store's ``search``),
nor the store's over-fetch that ``search_distinct`` asks for to collapse identical texts (a later version wrapped the
store and counted 2 × top_k per search). deepsearcher also searches the original question in round 1; the
reference does not, so the question's searches are left out of the reference count. Prints a Markdown section;
``--out`` writes it into that file (replacing an earlier "LLM calls per query" section).
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
    if prompt.startswith("Answer the question below using"):
        return "synthesise"
    raise AssertionError(f"unexpected prompt: {prompt[:120]}")


def chunk_numbers(prompt: str) -> list[int]:
    """The numbers of the prompt's chunks, without the check passage (``agents.relevance_check``): the scripted model
    reads, so it never names the unrelated passage the prompt shows to catch a model that copies the example."""
    from deepsearcher.agents.relevance_check import PASSAGES

    blocks = re.findall(r"^\[(\d+)\](.*?)(?=^\[\d+\]|\Z)", prompt, flags=re.S | re.M)
    return [int(n) for n, text in blocks if not any(passage[2][:60] in text for passage in PASSAGES)]


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
            return json.dumps({"relevant": chunk_numbers(prompt)[::2]})  # every other chunk helps
        if step == "reflect":
            scenario.rounds_seen += 1
            gaps = GAPS[scenario.rounds_seen - 1] if scenario.rounds_seen <= scenario.gap_rounds else []
            return json.dumps({"gap_queries": gaps})
        return "Milvus Lite runs in-process [1]. Consistency is tunable [2]. Names are restricted [3]."

    return reply


def counting_searcher(settings: Any, llm: Any, base: Any) -> Any:
    """A ``DeepSearcher`` whose ``search`` records ``(query text, hits returned)`` for every search the agent makes."""
    from deepsearcher.app import DeepSearcher

    class CountingSearcher(DeepSearcher):
        searches: list[tuple[str, int]]

        def search(self, *args: Any, **kwargs: Any) -> Any:
            hits = super().search(*args, **kwargs)
            self.searches.append((args[2] if len(args) > 2 else kwargs["query"], len(hits)))
            return hits

    searcher = CountingSearcher(settings, llm=llm, store=base.store, embedder=base.embedder)
    searcher.searches = []
    return searcher


def run(base: Any, scenario: Scenario) -> dict[str, Any]:
    from deepsearcher.testing.scripted import ScriptedChatModel

    llm = ScriptedChatModel([responder(scenario)] * 200)
    settings = base.settings.model_copy(deep=True)
    settings.query.top_k = scenario.top_k
    settings.query.concurrency = 1  # the scripted replies count rounds in call order
    app = counting_searcher(settings, llm, base)
    report = app.query(QUESTION, collections=scenario.collections, max_iter=scenario.max_iter)
    ours = {step: 0 for step in STEPS}
    for prompt in llm.prompts:
        ours[step_of(prompt)] += 1
    stopped_at_max = report.iterations == scenario.max_iter and scenario.gap_rounds >= scenario.max_iter
    routed_question = 1 if len(scenario.collections) > 1 else 0
    reference = {"decompose": 1, "route": ours["route"] - routed_question,
                 "relevance": sum(n for text, n in app.searches if text != QUESTION),
                 "reflect": ours["reflect"] - (1 if stopped_at_max else 0), "synthesise": 1}
    assert report.usage.llm_calls == sum(ours.values())
    return {"scenario": scenario, "rounds": report.iterations, "sub_queries": len(report.sub_queries) - 1,
            "retrieved": sum(n for _, n in app.searches), "ours": ours, "reference": reference}


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
relevant, gap queries in the first rounds; it reads the chunks, so it never names the check passage a relevance prompt
shows — a model that did would keep every chunk, with no further relevance calls). "Reference design" is what
zilliztech/deep-searcher's DeepSearch makes for the same sub-queries: one relevance call per retrieved chunk (every
chunk of every sub-query × collection search), a routing call per sub-query with more than one collection, a
reflection per round except the last. Calls are split as decompose/route/relevance/reflect/synthesise. deepsearcher
also searches the original question in round 1 (one more routing call with two collections; its chunks are judged in
the same per-query call), reflects after the last round (to report the gaps still open), and judges only chunks no
earlier query brought, in one call per query. "Chunks the agent retrieved" counts the distinct hits every search of
the agent returned to it (the question's included); earlier versions of this table counted the dense and BM25
candidate lists a hybrid search fetches inside the store (315 chunks, "53×" for the first run), or the store's
over-fetch for collapsing identical texts (2 × top_k per search), which no agent ever sees.

{table(rows)}
"""


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
            value: dict[str, Any] = {"answer": "Milvus Lite runs in-process.", "supporting": chunk_numbers(prompt)[:2]}
            if '"follow_up"' in prompt:  # agents.chain_of_rag.one_call: the reply decides the next step too
                nxt = next(follow_ups)
                value.update(enough=not nxt, follow_up=nxt)
            return json.dumps(value)
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
    from deepsearcher.testing.scripted import ScriptedChatModel

    llm = ScriptedChatModel([research_responder() if agent == "deep_research" else agent_responder(agent)] * 200)
    settings = app.settings.model_copy(deep=True)
    settings.query.concurrency = 1  # the scripted replies follow the order of calls
    searcher = DeepSearcher(settings, embedder=app.embedder, store=app.store, llm=llm)
    report = searcher.query(QUESTION, collections=["milvus_docs", "samples"], agent=agent)
    u = report.usage
    assert u.llm_calls == len(llm.history)
    if agent == "deep_research":  # the scripted path was followed to its accepted answer, not cut short
        assert not report.beast_mode and report.checks and all(report.checks.values()), report.checks
    return {"agent": agent, "calls": u.llm_calls, "prompt": u.prompt_tokens, "completion": u.completion_tokens,
            "iterations": report.iterations, "sources": len(report.sources), "beast": report.beast_mode,
            "checks": report.checks}


def agents_section(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | LLM calls | prompt tokens | completion tokens | rounds / steps | sources cited |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | **{r['calls']}** | {r['prompt']:,} | {r['completion']:,} | {r['iterations']} "
                     f"| {r['sources']} |")
    return f"""{AGENTS_HEADING}

Measured by `scripts/bench_llm_calls.py` ({date.today().isoformat()}) on the same data and question as above (two
collections, so every search is routed by one LLM call). The scripted model makes each agent's usual decisions:
naive answers from one search; deep_search decomposes into 3 sub-queries and finds gaps once; chain_of_rag searches
the question, then follows up twice (3 steps, each one call that answers and names the next follow-up); deep_research
searches (3 queries), reflects (2 gap questions), searches each gap, has one answer rejected by the evaluator, answers
a gap question, reads 2 items and answers (8 steps; 1 choice of checks and 3 verdicts). Tokens are the scripted
model's estimate (characters / 4) of the real prompts. A real model's calls vary with its decisions; deep_research's
are capped by `agents.deep_research.token_budget` and `max_steps` (then one forced answer).

{chr(10).join(lines)}
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
        agent_rows = [run_agent(app, agent) for agent in ("naive", "deep_search", "chain_of_rag", "deep_research")]
    publish(section(rows), HEADING, args.out)
    publish(agents_section(agent_rows), AGENTS_HEADING, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
