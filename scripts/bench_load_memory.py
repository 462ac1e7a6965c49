"""Peak memory of loading one large plain-text file (docs/benchmarks.md, "Memory of a load").

Writes a text file of SIZE_MB MB (numbered paragraphs, every chunk different), loads it through the real built-in
loader, normaliser, splitter (240 tokens measured as characters / 4) and ``LoadPipeline`` with the hash embedder and
a store that keeps nothing, and prints the process's peak RSS: what the load itself holds, without a model or a
database. Usage: python scripts/bench_load_memory.py SIZE_MB [--stream-bytes N] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any


def write_text(path: Path, megabytes: float) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        size, i = 0, 0
        while size < megabytes * 1024 * 1024:
            para = (f"Paragraph {i}: the archive keeps ledger {i} beside lantern {i * 7}, under the copper signal "
                    f"of harbor {i % 97}.\n\n")
            fh.write(para)
            size += len(para)
            i += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("size_mb", type=float)
    ap.add_argument("--stream-bytes", type=int, default=None, help="stream files from this size on (default 16 MB)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from deepsearcher.ingest import loaders
    from deepsearcher.ingest.loaders import BuiltinLoader
    from deepsearcher.ingest.pipeline import LoadPipeline
    from deepsearcher.ingest.sources import file_items
    from deepsearcher.ingest.splitter import Splitter
    from deepsearcher.ingest.options import LoaderOptions
    from deepsearcher.testing import HashEmbedder, MemoryStore

    if a.stream_bytes is not None and hasattr(loaders, "STREAM_BYTES"):
        loaders.STREAM_BYTES = a.stream_bytes  # type: ignore[attr-defined]

    class Discard(MemoryStore):
        """Counts rows, keeps none: the store's memory is not the load's."""

        def upsert(self, name: str, chunks: Any, vectors: Any, doc_chunks: Any) -> int:
            return len(chunks)

        def is_complete(self, name: str, source: str, doc_hash: str) -> bool:
            return False

        def delete_stale(self, name: str, source: str, doc_hash: str) -> int:
            return 0

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        write_text(path, a.size_mb)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        pipe = LoadPipeline(Discard(), HashEmbedder(64, "hash-64"), Splitter(240, 32, tokenizer=None), 256)
        summary = pipe.run(file_items([path], BuiltinLoader(LoaderOptions()), "bench"), "big", description="x")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result = {"file_mb": round(path.stat().st_size / 2**20, 1), "peak_rss_mb": round(peak),
                  "rss_before_load_mb": round(before), "peak_load_mb": round(peak - before),
                  "chunks": summary.chunks_written, "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(result) if a.json else
          f"{result['file_mb']} MB file: peak RSS {result['peak_rss_mb']} MB ({result['peak_load_mb']} MB above the "
          f"{result['rss_before_load_mb']} MB before the load), {result['chunks']} chunks, {result['seconds']} s")


if __name__ == "__main__":
    main()
