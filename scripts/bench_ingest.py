"""Ingestion benchmark: load a real corpus into a fresh Milvus Lite file and compare with pure embedding time.

Usage:
    python scripts/bench_ingest.py [CORPUS] [--out docs/benchmarks.md] [--batch-size 256]

CORPUS defaults to ../shared/data/qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json (6,119 passages, loaded
through the JSON loader with text key "text" and title key "title"). Reports chunks/s, the share of wall time inside
the embedding model, the ratio of load wall time to the pure embedding time of the same chunks (measured in the same
run), peak RSS, and the time of a second, unchanged re-load. Prints a Markdown table; --out appends it to a file.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared/data/qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    parser.add_argument("--out", default=None, help="Markdown file to append the result table to.")
    parser.add_argument("--batch-size", type=int, default=None, help="ingest.batch_size override.")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="onnx",
                        help="embedding backend (default onnx, the configured default)")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if not corpus.is_file():
        print(f"corpus not found: {corpus} (pass a path)", file=sys.stderr)
        return 2

    from deepsearcher.app import DeepSearcher
    from deepsearcher.ingest.load import make_splitter
    from deepsearcher.ingest.loaders import load_path
    from deepsearcher.ingest.normalize import normalize_stage
    from deepsearcher.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        overrides: dict = {"vector_db": {"uri": str(Path(tmp) / "bench.db")}, "llm": None,
                           "embedding": {"backend": args.backend}}
        if args.batch_size:
            overrides["ingest"] = {"batch_size": args.batch_size}
        app = DeepSearcher(load_settings(None, overrides))
        _ = app.embedder.dimension  # model load is not part of either measurement
        _ = app.store.list_collections()  # nor is starting Milvus Lite

        # pure embedding of exactly the same chunk texts, same batches, no parsing / splitting / Milvus; measured
        # before and after the load and averaged, because the machine's load drifts during a long run
        docs = normalize_stage(load_path(corpus, app.settings.loader), str(corpus))
        chunks = make_splitter(app.settings.ingest, app.embedder).split(docs, "x")
        texts = [c.text for c in chunks]
        batch = args.batch_size or app.settings.ingest.batch_size

        def pure_embedding() -> float:
            t0 = time.perf_counter()
            for start in range(0, len(texts), batch):
                app.embedder.embed_documents(texts[start:start + batch])
            return time.perf_counter() - t0

        load_before = os.getloadavg()[0]
        pure_before = pure_embedding()
        t0 = time.perf_counter()
        first = app.load([str(corpus)], "bench", "benchmark corpus")
        first_wall = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = app.load([str(corpus)], "bench")
        second_wall = time.perf_counter() - t0
        rows = app.store.count("bench")
        pure_after = pure_embedding()
        load_after = os.getloadavg()[0]
        pure_embed = (pure_before + pure_after) / 2
        app.close()

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = first.chunks_written
    table = "\n".join([
        f"### Ingestion: {corpus.name} ({date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"backend {args.backend}, batch {batch})",
        "",
        "| measure | value |",
        "|---|---|",
        f"| chunks written (first load) | {n} (rows in collection: {rows}) |",
        f"| first load wall time | {first_wall:.1f} s |",
        f"| throughput | {n / first_wall:.1f} chunks/s |",
        f"| time inside the embedding model during the load | {first.embed_seconds:.1f} s "
        f"({100 * first.embed_seconds / first_wall:.1f} % of wall) |",
        f"| pure embedding of the same chunks (same run; before / after the load) | {pure_embed:.1f} s "
        f"({pure_before:.1f} / {pure_after:.1f}) |",
        f"| **load wall / embedding time inside the load** (same window) | "
        f"**{first_wall / first.embed_seconds:.3f}×** |",
        f"| **load wall / pure embedding** | **{first_wall / pure_embed:.3f}×** |",
        f"| second, unchanged re-load | {second_wall:.2f} s, {second.chunks_written} new rows "
        f"(**{first_wall / second_wall:.0f}× faster**) |",
        f"| peak RSS | {peak_mb:.0f} MB |",
        f"| 1-minute load average (start / end) | {load_before:.1f} / {load_after:.1f} |",
        "",
    ])
    print(table)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write("\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
