"""Embedding backends side by side: torch vs ONNX fp32 vs ONNX int8 — chunks/s and retrieval Recall@k on 2Wiki.

Usage:
    python scripts/bench_onnx.py ../shared/data/qa/2wikimultihopqa_hipporag [--lists /tmp/eval/lists.json] \
        [--db /tmp/eval/milvus.db] [--json results.json] [--ingest-dir /tmp/bench_onnx_ingest]

1. Splits the corpus exactly as ``deepsearcher load`` does (same loader, splitter and chunk ids).
2. Throughput: embeds a sample of the chunks (``--sample``, spread over the corpus) with each backend. The machine is
   shared, so the sample is cut into ``--blocks`` blocks and the backends take turns on each block: every backend
   sees the same load drift, and the ratio is what to read. The default blocks hold 256 chunks, the size of the
   embed calls of ``load`` (``ingest.batch_size``): both backends sort a call by length, so the block size sets
   the padding.
3. Embeds the questions one at a time with each backend (query latency p50/p95).
4. Recall@k: the torch chunk vectors are read back from the collection that ``scripts/eval_retrieval.py`` loaded
   (``--db``; without it they are embedded here), the chunks are embedded in full with ONNX int8; dense Recall@k by
   exact cosine search in numpy (what the FLAT index of Milvus Lite returns), hybrid Recall@k by fusing that dense
   list with the BM25 lists fetched by ``scripts/eval_fusion.py`` (BM25 does not depend on the embedder) through
   ``fuse_hybrid``, as the store does.
   Also "mixed": chunks embedded by torch, queries by ONNX int8 (a collection built with one backend, queried with
   the other). ONNX fp32 is checked for equality with torch (cosine) rather than scored again.
5. With ``--ingest-dir``: the full ``DeepSearcher.load`` of the corpus into a fresh Milvus Lite file, once per backend
   (ONNX int8 first, then torch), timed end to end.
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

from deepsearcher.eval import load_dataset, recall_at_k
from deepsearcher.eval.metrics import mean

KS = (1, 2, 5, 10)


def build_embedders() -> dict:
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.embedding.options import SentenceTransformersOptions

    return {
        "torch": SentenceTransformersEmbedder(SentenceTransformersOptions(backend="torch")),
        "onnx_fp32": SentenceTransformersEmbedder(SentenceTransformersOptions(backend="onnx", onnx_int8=False)),
        "onnx_int8": SentenceTransformersEmbedder(SentenceTransformersOptions(backend="onnx", onnx_int8=True)),
    }


def torch_vectors(args: argparse.Namespace, chunks: list) -> np.ndarray:
    """The stored (torch) vectors of ``chunks``, read from the eval collection, in chunk order."""
    from deepsearcher.eval import collection_name
    from deepsearcher.vectordb.milvus import MilvusStore

    store = MilvusStore(args.db)
    name = args.collection or collection_name("2wikimultihopqa")
    store._ready(name)
    by_id = {}
    ids = [c.id for c in chunks]
    for start in range(0, len(ids), 500):
        for row in store.client.get(name, ids=ids[start:start + 500], output_fields=["vector"]):
            by_id[row["id"]] = row["vector"]
    store.close()
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise SystemExit(f"{len(missing)} chunks are not in {name} (load the corpus with eval_retrieval.py first)")
    return np.asarray([by_id[i] for i in ids], dtype=np.float32)


def split_corpus(corpus: Path, embedder) -> list:
    from deepsearcher.ingest.ids import file_hash
    from deepsearcher.ingest.loaders import load_path
    from deepsearcher.ingest.splitter import Splitter
    from deepsearcher.settings import IngestSettings
    from deepsearcher.ingest.options import LoaderOptions

    ing = IngestSettings()
    splitter = Splitter(ing.chunk_size_tokens, ing.chunk_overlap_tokens, tokenizer=embedder.tokenizer(),
                        model_max_tokens=embedder.max_tokens)
    return splitter.split(load_path(corpus, LoaderOptions()), file_hash(corpus))


def recalls(rankings: list[list[str]], questions: list) -> dict:
    out = {}
    for subset, keep in (("complete", lambda q: q.gold_complete), ("all", lambda q: bool(q.gold_titles))):
        pairs = [(q, r) for q, r in zip(questions, rankings) if keep(q)]
        out[subset] = {k: mean(recall_at_k(r, q.gold_titles, k) for q, r in pairs) for k in KS}
        out[subset]["n"] = len(pairs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--lists", default=None, help="BM25/dense lists from scripts/eval_fusion.py (for hybrid).")
    parser.add_argument("--db", default=None, help="Milvus Lite file holding the torch-embedded eval collection.")
    parser.add_argument("--collection", default=None)
    parser.add_argument("--sample", type=int, default=1280, help="Chunks embedded by every backend for chunks/s.")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--ingest-dir", default=None)
    parser.add_argument("--ingest-only", action="store_true", help="Only step 5.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("pymilvus", "grpc", "milvus_lite"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)

    from deepsearcher.types import Chunk, Hit
    from deepsearcher.vectordb.fusion import fuse_hybrid

    dataset = load_dataset(args.dataset)
    questions = dataset.questions
    embedders = build_embedders()
    results: dict = {"dataset": dataset.name, "backends": {}}
    for name, emb in embedders.items():
        t0 = time.perf_counter()
        _ = emb.dimension  # model load (and, for ONNX, the one-time export when not cached)
        results["backends"][name] = {"load_seconds": time.perf_counter() - t0}
    if args.ingest_only:
        if not args.ingest_dir:
            raise SystemExit("--ingest-only needs --ingest-dir")
        run_ingest(args, dataset, embedders, results)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
        return
    chunks = split_corpus(dataset.corpus, embedders["torch"])
    texts = [c.text for c in chunks]
    results["chunks"] = len(chunks)
    print(f"{len(chunks)} chunks from {dataset.corpus}", flush=True)

    # 2. throughput on a sample, interleaved by block
    sample = np.linspace(0, len(texts) - 1, min(args.sample, len(texts))).astype(int)
    seconds = dict.fromkeys(embedders, 0.0)
    sample_vectors: dict = {name: [] for name in embedders}
    blocks = np.array_split(sample, args.blocks)
    done = 0
    for b, idx in enumerate(blocks):
        block = [texts[i] for i in idx]
        done += len(block)
        for name, emb in (embedders.items() if b % 2 == 0 else reversed(list(embedders.items()))):
            t0 = time.perf_counter()
            sample_vectors[name].append(emb.embed_documents(block))
            seconds[name] += time.perf_counter() - t0
        print(f"block {b + 1}/{len(blocks)}: " + ", ".join(f"{n} {done / s:.1f}/s" for n, s in seconds.items()),
              flush=True)
    for name in embedders:
        vecs = np.vstack(sample_vectors[name])
        cos = (vecs * np.vstack(sample_vectors["torch"])).sum(axis=1)
        results["backends"][name].update({"sample_chunks": int(len(sample)), "embed_seconds": seconds[name],
                                          "chunks_per_second": len(sample) / seconds[name],
                                          "cosine_to_torch": {"mean": float(cos.mean()), "min": float(cos.min())}})
    results["threads"] = {"omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "load_average": os.getloadavg()}

    # full chunk matrices: torch from the collection (or embedded here), int8 embedded here
    matrix = {"torch": torch_vectors(args, chunks) if args.db else embedders["torch"].embed_documents(texts),
              "onnx_int8": None}
    t0 = time.perf_counter()
    matrix["onnx_int8"] = embedders["onnx_int8"].embed_documents(texts)
    results["backends"]["onnx_int8"]["full_corpus_embed_seconds"] = time.perf_counter() - t0
    print(f"int8 embedded all {len(texts)} chunks in {time.perf_counter() - t0:.0f} s", flush=True)

    # 3. query latency and query vectors
    qvecs: dict = {}
    for name, emb in embedders.items():
        lat = []
        rows = []
        for q in (questions if name in matrix else questions[:100]):  # fp32 ONNX: latency only
            t0 = time.perf_counter()
            rows.append(emb.embed_query(q.question))
            lat.append(time.perf_counter() - t0)
        qvecs[name] = np.vstack(rows)
        results["backends"][name]["query_embed_ms"] = {"p50": float(np.percentile(lat, 50) * 1000),
                                                       "p95": float(np.percentile(lat, 95) * 1000)}

    # 4. recall
    lists = {x["id"]: x for x in json.loads(Path(args.lists).read_text(encoding="utf-8"))} if args.lists else {}
    by_id = {c.id: c for c in chunks}

    def dense_hits(q_matrix: np.ndarray, c_matrix: np.ndarray, depth: int) -> list[list[Hit]]:
        scores = q_matrix @ c_matrix.T
        top = np.argsort(-scores, axis=1)[:, :depth]
        return [[Hit(chunk=chunks[j], score=float(scores[i, j]), collection="c") for j in row]
                for i, row in enumerate(top)]

    def bm25_hits(qid: str) -> list[Hit]:
        # abs: lists fetched before MilvusStore.search normalised the sign of Milvus Lite's BM25 scores
        return [Hit(chunk=by_id.get(cid) or Chunk(cid, "", "", title, None, 0, ""), score=abs(score),
                    collection="c") for cid, title, score in lists[qid]["bm25"]]

    combos = {"torch": ("torch", "torch"), "onnx_int8": ("onnx_int8", "onnx_int8"),
              "mixed: torch chunks, int8 queries": ("torch", "onnx_int8")}
    results["recall"] = {}
    for label, (cname, qname) in combos.items():
        dense = dense_hits(qvecs[qname], matrix[cname], 50)
        entry = {"dense": recalls([[h.chunk.title for h in d] for d in dense], questions)}
        if lists:
            fused = [fuse_hybrid(d, bm25_hits(q.id), 10) for q, d in zip(questions, dense)]
            entry["hybrid"] = recalls([[h.chunk.title for h in f] for f in fused], questions)
        results["recall"][label] = entry
        line = " | ".join(f"{mode} R@2 {v['complete'][2]:.3f} R@5 {v['complete'][5]:.3f}" for mode, v in entry.items())
        print(f"{label:36s} (complete gold) {line}", flush=True)
    for name, r in results["backends"].items():
        print(f"{name}: {r['chunks_per_second']:.1f} chunks/s, query embed p50 {r['query_embed_ms']['p50']:.1f} ms, "
              f"cos to torch mean {r['cosine_to_torch']['mean']:.4f} min {r['cosine_to_torch']['min']:.4f}",
              flush=True)
    if args.ingest_dir:
        run_ingest(args, dataset, embedders, results)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")


def run_ingest(args: argparse.Namespace, dataset, embedders: dict, results: dict) -> None:
    """Step 5: the full ``DeepSearcher.load`` of the corpus into a fresh Lite file per backend (int8 first)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    results["ingest"] = {"load_average_start": os.getloadavg(),
                         "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    for name, backend in (("onnx_int8", {"backend": "onnx", "onnx_int8": True}), ("torch", {"backend": "torch"})):
        folder = Path(args.ingest_dir) / name
        shutil.rmtree(folder, ignore_errors=True)
        settings = load_settings(None, {"vector_db": {"uri": str(folder / "milvus.db")}, "llm": None,
                                        "embedding": {"provider": "sentence_transformers", **backend}})
        with DeepSearcher(settings) as app:
            app._embedder = embedders[name]  # already loaded: time the load, not the model start
            summary = app.load([str(dataset.corpus)], "ingest_bench", "2Wiki corpus")
        results["ingest"][name] = {"seconds": summary.seconds, "embed_seconds": summary.embed_seconds,
                                   "chunks_written": summary.chunks_written, "load_average": os.getloadavg()}
        print(f"ingest {name}: {summary.chunks_written} chunks in {summary.seconds:.1f} s "
              f"({summary.embed_seconds:.1f} s embedding)", flush=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()