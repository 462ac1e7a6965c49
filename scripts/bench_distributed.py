"""Ingestion throughput: the local engine vs the Ray engine with 1 and 2 embedding actors, into a Milvus server.

Usage (one run, all three, into the embedded Milvus 2.3.5 server this script starts in ``--dir``):
    nice -n 10 python scripts/bench_distributed.py --runs local,ray-1,ray-2 --dir /tmp/bench_dist \
        --json /tmp/bench_dist/result.json

Input: the 2WikiMultiHopQA corpus (``--corpus``; 6,119 passages) cut into ``--files`` JSONL files (the Ray engine
spreads files over tasks; one JSON file would be one source), written before any timing; ``--limit`` takes the
first K passages. Each run is a fresh subprocess of this script doing what ``deepsearcher load FOLDER`` does with
``ingest.engine`` set (built-in defaults otherwise: bundled MiniLM, ONNX int8, 240-token chunks, batches of 256)
into its own collection on the same server; Ray starts locally (``ingest.ray.num_cpus`` = all cores) and stops
inside the run, so its start-up is in the wall time. Reported per run: wall seconds of ``DeepSearcher.load``,
chunks written, chunks/s over the wall, chunks/s in the steady state (from the first written batch to the end,
which leaves out Ray's start-up and the first batch's latency), the embedding seconds the engine reports (the Ray
engine sums them over its actors), and the load average. After the runs the three collections are compared: the
same ids must be in each.

The embedded server is started by tests/integration/milvus_server.py (auth off); ``--uri`` uses another server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_CORPUS = Path(os.environ.get("DEEPSEARCHER_SHARED_DATA") or REPO.parent / "shared" / "data") / \
    "qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json"
RUNS = {"local": ("local", 0), "ray-1": ("ray", 1), "ray-2": ("ray", 2)}


def write_files(corpus: Path, folder: Path, files: int, limit: int | None) -> int:
    """The corpus as ``files`` JSONL files of consecutive passages; returns the passages written."""
    passages = json.loads(corpus.read_text(encoding="utf-8"))[:limit]
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(passages) // files)
    for i in range(files):
        rows = passages[i * per_file:(i + 1) * per_file]
        (folder / f"part{i:04d}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                                   encoding="utf-8")
    return len(passages)


def run_one(name: str, uri: str, folder: Path, out: Path) -> None:
    """One run (in its own process): load ``folder`` into collection ``bench_<name>`` and write the timings."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.events import Event
    from deepsearcher.settings import load_settings

    engine, actors = RUNS[name]
    overrides: dict[str, Any] = {"vector_db": {"uri": uri}, "llm": None, "ingest": {"engine": engine}}
    if actors:
        overrides["ingest"]["ray"] = {"embed_actors": actors}
    batches: list[tuple[float, int]] = []

    def on_event(event: Event) -> None:
        if event.kind == "load.batch":
            batches.append((time.perf_counter(), int(event.data["written"])))

    app = DeepSearcher(load_settings(None, overrides), on_event=on_event)
    _ = app.embedder.dimension, app.store.list_collections()  # model load and server connection, not timed
    collection = f"bench_{name.replace('-', '_')}"
    if app.store.has_collection(collection):
        app.store.drop_collection(collection)
    load_avg_start = os.getloadavg()
    started = time.perf_counter()
    summary = app.load([str(folder)], collection, "2Wiki passages")
    wall = time.perf_counter() - started
    first_t, first_n = batches[0] if batches else (started, 0)
    steady = (summary.chunks_written - first_n) / max(1e-9, started + wall - first_t)
    result = {"run": name, "engine": engine, "embed_actors": actors, "wall_seconds": wall,
              "chunks_written": summary.chunks_written, "chunks_per_second": summary.chunks_written / wall,
              "steady_chunks_per_second": steady, "first_batch_after_seconds": first_t - started,
              "embed_seconds": summary.embed_seconds, "files": len(summary.files),
              "loaded": len(summary.loaded), "load_average_start": load_avg_start,
              "load_average_end": os.getloadavg(), "collection": collection}
    app.close()
    out.write_text(json.dumps(result), encoding="utf-8")


def collection_ids(uri: str, collection: str) -> set[str]:
    import logging

    from pymilvus import MilvusClient

    logging.getLogger("pymilvus").setLevel(logging.ERROR)  # the 2.3 server gives the iterator no MVCC timestamp
    client = MilvusClient(uri=uri)
    try:
        client.load_collection(collection)
        ids: set[str] = set()
        iterator = client.query_iterator(collection, batch_size=4096, filter='id != ""', output_fields=["id"])
        while batch := iterator.next():
            ids.update(row["id"] for row in batch)
        iterator.close()
        return ids
    finally:
        client.close()


def render(result: dict) -> str:
    base = next((r for r in result["runs"] if r["run"] == "local"), result["runs"][0])
    lines = [f"| run | embedding actors | chunks | wall s | chunks/s | steady chunks/s | vs local (steady) | "
             f"first batch after | embed s (summed) | load avg start → end |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        lines.append(f"| {r['run']} | {r['embed_actors'] or 'in-process (2 threads)'} | {r['chunks_written']:,} | "
                     f"{r['wall_seconds']:.1f} | {r['chunks_per_second']:.1f} | {r['steady_chunks_per_second']:.1f} | "
                     f"{r['steady_chunks_per_second'] / base['steady_chunks_per_second']:.2f}× | "
                     f"{r['first_batch_after_seconds']:.1f} s | {r['embed_seconds']:.1f} | "
                     f"{r['load_average_start'][0]:.1f} → {r['load_average_end'][0]:.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--files", type=int, default=64, help="JSONL files the corpus is cut into.")
    parser.add_argument("--limit", type=int, default=None, help="Only the first K passages.")
    parser.add_argument("--runs", default="local,ray-1,ray-2", help=f"Comma list of {', '.join(RUNS)}.")
    parser.add_argument("--dir", default="/tmp/bench_distributed", help="Work folder (files, server data).")
    parser.add_argument("--uri", default=None, help="A running Milvus server instead of the embedded one.")
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--run-one", nargs=3, metavar=("NAME", "URI", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = Path(args.dir)
    if args.run_one:
        run_one(args.run_one[0], args.run_one[1], work / "files", Path(args.run_one[2]))
        return 0
    runs = args.runs.split(",")
    unknown = [r for r in runs if r not in RUNS]
    if unknown:
        parser.error(f"unknown runs: {unknown}")
    passages = write_files(Path(args.corpus), work / "files", args.files, args.limit)
    server = None
    uri = args.uri
    if uri is None:
        from tests.integration.milvus_server import EmbeddedMilvus

        server = EmbeddedMilvus(work / "server", auth=False).start()
        uri = server.uri
    result: dict[str, Any] = {"date": datetime.now().isoformat(timespec="seconds"), "machine": platform.machine(),
                              "cores": os.cpu_count(), "passages": passages, "files": args.files, "uri": uri,
                              "server": "embedded Milvus 2.3.5" if server else uri, "runs": []}
    env = dict(os.environ, HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", RAY_USAGE_STATS_ENABLED="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    try:
        for name in runs:
            out = work / f"{name}.json"
            print(f"{name} ...", flush=True)
            subprocess.run([sys.executable, __file__, "--dir", str(work), "--run-one", name, uri, str(out)],
                           env=env, check=True)
            result["runs"].append(json.loads(out.read_text(encoding="utf-8")))
            r = result["runs"][-1]
            print(f"  {r['chunks_written']} chunks in {r['wall_seconds']:.1f} s ({r['chunks_per_second']:.1f}/s, "
                  f"steady {r['steady_chunks_per_second']:.1f}/s)", flush=True)
        ids = {r["run"]: collection_ids(uri, r["collection"]) for r in result["runs"]}
        first = next(iter(ids.values()))
        result["same_ids"] = all(v == first for v in ids.values())
        result["ids"] = {k: len(v) for k, v in ids.items()}
    finally:
        if server is not None:
            server.stop()
    print(render(result))
    print(f"same ids in every collection: {result['same_ids']} {result['ids']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
