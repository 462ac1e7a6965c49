"""Embedding backends side by side: torch vs ONNX fp32 vs ONNX int8 — chunks/s and retrieval Recall@k on 2Wiki.

Usage:
    python scripts/bench_onnx.py ../shared/data/qa/2wikimultihopqa_hipporag --lists /tmp/eval/lists.json \
        [--blocks 8] [--json results.json] [--ingest-dir /tmp/bench_onnx_ingest]

1. Splits the corpus exactly as ``deepsearcher load`` does (same loader, splitter and chunk ids).
2. Embeds all chunks with each backend. The machine is shared, so the chunks are cut into ``--blocks`` blocks and the
   backends take turns on each block: every backend sees the same load drift, and the ratio is what to read.
3. Embeds the questions one at a time with each backend (query latency p50/p95).
4. Dense Recall@k per backend by exact cosine search in numpy (what the FLAT index of Milvus Lite returns), and hybrid
   Recall@k by fusing that dense list with the BM25 lists fetched from Milvus by ``scripts/eval_fusion.py`` (BM25 does
   not depend on the embedder), using the same fusion function as ``MilvusStore.search``. Also "mixed": chunks
   embedded by torch, queries by ONNX int8 (a collection built with one backend, queried with the other).
5. With ``--ingest-dir``: the full ``DeepSearcher.load`` of the corpus into a fresh Milvus Lite file, once per backend
   (ONNX int8 first, then torch), timed end to end.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from pathlib import Path

import numpy as np

from deepsearcher.eval import load_dataset, recall_at_k
from deepsearcher.eval.metrics import mean

KS = (1, 2, 5, 10)


def build_embedders() -> dict:
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.settings import SentenceTransformersEmbedding

    return {
        "torch": SentenceTransformersEmbedder(SentenceTransformersEmbedding()),
        "onnx_fp32": SentenceTransformersEmbedder(SentenceTransformersEmbedding(backend="onnx", onnx_int8=False)),
        "onnx_int8": SentenceTransformersEmbedder(SentenceTransformersEmbedding(backend="onnx", onnx_int8=True)),
    }


def split_corpus(corpus: Path, embedder) -> list:
    from deepsearcher.ingest.ids import file_hash
    from deepsearcher.ingest.loaders import load_path
    from deepsearcher.ingest.splitter import Splitter
    from deepsearcher.settings import IngestSettings, LoaderSettings

    ing = IngestSettings()
    splitter = Splitter(ing.chunk_size_tokens, ing.chunk_overlap_tokens, tokenizer=embedder.tokenizer(),
                        model_max_tokens=embedder.max_tokens)
    return splitter.split(load_path(corpus, LoaderSettings()), file_hash(corpus))


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
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--ingest-dir", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("pymilvus", "grpc", "milvus_lite"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)

    from deepsearcher.types import Chunk, Hit
    from deepsearcher.vectordb.milvus import fuse_hybrid

    dataset = load_dataset(args.dataset)
    questions = dataset.questions
    embedders = build_embedders()
    results: dict = {"dataset": dataset.name, "backends": {}}
    for name, emb in embedders.items():
        t0 = time.perf_counter()
        _ = emb.dimension  # model load (and, for ONNX, the one-time export when not cached)
        results["backends"][name] = {"load_seconds": time.perf_counter() - t0}
    chunks = split_corpus(dataset.corpus, embedders["torch"])
    texts = [c.text for c in chunks]
    results["chunks"] = len(chunks)
    print(f"{len(chunks)} chunks from {dataset.corpus}", flush=True)

    # 2. throughput, interleaved by block
    vectors = {name: [] for name in embedders}
    seconds = dict.fromkeys(embedders, 0.0)
    blocks = np.array_split(np.arange(len(texts)), args.blocks)
    for b, idx in enumerate(blocks):
        block = [texts[i] for i in idx]
        for name, emb in (embedders.items() if b % 2 == 0 else reversed(list(embedders.items()))):
            t0 = time.perf_counter()
            vectors[name].append(emb.embed_documents(block))
            seconds[name] += time.perf_counter() - t0
        print(f"block {b + 1}/{len(blocks)}: " + ", ".join(f"{n} {len(texts[:idx[-1] + 1]) / s:.1f}/s"
                                                          for n, s in seconds.items()), flush=True)
    matrix = {name: np.vstack(v) for name, v in vectors.items()}
    for name in embedders:
        results["backends"][name].update({"embed_seconds": seconds[name], "chunks_per_second": len(texts) /
                                          seconds[name]})
        cos = (matrix[name] * matrix["torch"]).sum(axis=1)
        results["backends"][name]["cosine_to_torch"] = {"mean": float(cos.mean()), "min": float(cos.min())}

    # 3. query latency and query vectors
    qvecs: dict = {}
    for name, emb in embedders.items():
        lat = []
        rows = []
        for q in questions:
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
        return [Hit(chunk=by_id.get(cid) or Chunk(cid, "", "", title, None, 0, ""), score=score, collection="c")
                for cid, title, score in lists[qid]["bm25"]]

    combos = {"torch": ("torch", "torch"), "onnx_fp32": ("onnx_fp32", "onnx_fp32"),
              "onnx_int8": ("onnx_int8", "onnx_int8"), "mixed: torch chunks, int8 queries": ("torch", "onnx_int8")}
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
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")

    # 5. end-to-end ingestion per backend
    if args.ingest_dir:
        from deepsearcher.app import DeepSearcher
        from deepsearcher.settings import load_settings

        results["ingest"] = {}
        for name, backend in (("onnx_int8", {"backend": "onnx", "onnx_int8": True}), ("torch", {"backend": "torch"})):
            folder = Path(args.ingest_dir) / name
            shutil.rmtree(folder, ignore_errors=True)
            settings = load_settings(None, {"vector_db": {"uri": str(folder / "milvus.db")}, "llm": None,
                                            "embedding": {"provider": "sentence_transformers", **backend}})
            with DeepSearcher(settings) as app:
                app._embedder = embedders[name]  # already loaded: time the load, not the model start
                summary = app.load([str(dataset.corpus)], "ingest_bench", "2Wiki corpus")
            results["ingest"][name] = {"seconds": summary.seconds, "embed_seconds": summary.embed_seconds,
                                       "chunks_written": summary.chunks_written}
            print(f"ingest {name}: {summary.chunks_written} chunks in {summary.seconds:.1f} s "
                  f"({summary.embed_seconds:.1f} s embedding)", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
