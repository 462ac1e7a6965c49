"""Retrieval latency (embed + search, p50/p95, CPU) and HNSW recall vs collection size, on three Milvus engines.

Usage (one run, every engine, written to one JSON file and the plot):
    nice -n 10 python scripts/bench_retrieval.py --engines lite-3,lite-2,server --sizes 100000,1000000 \
        --lite-max-size 100000 --json /tmp/bench.json --plot docs/latency_vs_size.png

Engines, each run in its own subprocess of this script (``--engine NAME``):
  lite-3  milvus-lite 3.x (the default install; pure Python, FLAT = exact search);
  lite-2  milvus-lite 2.x (C++, FLAT), imported from ``--lite2`` (default ``.venv/milvus-lite-2``, which
          scripts/test.sh installs) put first on PYTHONPATH;
  server  the embedded Milvus 2.3.5 standalone (PyPI ``milvus``; tests/integration/milvus_server.py starts it in
          ``--dir``, auth off), HNSW with ``--hnsw-m``/``--hnsw-ef-construction``; or any server given by
          ``--uri``. Its process is a child of the engine process, so its CPU time counts.

Collections: the real 2WikiMultiHopQA corpus (``--corpus``; 6,119 passages, split by the product's splitter and
embedded by the bundled model once, cached in ``--dir``) plus SYNTHETIC filler up to the size: vectors drawn from a
Gaussian with the real embeddings' mean and covariance, then L2-normalised (so they occupy the same cone as real
MiniLM embeddings, unlike uniform random vectors), and texts of 60 words drawn from a Zipf(1.1) distribution over a
50,000-word vocabulary (realistic BM25 posting lists). Each collection is made by ``MilvusStore.create_collection``.
Queries: the 2Wiki questions (``--questions``), embedded by the bundled model inside the timed part, top_k=5, one at
a time after 10 warm-up queries; the BM25 side of hybrid gets the question plus 4 vocabulary words. Hybrid only
where the engine has full-text search (not the 2.3.5 server). CPU per query = this process (embed, plus search on
the in-process 3.x engine) + the engine's child processes (Lite 2.x's ``milvus``, the server), the latter from
psutil in 10 ms ticks, so only as a mean.

Recall@10: for the measured questions, the engine's top 10 (search only) against the exact top 10 by brute-force
cosine over every stored vector in numpy; on the server for each ``--ef-sweep`` value, with search p50/p95. The
latency runs on the server use the smallest swept ef whose recall@10 reaches ``--recall-target`` (0.98).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DIM = 384
VOCAB = 50_000
WORDS_PER_TEXT = 60
BATCH = 1_000  # rows per insert (Milvus Lite 2.x inserts ~10x slower in batches of 5,000)
QA = REPO.parent / "shared/data/qa/2wikimultihopqa_hipporag"


def pseudo_words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=rng.integers(4, 10))) for _ in range(n)]


def zipf_texts(n: int, vocab: list[str], rng: np.random.Generator, words: int = WORDS_PER_TEXT) -> list[str]:
    ranks = np.minimum(rng.zipf(1.1, size=(n, words)), len(vocab)) - 1
    return [" ".join(vocab[i] for i in row) for row in ranks]


def percentile_ms(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000, q))


def children_cpu_seconds() -> float:
    """CPU seconds used so far by this process's live children (Lite 2.x's ``milvus``, the embedded server)."""
    import psutil

    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def embedder() -> Any:
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.embedding.options import SentenceTransformersOptions

    model = SentenceTransformersEmbedder(SentenceTransformersOptions())
    _ = model.dimension
    return model


# --- data ----------------------------------------------------------------------------------------------------------
def real_chunks(corpus: Path, cache: Path) -> tuple[np.ndarray, list[str]]:
    """The corpus split by the product's splitter (240/32 tokens) and embedded by the bundled model (cached)."""
    if cache.is_file():
        data = np.load(cache, allow_pickle=False)
        return data["vectors"], [str(t) for t in data["texts"]]
    from deepsearcher.ingest.splitter import Splitter

    model = embedder()
    splitter = Splitter(240, 32, tokenizer=model.tokenizer(), model_max_tokens=model.max_tokens)
    texts = [chunk for p in json.loads(corpus.read_text(encoding="utf-8"))
             for chunk in splitter.split_text(f"{p['title']}\n{p['text']}")]
    start = time.perf_counter()
    vectors = np.asarray(model.embed_documents(texts), dtype=np.float32)
    print(f"embedded {len(texts)} corpus chunks in {time.perf_counter() - start:.0f} s", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, vectors=vectors, texts=np.array(texts))
    return vectors, texts


class Filler:
    """Unit vectors from N(mean, cov) of the real embeddings, and Zipf texts; deterministic per seed."""

    def __init__(self, real: np.ndarray, seed: int) -> None:
        self.mean = real.mean(axis=0)
        self.chol = np.linalg.cholesky(np.cov(real, rowvar=False) + 1e-6 * np.eye(real.shape[1]))
        self.rng = np.random.default_rng(seed)
        self.vocab = pseudo_words(VOCAB, np.random.default_rng(0))

    def vectors(self, n: int) -> np.ndarray:
        out = (self.mean + self.rng.standard_normal((n, self.mean.size)) @ self.chol.T).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def texts(self, n: int) -> list[str]:
        return zipf_texts(n, self.vocab, self.rng)


def fill(store: Any, name: str, size: int, real: np.ndarray, real_texts: list[str], filler: Filler) -> np.ndarray:
    """Insert ``size`` rows (real chunks first, then filler); returns every stored vector, row i = id i."""
    stored = np.empty((size, DIM), dtype=np.float32)
    start = time.perf_counter()
    for offset in range(0, size, BATCH):
        n = min(BATCH, size - offset)
        take = max(0, min(n, len(real) - offset))
        vectors = np.concatenate([real[offset:offset + take], filler.vectors(n - take)])
        texts = real_texts[offset:offset + take] + filler.texts(n - take)
        stored[offset:offset + n] = vectors
        rows = [{"id": f"{offset + i:012d}", "vector": vectors[i].tolist(), "text": texts[i],
                 "source": f"bench://{(offset + i) // 20}", "title": f"doc {(offset + i) // 20}", "page": -1,
                 "chunk_index": (offset + i) % 20, "doc_hash": "bench", "doc_chunks": 20, "metadata": {}}
                for i in range(n)]
        store.client.insert(name, rows)
        if (offset + n) % 100_000 == 0:
            print(f"  inserted {offset + n} in {time.perf_counter() - start:.0f} s", flush=True)
    return stored


def exact_top(stored: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Brute-force cosine top-k row indices, shape (len(queries), k), in blocks of 100k rows."""
    best_s = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, len(stored), 100_000):
        scores = queries @ stored[start:start + 100_000].T
        top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        best_s = np.concatenate([best_s, np.take_along_axis(scores, top, axis=1)], axis=1)
        best_i = np.concatenate([best_i, top + start], axis=1)
        keep = np.argsort(-best_s, axis=1)[:, :k]
        best_s, best_i = np.take_along_axis(best_s, keep, axis=1), np.take_along_axis(best_i, keep, axis=1)
    return best_i


# --- one engine ----------------------------------------------------------------------------------------------------
def wait_indexed(store: Any, name: str, total: int, timeout_s: float = 7200) -> None:
    """Wait until the server's HNSW index covers every row, then reload so queries use the indexed segments."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = store.client.describe_index(name, "vector") or {}
        if int(info.get("indexed_rows", 0)) >= total and int(info.get("pending_index_rows", 0)) == 0:
            break
        time.sleep(2)
    store.client.release_collection(name)
    store.client.load_collection(name)


def latency(store: Any, name: str, model: Any, questions: list[str], extra: list[str], mode: str) -> dict:
    """Embed + search per query (top 5), wall and CPU, after 10 warm-up queries."""
    embed_s, search_s, total_s, cpu_s = [], [], [], []
    child0 = children_cpu_seconds()
    for i, q in enumerate(questions):
        if i == 10:
            child0 = children_cpu_seconds()
        c0, t0 = time.process_time(), time.perf_counter()
        vector = model.embed_query(q)
        t1 = time.perf_counter()
        store.search(name, vector, f"{q} {extra[i]}", 5, mode=mode)
        t2, c1 = time.perf_counter(), time.process_time()
        if i >= 10:
            embed_s.append(t1 - t0)
            search_s.append(t2 - t1)
            total_s.append(t2 - t0)
            cpu_s.append(c1 - c0)
    engine_ms = (children_cpu_seconds() - child0) * 1000 / len(cpu_s)
    return {"p50_ms": percentile_ms(total_s, 50), "p95_ms": percentile_ms(total_s, 95),
            "search_p50_ms": percentile_ms(search_s, 50), "search_p95_ms": percentile_ms(search_s, 95),
            "embed_p50_ms": percentile_ms(embed_s, 50), "cpu_p50_ms": percentile_ms(cpu_s, 50),
            "cpu_p95_ms": percentile_ms(cpu_s, 95), "engine_process_cpu_mean_ms": engine_ms,
            "cpu_mean_ms": float(np.mean(cpu_s)) * 1000 + engine_ms}


def recall_at_10(store: Any, name: str, queries: np.ndarray, exact: np.ndarray) -> dict:
    """The engine's dense top 10 (search only, with the store's current ef) against the exact top 10."""
    found, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = store.search(name, q, "", 10, mode="dense")
        times.append(time.perf_counter() - t0)
        found.append({int(h.chunk.id) for h in hits})
    recall = float(np.mean([len(f & set(e.tolist())) / 10 for f, e in zip(found, exact)]))
    return {"recall_at_10": recall, "search_p50_ms": percentile_ms(times, 50),
            "search_p95_ms": percentile_ms(times, 95)}


def open_store(args: argparse.Namespace, folder: Path) -> tuple[Any, Any]:
    """(MilvusStore, embedded server or None) for ``args.engine``."""
    from deepsearcher.vectordb.milvus import MilvusStore
    from deepsearcher.vectordb.schema import HnswParams

    if args.engine != "server":
        return MilvusStore(str(folder / "milvus.db")), None
    hnsw = HnswParams(m=args.hnsw_m, ef_construction=args.hnsw_ef_construction)
    if args.uri:
        return MilvusStore(args.uri, hnsw=hnsw), None
    from tests.integration.milvus_server import EmbeddedMilvus

    server = EmbeddedMilvus(folder / "server", auth=False).start()
    return MilvusStore(server.uri, hnsw=hnsw), server


def run_engine(args: argparse.Namespace) -> dict:
    import logging
    import shutil

    import psutil

    from deepsearcher.vectordb.schema import HnswParams

    logging.basicConfig(level=logging.WARNING)
    real, real_texts = real_chunks(Path(args.corpus), Path(args.dir) / "real_chunks.npz")
    model = embedder()
    questions = [q["question"] for q in json.loads(Path(args.questions).read_text(encoding="utf-8"))]
    questions = questions[:args.queries + 10]
    queries = np.stack([model.embed_query(q) for q in questions[10:]]).astype(np.float32)
    folder = Path(args.dir) / args.engine
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    store, server = open_store(args, folder)
    caps = store.capabilities
    result: dict = {"engine": f"{args.engine} ({caps.version}, {caps.index_type})",
                    "capabilities": caps.__dict__, "sizes": {}, "queries": args.queries, "top_k": 5,
                    "hnsw": {"M": args.hnsw_m, "efConstruction": args.hnsw_ef_construction},
                    "recall_target": args.recall_target}
    try:
        for size in args.sizes:
            filler = Filler(real, seed=size)
            extra = zipf_texts(len(questions), filler.vocab, np.random.default_rng(1), words=4)
            name = f"bench_{size}"
            if store.has_collection(name):
                store.drop_collection(name)
            store.create_collection(name, description="benchmark", model_name="bench", dim=DIM)
            print(f"{args.engine} n={size}: inserting ...", flush=True)
            t0 = time.perf_counter()
            stored = fill(store, name, size, real, real_texts, filler)
            entry: dict = {"insert_seconds": time.perf_counter() - t0, "real_chunks": min(size, len(real))}
            t0 = time.perf_counter()
            store.seal(name)
            if caps.index_type == "HNSW":
                wait_indexed(store, name, size)
            entry["flush_index_load_seconds"] = time.perf_counter() - t0
            entry["count"] = store.count(name)
            exact = exact_top(stored, queries, 10)
            entry["recall"] = {}
            for ef in (args.ef_sweep if caps.index_type == "HNSW" else [None]):
                if ef is not None:
                    store.hnsw = HnswParams(m=args.hnsw_m, ef_construction=args.hnsw_ef_construction, ef=ef)
                entry["recall"][str(ef or "exact")] = recall_at_10(store, name, queries, exact)
                print(f"{args.engine} n={size} ef={ef}: {entry['recall'][str(ef or 'exact')]}", flush=True)
            if caps.index_type == "HNSW":  # latency at the smallest ef that reaches the recall target
                good = [ef for ef in args.ef_sweep if entry["recall"][str(ef)]["recall_at_10"] >= args.recall_target]
                entry["ef"] = min(good) if good else max(args.ef_sweep)
                store.hnsw = HnswParams(m=args.hnsw_m, ef_construction=args.hnsw_ef_construction, ef=entry["ef"])
            for mode in ("dense", "hybrid"):
                if mode in caps.modes:
                    entry[mode] = latency(store, name, model, questions, extra, mode)
                    print(f"{args.engine} n={size} {mode}: {entry[mode]}", flush=True)
            entry["rss_mb"] = psutil.Process().memory_info().rss / 1e6
            entry["engine_rss_mb"] = sum(c.memory_info().rss for c in psutil.Process().children(recursive=True)) / 1e6
            entry["disk_mb"] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6
            entry["load_average"] = os.getloadavg()
            result["sizes"][str(size)] = entry
            store.drop_collection(name)
            del stored
    finally:
        store.close()
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return result


# --- driver --------------------------------------------------------------------------------------------------------
def run_all(args: argparse.Namespace, argv: list[str]) -> dict:
    """Each engine in its own subprocess (the Lite engines share a package name), results in one dict."""
    real_chunks(Path(args.corpus), Path(args.dir) / "real_chunks.npz")  # embed the corpus once for all engines
    runs = []
    for engine in args.engines:
        sizes = [s for s in args.sizes if engine == "server" or s <= args.lite_max_size]
        if not sizes:
            continue
        out = Path(args.dir) / f"{engine}.json"
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), HF_HUB_OFFLINE="1",
                   DO_NOT_TRACK="1", PYTHONPATH=os.pathsep.join(
                       ([args.lite2] if engine == "lite-2" else []) + [str(REPO)]))
        cmd = [sys.executable, __file__, *argv, "--engine", engine, "--sizes", ",".join(map(str, sizes)),
               "--json", str(out)]
        print(f"== {engine}: {' '.join(cmd[1:])}", flush=True)
        subprocess.run(cmd, env=env, check=True)
        runs.append(json.loads(out.read_text()))
    return {"runs": runs, "cpu_count": os.cpu_count(), "command": " ".join(sys.argv)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default="lite-3,lite-2,server")
    parser.add_argument("--engine", default=None, help=argparse.SUPPRESS)  # one engine, in a subprocess
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--lite-max-size", type=int, default=100_000, help="Lite engines run sizes up to this.")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dir", default="/tmp/bench_retrieval", help="Work folder (collections, corpus cache).")
    parser.add_argument("--uri", default=None, help="A running Milvus server for the server engine.")
    parser.add_argument("--lite2", default=str(REPO / ".venv" / "milvus-lite-2"))
    parser.add_argument("--corpus", default=str(QA / "2wikimultihopqa_corpus.json"))
    parser.add_argument("--questions", default=str(QA / "2wikimultihopqa_questions_900.json"))
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--hnsw-ef-construction", type=int, default=200)
    parser.add_argument("--ef-sweep", default="32,64,128,256,512", help="HNSW ef values for the recall runs.")
    parser.add_argument("--recall-target", type=float, default=0.98,
                        help="Latency is measured at the smallest swept ef whose recall@10 reaches this.")
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--plot", default=None, help="Write the latency plot here (e.g. docs/latency_vs_size.png).")
    args = parser.parse_args()
    argv = [a for a in sys.argv[1:]]
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.engines = args.engines.split(",")
    args.ef_sweep = [int(s) for s in args.ef_sweep.split(",")]
    if args.engine:
        result = run_engine(args)
    else:
        for flag in ("--json", "--plot", "--sizes", "--engines"):  # the driver sets these per engine
            while flag in argv:
                i = argv.index(flag)
                del argv[i:i + 2]
        result = run_all(args, argv)
        if args.plot:
            sys.path.insert(0, str(REPO / "scripts"))
            from eval_plots import plot_latency

            plot_latency(result["runs"], Path(args.plot))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
