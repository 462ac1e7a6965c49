"""Does the ONNX int8 vector of a text depend on the batch it is embedded in, and does it matter?

Usage:
    python scripts/bench_onnx_batch.py ../shared/data/qa/2wikimultihopqa_hipporag [--sample 640] [--recall] \
        [--out docs/benchmarks.md]

Dynamic int8 quantisation scales a MatMul's activations with one factor per input tensor, i.e. per batch: the rows
(and the padding) a text is batched with change its vector a little. Chunks are embedded in batches at load time,
queries alone at query time, so a chunk is compared with queries as a slightly different vector than it would be
alone. This script measures, on the 2Wiki corpus split as ``deepsearcher load`` splits it:

1. the cosine between each sampled chunk embedded in batches of at most 8 (the old ``MAX_BATCH_ROWS``) and alone;
2. chunks/s with batches of 8 and of 1 (blocks interleaved, so both see the same load on a shared machine);
3. with ``--recall``: dense Recall@k of the questions against the whole corpus embedded each way (queries alone).

Prints a Markdown section; ``--out`` writes it into that file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HEADING = "## ONNX int8: batch-dependent vectors"
CONCLUSION = ("The dependence is real but small, and embedding one text per session run (several runs in parallel, "
              "one per CPU) costs no throughput here, so `onnx_backend.MAX_BATCH_ROWS` is 1: a chunk's vector no "
              "longer depends on the chunks it was loaded with and equals what the query path computes for the "
              "same text. Retrieval moves within noise.")
_spec = importlib.util.spec_from_file_location("bench_onnx", Path(__file__).with_name("bench_onnx.py"))
bench_onnx = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench_onnx)  # type: ignore[union-attr]


def embed(embedder: object, texts: list[str], rows: int) -> np.ndarray:
    from deepsearcher.embedding import onnx_backend

    saved = onnx_backend.MAX_BATCH_ROWS
    onnx_backend.MAX_BATCH_ROWS = rows
    try:
        return np.asarray(embedder.embed_documents(texts))  # type: ignore[attr-defined]
    finally:
        onnx_backend.MAX_BATCH_ROWS = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--sample", type=int, default=640)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--recall", action="store_true", help="Also embed the whole corpus both ways (slow).")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.eval import load_dataset
    from deepsearcher.embedding.options import SentenceTransformersOptions

    emb = SentenceTransformersEmbedder(SentenceTransformersOptions(backend="onnx", onnx_int8=True))
    dataset = load_dataset(args.dataset)
    chunks = bench_onnx.split_corpus(dataset.corpus, emb)
    texts = [c.text for c in chunks]
    sample = np.linspace(0, len(texts) - 1, min(args.sample, len(texts))).astype(int)
    emb.embed_documents(texts[:16])  # load the model
    seconds = {8: 0.0, 1: 0.0}
    vectors: dict[int, list[np.ndarray]] = {8: [], 1: []}
    for b, idx in enumerate(np.array_split(sample, args.blocks)):
        block = [texts[i] for i in idx]
        for rows in ((8, 1) if b % 2 == 0 else (1, 8)):
            t0 = time.perf_counter()
            vectors[rows].append(embed(emb, block, rows))
            seconds[rows] += time.perf_counter() - t0
    v8, v1 = np.vstack(vectors[8]), np.vstack(vectors[1])
    cos = (v8 * v1).sum(axis=1)
    alone = np.asarray(emb.embed_query(texts[sample[0]]))
    assert float(alone @ v1[0]) > 0.99999, "a batch of one is the query path"
    lines = [f"| batch rows | chunks/s ({len(sample)} chunks, {args.blocks} interleaved blocks) |", "|---|---|"]
    lines += [f"| {rows} | {len(sample) / seconds[rows]:.1f} |" for rows in (8, 1)]
    text = [f"{HEADING}", "",
            f"Measured by `scripts/bench_onnx_batch.py` ({date.today().isoformat()}, load average "
            f"{os.getloadavg()[0]:.1f}) on {len(sample)} chunks of the 2Wiki corpus as `load` splits it. Cosine "
            f"between a chunk embedded in a batch of at most 8 and alone: mean {cos.mean():.4f}, min {cos.min():.4f}, "
            f"{(cos < 0.99).mean() * 100:.1f} % below 0.99.", "", "\n".join(lines)]
    if args.recall:
        questions = dataset.questions
        qvecs = np.vstack([emb.embed_query(q.question) for q in questions])
        table = ["| chunk vectors | dense R@1 | R@2 | R@5 | R@10 (complete-gold questions) |", "|---|---|---|---|---|"]
        for rows in (8, 1):
            matrix = embed(emb, texts, rows)
            top = np.argsort(-(qvecs @ matrix.T), axis=1)[:, :10]
            rec = bench_onnx.recalls([[chunks[j].title for j in row] for row in top], questions)["complete"]
            table.append(f"| batches of {rows} | " + " | ".join(f"{rec[k]:.3f}" for k in (1, 2, 5, 10)) + " |")
        text += ["", f"Recall against the whole corpus ({len(texts)} chunks, {rec['n']} questions, queries embedded "
                     "alone):", "", "\n".join(table)]
    text += ["", CONCLUSION]
    from deepsearcher.eval.sections import publish

    publish("\n".join(text) + "\n", HEADING, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
