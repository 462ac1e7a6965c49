"""Compare ways of fusing dense and BM25 rankings, offline, on an already loaded eval collection.

Usage:
    python scripts/eval_fusion.py ../shared/data/qa/2wikimultihopqa_hipporag --db /tmp/eval/milvus.db \
        [--collection eval_2wikimultihopqa] [--depth 50] [--lists lists.json] [--json fusion.json]

Fetches, once per question, the dense and the BM25 top-``depth`` chunks with their scores (cached in ``--lists``), then
scores fusion variants by Recall@2/@5 over the questions with complete gold titles:
- RRF (Cormack et al. 2009) with k and candidate depth, optionally weighted per list;
- convex combination of normalised scores (Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid
  Retrieval", ACM TOIS 2023): alpha * cosine + (1 - alpha) * BM25 / max BM25 of the query, a chunk missing from a
  list scoring that list's minimum.
The variant kept is implemented in ``MilvusStore.search`` (mode "hybrid"); its live Recall is measured by
``scripts/eval_retrieval.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from deepsearcher.eval import collection_name, load_dataset, recall_at_k
from deepsearcher.eval.metrics import mean


def fetch_lists(args: argparse.Namespace, questions: list) -> list[dict]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    settings = load_settings(None, {"vector_db": {"uri": args.db}, "llm": None})
    out = []
    with DeepSearcher(settings) as app:
        store = app.store
        for q in questions:
            vec = app.embedder.embed_query(q.question)
            dense = store.search(args.collection, vec, q.question, args.depth, mode="dense")
            bm25 = store.search(args.collection, None, q.question, args.depth, mode="bm25")
            out.append({"id": q.id,
                        "dense": [[h.chunk.id, h.chunk.title, h.score] for h in dense],
                        "bm25": [[h.chunk.id, h.chunk.title, h.score] for h in bm25]})
    return out


def rrf(lists: dict, k: int, depth: int, w_dense: float = 1.0, w_bm25: float = 1.0) -> list[str]:
    scores: dict[str, float] = {}
    titles: dict[str, str] = {}
    for name, weight in (("dense", w_dense), ("bm25", w_bm25)):
        for rank, (cid, title, _score) in enumerate(lists[name][:depth], start=1):
            scores[cid] = scores.get(cid, 0.0) + weight / (k + rank)
            titles[cid] = title
    return [titles[c] for c in sorted(scores, key=lambda c: -scores[c])]


def convex(lists: dict, alpha: float, depth: int) -> list[str]:
    dense = {cid: s for cid, _t, s in lists["dense"][:depth]}
    bm25 = {cid: abs(s) for cid, _t, s in lists["bm25"][:depth]}  # Milvus Lite reports BM25 as -score
    titles = {cid: t for name in ("dense", "bm25") for cid, t, _s in lists[name][:depth]}
    d_min = min(dense.values(), default=0.0)
    b_max = max(bm25.values(), default=0.0) or 1.0
    b_min = min(bm25.values(), default=0.0)
    fused = {cid: alpha * dense.get(cid, d_min) + (1 - alpha) * bm25.get(cid, b_min) / b_max for cid in titles}
    return [titles[c] for c in sorted(fused, key=lambda c: -fused[c])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--db", required=True)
    parser.add_argument("--collection", default=None)
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--lists", default=None, help="Cache file for the fetched rankings.")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("pymilvus", "grpc", "milvus_lite"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    dataset = load_dataset(args.dataset)
    args.collection = args.collection or collection_name(dataset.name)
    cache = Path(args.lists) if args.lists else None
    if cache and cache.is_file():
        lists = json.loads(cache.read_text(encoding="utf-8"))
    else:
        lists = fetch_lists(args, dataset.questions)
        if cache:
            cache.write_text(json.dumps(lists), encoding="utf-8")
    by_id = {q.id: q for q in dataset.questions}

    def score(ranker) -> dict:
        res = {}
        for subset, keep in (("complete", lambda q: q.gold_complete), ("all", lambda q: True)):
            rows = [(by_id[x["id"]], ranker(x)) for x in lists if keep(by_id[x["id"]])]
            res[subset] = {k: mean(recall_at_k(titles, q.gold_titles, k) for q, titles in rows) for k in (2, 5, 10)}
        return res

    variants: dict = {
        "dense": lambda x: [t for _c, t, _s in x["dense"]],
        "bm25": lambda x: [t for _c, t, _s in x["bm25"]],
    }
    for depth in (10, 20, 50):
        for k in (10, 60):
            variants[f"rrf k={k} depth={depth}"] = lambda x, k=k, d=depth: rrf(x, k, d)
    for w in (0.5, 0.7, 1.5, 2.0):
        variants[f"rrf k=60 depth=20 w_bm25={w}"] = lambda x, w=w: rrf(x, 60, 20, w_bm25=w)
    for alpha in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        for depth in (20, 50):
            variants[f"convex alpha={alpha} depth={depth}"] = lambda x, a=alpha, d=depth: convex(x, a, d)
    results = {}
    for name, ranker in variants.items():
        results[name] = score(ranker)
        c, a = results[name]["complete"], results[name]["all"]
        print(f"{name:34s} complete R@2 {c[2]:.3f} R@5 {c[5]:.3f} R@10 {c[10]:.3f} | all R@2 {a[2]:.3f} "
              f"R@5 {a[5]:.3f}", flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
