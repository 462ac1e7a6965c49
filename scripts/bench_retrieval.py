"""Retrieval latency (embed + search, p50/p95) vs collection size, dense and hybrid, in Milvus Lite.

Usage:
    python scripts/bench_retrieval.py --sizes 10000,100000,1000000 --queries 200 --dir /tmp/bench_retrieval \
        [--json results.json] [--uri http://host:19530]

The collections are SYNTHETIC: random unit 384-d vectors (the bundled model's dimension) and texts of 60 words drawn
from a Zipf(1.1) distribution over a 50,000-word vocabulary, so that the BM25 index has realistic posting lists. Each
collection is created by the product's own ``MilvusStore.create_collection`` (same schema and indexes: FLAT + BM25 on
Lite, HNSW + BM25 on a server). The Lite engine is whichever milvus-lite the interpreter imports: 3.x (pure Python,
the default install) or 2.x (C++; e.g. ``PYTHONPATH=.venv/milvus-lite-2``, which scripts/test.sh installs). Queries are real: the 2WikiMultiHopQA questions embedded by the bundled model (timed,
that is the "embed" part), searched with top_k=5; the BM25 side of hybrid gets the question text plus 4 vocabulary
words (so it matches the synthetic texts). Latency per query = embed + search, measured one query at a time after 10
warm-up queries; the process CPU time of each query is recorded too (Milvus Lite serves in-process, so on a shared,
oversubscribed machine CPU time is the better estimate of the latency on an idle core). Milvus Lite 2.x serves from a
``milvus`` subprocess: its CPU time is added to the mean CPU per query (psutil; ticks of 10 ms, so only the mean).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np

DIM = 384
VOCAB = 50_000
WORDS_PER_TEXT = 60
BATCH = 1_000  # rows per insert (Milvus Lite 2.x inserts ~10x slower in batches of 5,000)


def pseudo_words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=rng.integers(4, 10))) for _ in range(n)]


def zipf_texts(n: int, vocab: list[str], rng: np.random.Generator, words: int = WORDS_PER_TEXT) -> list[str]:
    ranks = np.minimum(rng.zipf(1.1, size=(n, words)), len(vocab)) - 1
    return [" ".join(vocab[i] for i in row) for row in ranks]


def fill(store, name: str, size: int, vocab: list[str], seed: int, log_every: int = 100_000) -> float:
    """Insert ``size`` synthetic chunks in batches; returns seconds."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for offset in range(0, size, BATCH):
        n = min(BATCH, size - offset)
        vectors = rng.standard_normal((n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = zipf_texts(n, vocab, rng)
        rows = [{"id": f"{offset + i:012d}", "vector": vectors[i].tolist(), "text": texts[i],
                 "source": f"synthetic://{(offset + i) // 20}", "title": f"doc {(offset + i) // 20}", "page": -1,
                 "chunk_index": (offset + i) % 20, "doc_hash": "synthetic", "doc_chunks": 20, "metadata": {}}
                for i in range(n)]
        store.client.insert(name, rows)
        if (offset + n) % log_every == 0:
            print(f"  inserted {offset + n} in {time.perf_counter() - start:.0f} s", flush=True)
    return time.perf_counter() - start


def children_cpu_seconds() -> float:
    """CPU seconds used so far by this process's children: Milvus Lite 2.x serves from a ``milvus`` subprocess.

    Read from /proc by psutil, in clock ticks (10 ms): good for a mean over many queries, not for percentiles.
    """
    try:
        import psutil
    except ModuleNotFoundError:
        return 0.0
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def percentile_ms(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dir", default="/tmp/bench_retrieval", help="Folder for the Lite files (one per size).")
    parser.add_argument("--uri", default=None, help="A Milvus server URI instead of Lite files.")
    parser.add_argument("--questions", default=str(Path(__file__).resolve().parent.parent.parent / "shared/data/qa/"
                                                   "unified/multihop_unified_1100.jsonl"))
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--keep", action="store_true", help="Keep the Lite files.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("pymilvus", "grpc", "milvus_lite"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)

    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.settings import SentenceTransformersEmbedding
    from deepsearcher.vectordb.milvus import MilvusStore

    embedder = SentenceTransformersEmbedder(SentenceTransformersEmbedding())
    _ = embedder.dimension
    rng = np.random.default_rng(0)
    vocab = pseudo_words(VOCAB, rng)
    questions = [json.loads(line)["question"] for line in open(args.questions, encoding="utf-8")][:args.queries + 10]
    extra = zipf_texts(len(questions), vocab, rng, words=4)

    import torch

    from importlib.metadata import PackageNotFoundError, version

    try:
        engine = f"milvus-lite {version('milvus-lite')}"
    except PackageNotFoundError:
        engine = "milvus-lite not installed"
    print(f"engine: {args.uri or engine}", flush=True)
    results: dict = {"synthetic": True, "dim": DIM, "top_k": 5, "queries": args.queries, "sizes": {},
                     "engine": args.uri or engine,
                     "torch_threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                     "load_average_start": os.getloadavg()}
    for size in [int(s) for s in args.sizes.split(",")]:
        folder = Path(args.dir) / f"n{size}"
        if folder.exists() and not args.uri:
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        store = MilvusStore(args.uri or str(folder / "milvus.db"))
        name = f"bench_{size}"
        if store.has_collection(name):
            store.drop_collection(name)
        store.create_collection(name, description="synthetic benchmark", model_name="synthetic", dim=DIM)
        print(f"n={size}: inserting ...", flush=True)
        insert_s = fill(store, name, size, vocab, seed=size)
        t0 = time.perf_counter()
        store.client.flush(name)
        count = store.count(name)
        ready_s = time.perf_counter() - t0
        entry: dict = {"insert_seconds": insert_s, "count": count, "flush_and_load_seconds": ready_s,
                       "inserts_per_second": size / insert_s}
        if not args.uri:
            entry["disk_mb"] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6
        try:
            import psutil

            entry["rss_mb"] = psutil.Process(os.getpid()).memory_info().rss / 1e6
        except ModuleNotFoundError:
            pass
        for mode in ("dense", "hybrid"):
            embed_s, search_s, total_s, cpu_s = [], [], [], []
            child0 = children_cpu_seconds()
            for i, q in enumerate(questions):
                if i == 10:
                    child0 = children_cpu_seconds()
                c0 = time.process_time()
                t0 = time.perf_counter()
                vector = embedder.embed_query(q)
                t1 = time.perf_counter()
                store.search(name, vector, f"{q} {extra[i]}", 5, mode=mode)
                t2 = time.perf_counter()
                c1 = time.process_time()
                if i >= 10:  # warm-up
                    embed_s.append(t1 - t0)
                    search_s.append(t2 - t1)
                    total_s.append(t2 - t0)
                    cpu_s.append(c1 - c0)  # this process: embed, plus search when the engine is in-process (3.x)
            engine_cpu_ms = (children_cpu_seconds() - child0) * 1000 / max(1, len(cpu_s))
            entry[mode] = {"p50_ms": percentile_ms(total_s, 50), "p95_ms": percentile_ms(total_s, 95),
                           "search_p50_ms": percentile_ms(search_s, 50), "search_p95_ms": percentile_ms(search_s, 95),
                           "embed_p50_ms": percentile_ms(embed_s, 50), "embed_p95_ms": percentile_ms(embed_s, 95),
                           "cpu_p50_ms": percentile_ms(cpu_s, 50), "cpu_p95_ms": percentile_ms(cpu_s, 95),
                           "cpu_mean_ms": float(np.mean(cpu_s)) * 1000 + engine_cpu_ms,
                           "engine_process_cpu_mean_ms": engine_cpu_ms}
            print(f"n={size} {mode}: embed+search p50 {entry[mode]['p50_ms']:.1f} ms p95 "
                  f"{entry[mode]['p95_ms']:.1f} ms (search p50 {entry[mode]['search_p50_ms']:.1f} / p95 "
                  f"{entry[mode]['search_p95_ms']:.1f} ms); CPU p50 {entry[mode]['cpu_p50_ms']:.1f} / p95 "
                  f"{entry[mode]['cpu_p95_ms']:.1f} ms; mean CPU incl. an engine subprocess "
                  f"{entry[mode]['cpu_mean_ms']:.1f} ms", flush=True)
        entry["load_average"] = os.getloadavg()
        print(f"n={size}: {entry}", flush=True)
        results["sizes"][str(size)] = entry
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
        if args.uri:
            store.drop_collection(name)
        store.close()
        if not args.keep and not args.uri:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
