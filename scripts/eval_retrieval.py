"""Recall@k of dense vs BM25 vs hybrid retrieval on one dataset, through the same harness as `deepsearcher eval`.

Usage:
    python scripts/eval_retrieval.py ../shared/data/qa/2wikimultihopqa_hipporag --db /tmp/eval/milvus.db \
        --out /tmp/eval/runs [--limit N] [--backend torch|onnx] [--modes dense,bm25,hybrid] [--json results.json]

Loads the corpus once (timed: that is the ingestion measurement) into ``eval_<dataset>`` (or ``--collection``), then
runs each retrieval mode over the questions and prints Recall@1/2/5/10 over all questions with gold titles and over
those whose gold set is complete, plus p50/p95 seconds per query (embed + search).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from deepsearcher.app import DeepSearcher
from deepsearcher.eval import EvalHarness, load_dataset
from deepsearcher.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--db", required=True, help="Milvus Lite file (or server URI).")
    parser.add_argument("--out", required=True, help="Folder for the per-mode run folders.")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--collection", default=None)
    parser.add_argument("--backend", choices=["torch", "onnx"], default=None, help="Embedding backend.")
    parser.add_argument("--modes", default="dense,bm25,hybrid")
    parser.add_argument("--json", dest="json_out", default=None, help="Write all summaries to this file.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("pymilvus", "grpc", "milvus_lite"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)

    overrides: dict = {"vector_db": {"uri": args.db}, "llm": None}
    if args.backend:
        overrides["embedding"] = {"provider": "sentence_transformers", "backend": args.backend}
    settings = load_settings(None, overrides)
    dataset = load_dataset(args.dataset)
    results: dict = {"dataset": dataset.name, "questions": len(dataset.questions[:args.limit] if args.limit
                                                                  else dataset.questions), "modes": {}}
    with DeepSearcher(settings) as app:
        t0 = time.perf_counter()
        _ = app.embedder.dimension  # model load is not part of the ingestion time
        results["model_load_seconds"] = time.perf_counter() - t0
        for mode in args.modes.split(","):
            harness = EvalHarness(app, dataset, Path(args.out) / f"{dataset.name}-{mode}", mode="retrieve",
                                  retrieval=mode, limit=args.limit, collection=args.collection)
            summary = harness.run()
            if harness.load_summary is not None and "load" not in results:
                ls = harness.load_summary
                results["load"] = {"seconds": ls.seconds, "embed_seconds": ls.embed_seconds,
                                   "chunks_written": ls.chunks_written,
                                   "status": [f.status for f in ls.files]}
                print(f"load: {ls.chunks_written} chunks in {ls.seconds:.1f} s "
                      f"({ls.embed_seconds:.1f} s embedding)", flush=True)
            results["modes"][mode] = summary.to_dict()
            ra, rc = summary.recall_all, summary.recall_complete
            print(f"{mode:7s} all(n={summary.n_recall_all}): " + " ".join(f"R@{k}={ra[k]:.3f}" for k in ra)
                  + f" | complete(n={summary.n_recall_complete}): " + " ".join(f"R@{k}={rc[k]:.3f}" for k in rc)
                  + f" | p50 {summary.seconds_p50 * 1000:.1f} ms p95 {summary.seconds_p95 * 1000:.1f} ms",
                  flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
