"""Calibrate the sub-query dedup threshold per embedding model on the labelled query pairs.

Usage:
    python scripts/calibrate_dedup.py [--pairs tests/fixtures/dedup/query_pairs.jsonl] [--ceiling 0.5]
        [--out docs/benchmarks.md] [--thresholds deepsearcher/agents/data/dedup_thresholds.json]

1. Embeds both queries of every pair with each embedding model available offline: the bundled all-MiniLM-L6-v2
   with the torch backend and with the default ONNX int8 backend, and the tests' hash embedder (bag of words) for
   reference; cosine = dot product of the L2-normalised vectors.
2. For thresholds 0.80 … 0.99 counts false drops (different-meaning pairs judged duplicate) and false keeps
   (same-meaning pairs not judged duplicate), with and without the lexical guard
   (``deepsearcher.agents.dedup_rules.lexically_distinct``).
3. Per model and backend picks the threshold with the fewest false drops among those whose false-keep rate is at most
   ``--ceiling`` (``deepsearcher.eval.dedup.choose_threshold``, with the guard, as the agents use it; ties go to the
   higher threshold). A model's threshold is the lowest over its backends, so the ceiling holds whichever backend
   runs. The default for models never
   calibrated ignores the ceiling, since their false keeps cannot be measured and cost only a search: the lowest
   threshold at which every calibrated model (not the hash reference) drops the fewest different-meaning pairs.
4. ``--out`` writes the "Sub-query dedup calibration" section of the benchmarks file; ``--thresholds`` writes the
   table ``threshold_for`` reads. Without them the section is printed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' hash embedder lives in tests/unit/query_fakes.py

from deepsearcher.agents.dedup_rules import distinguishing_terms, model_key  # noqa: E402
from deepsearcher.eval.dedup import QueryPair, SweepRow, choose_threshold, load_pairs, sweep  # noqa: E402
from deepsearcher.eval.sections import replace_section  # noqa: E402

HEADING = "## Sub-query dedup calibration"
PAIRS = ROOT / "tests" / "fixtures" / "dedup" / "query_pairs.jsonl"
THRESHOLDS = [round(0.80 + 0.01 * i, 2) for i in range(20)]
OLD_THRESHOLD = 0.92  # the fixed query.dedup_threshold before this calibration
FAILING = ("en-29", "en-30")  # issue #11 item 6: Milvus / Milvus Lite, 2023 / 2024


@dataclass(frozen=True)
class Run:
    """One embedder's results: ``label`` (model / backend), the cosine of every pair, the lowest cosine between a
    query embedded alone and in a batch, and the sweeps."""

    label: str
    model: str
    backend: str
    reference: bool
    cosines: list[float]
    batch_self_cosine: float
    plain: list[SweepRow]
    guarded: list[SweepRow]


def embedders() -> list[tuple[str, str, bool, Any]]:
    """``(backend, model label, reference_only, embedder)`` for every embedder that runs offline here."""
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.embedding.options import SentenceTransformersOptions
    from tests.unit.query_fakes import HashEmbedder

    return [
        ("torch", "all-MiniLM-L6-v2", False,
         SentenceTransformersEmbedder(SentenceTransformersOptions(backend="torch"))),
        ("onnx-int8", "all-MiniLM-L6-v2", False,
         SentenceTransformersEmbedder(SentenceTransformersOptions(backend="onnx", onnx_int8=True))),
        ("-", HashEmbedder.model_name, True, HashEmbedder()),
    ]


def cosines(embedder: Any, pairs: Sequence[QueryPair]) -> list[float]:
    """Cosine of each pair, every query embedded alone with ``embed_query`` as the agents do: the ONNX int8 vector of
    a text depends on the batch it is embedded in (activations are quantised with one scale per batch)."""
    return [float(np.dot(embedder.embed_query(p.a), embedder.embed_query(p.b))) for p in pairs]


def batch_self_cosine(embedder: Any, pairs: Sequence[QueryPair]) -> float:
    """Lowest cosine between a query embedded alone and the same query embedded among the others."""
    texts = [p.a for p in pairs] + [p.b for p in pairs]
    batch = np.asarray(embedder.embed_documents(texts))
    return float(min(np.dot(embedder.embed_query(t), v) for t, v in zip(texts, batch)))


def pct(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / total:.0f}%)" if total else "0/0"


def row_at(rows: Sequence[SweepRow], threshold: float) -> SweepRow:
    return next(r for r in rows if abs(r.threshold - threshold) < 1e-9)


def default_threshold(runs: Sequence[Run]) -> float:
    """Lowest threshold at which every calibrated (non-reference) run has its fewest guarded false drops."""
    real = [r for r in runs if not r.reference]
    best = {r.label: min(x.false_drops for x in r.guarded) for r in real}
    for t in THRESHOLDS:
        if all(row_at(r.guarded, t).false_drops == best[r.label] for r in real):
            return t
    return THRESHOLDS[-1]


def thresholds_table(runs: Sequence[Run], chosen: dict[str, SweepRow], ceiling: float, default: float,
                     pairs_path: str, n_pairs: int) -> dict[str, Any]:
    models: dict[str, Any] = {}
    for run in (r for r in runs if not r.reference):  # the hash embedder is a test fake, not a model users run
        entry = models.setdefault(model_key(run.model), {"name": run.model, "backends": {}})
        row = chosen[run.label]
        entry["backends"][run.backend] = {"threshold": row.threshold, "false_drop": round(row.false_drop, 4),
                                          "false_keep": round(row.false_keep, 4)}
        entry["threshold"] = min(b["threshold"] for b in entry["backends"].values())
    return {
        "about": "Cosine at or above which two sub-queries are near-duplicates, per embedding model (with the "
                 "lexical guard of deepsearcher/agents/dedup_rules.py). Written by scripts/calibrate_dedup.py; do "
                 "not edit by hand. A model's threshold is the lowest over its backends (the false-keep ceiling "
                 "holds for each).",
        "calibrated_on": f"{pairs_path} ({n_pairs} pairs), {date.today().isoformat()}",
        "false_keep_ceiling": ceiling,
        "default": default,
        "models": models,
    }


def section(pairs: Sequence[QueryPair], runs: Sequence[Run], chosen: dict[str, SweepRow], ceiling: float,
            default: float, distinct: Sequence[bool]) -> str:
    same = sum(p.duplicate for p in pairs)
    different = len(pairs) - same
    langs = ", ".join(f"{k} {v}" for k, v in Counter(p.lang for p in pairs).most_common())
    kinds = Counter((p.duplicate, p.kind) for p in pairs)
    same_kinds = ", ".join(f"{k} {v}" for (d, k), v in sorted(kinds.items()) if d)
    different_kinds = ", ".join(f"{k} {v}" for (d, k), v in sorted(kinds.items()) if not d)
    guard_keeps = pct(sum(d and p.duplicate for p, d in zip(pairs, distinct)), same)
    batch_drift = "; ".join(f"{r.batch_self_cosine:.4f} ({r.backend})" for r in runs if not r.reference)
    guard_separates = pct(sum(d and not p.duplicate for p, d in zip(pairs, distinct)), different)
    text = f"""{HEADING}

Measured by `scripts/calibrate_dedup.py` ({date.today().isoformat()}) on `tests/fixtures/dedup/query_pairs.jsonl`:
{len(pairs)} labelled pairs of sub-queries, {same} same-meaning and {different} different-meaning, in
{len(set(p.lang for p in pairs))} languages ({langs}). Same-meaning kinds: {same_kinds}. Different-meaning kinds:
{different_kinds}. Queries are embedded one at a time, as the agents do: an ONNX int8 vector depends on the batch it
is embedded in (activations are quantised with one scale per batch); the cosine between a query embedded alone and
inside `embed_documents` batches is as low as {batch_drift}.

A pair is judged duplicate when the cosine of its embeddings reaches the threshold and, with the guard,
`lexically_distinct` (numbers, negation, maximum/minimum, names: `deepsearcher/agents/dedup_rules.py`) is False.
**False drop** = different-meaning pairs judged duplicate: the agent drops a real follow-up, which can end the
research loop. **False keep** = same-meaning pairs not judged duplicate: one extra search.

How the threshold is chosen (with the guard, as the agents use it): the fewest false drops among thresholds whose
false-keep rate is at most **{ceiling:.0%}**, ties to the higher threshold (a margin for pairs not in the set); a
model's threshold is the lowest over its backends, so the ceiling holds for each. Why that ceiling: with a false-keep
rate p, a model that keeps re-proposing the same gap query is caught after 1/(1−p) proposals on average; p ≤ 0.5
catches it by the second proposal, a round before the default `max_iter` 3 ends the loop anyway (at p = 2/3 dedup
would do no better than `max_iter`). Models never calibrated get **{default:.2f}**: their false keeps cannot be
measured and cost only a search, so the default is the lowest threshold at which every calibrated model has its
fewest false drops. The guard alone (any cosine) keeps {guard_keeps} same-meaning pairs apart (abbreviations, German
nouns) and separates {guard_separates} different-meaning pairs.

"""
    paragraphs = [textwrap.fill(" ".join(par.split()), width=118, break_long_words=False, break_on_hyphens=False)
                  for par in text.strip().split("\n\n")[1:]]
    lines = [HEADING, "", "\n\n".join(paragraphs), "", "| model / backend | chosen threshold | false drop | false keep | before (0.92, no "
             "guard): false drop | false keep | issue pairs' cosine (Milvus Lite; 2024) |", "|---|---|---|---|---|---|---|"]
    index = {p.id: i for i, p in enumerate(pairs)}
    for run in runs:
        row, old = chosen[run.label], row_at(run.plain, OLD_THRESHOLD)
        failing = "; ".join(f"{run.cosines[index[i]]:.3f}" for i in FAILING if i in index)
        name = f"{run.model} / {run.backend}" + (" (reference)" if run.reference else "")
        lines.append(f"| {name} | **{row.threshold:.2f}** | {pct(row.false_drops, row.different)} | "
                     f"{pct(row.false_keeps, row.same)} | {pct(old.false_drops, old.different)} | "
                     f"{pct(old.false_keeps, old.same)} | {failing} |")
    for run in runs:
        lines += ["", f"**{run.model} / {run.backend}**: false drop / false keep per threshold", "",
                  "| threshold | false drop, no guard | false keep, no guard | false drop, guard | false keep, guard |",
                  "|---|---|---|---|---|"]
        for plain, guarded in zip(run.plain, run.guarded):
            mark = " ←" if guarded.threshold == chosen[run.label].threshold else ""
            lines.append(f"| {plain.threshold:.2f}{mark} | {pct(plain.false_drops, plain.different)} | "
                         f"{pct(plain.false_keeps, plain.same)} | {pct(guarded.false_drops, guarded.different)} | "
                         f"{pct(guarded.false_keeps, guarded.same)} |")
    lines += ["", language_table(pairs, runs, chosen, distinct), "", errors_table(pairs, runs, chosen, distinct)]
    return "\n".join(lines) + "\n"


def language_table(pairs: Sequence[QueryPair], runs: Sequence[Run], chosen: dict[str, SweepRow],
                   distinct: Sequence[bool]) -> str:
    """False drops and false keeps per language at each real model/backend's chosen threshold (guard on)."""
    real = [r for r in runs if not r.reference]
    head = " | ".join(f"{r.backend} false drop | {r.backend} false keep" for r in real)
    lines = ["Per language at the chosen threshold (guard on):", "", f"| language | pairs | {head} |",
             "|---|---|" + "---|---|" * len(real)]
    for lang in dict.fromkeys(p.lang for p in pairs):
        idx = [i for i, p in enumerate(pairs) if p.lang == lang]
        cells = []
        for run in real:
            rows = sweep([pairs[i] for i in idx], [run.cosines[i] for i in idx], [distinct[i] for i in idx],
                         [chosen[run.label].threshold], guarded=True)[0]
            cells.append(f"{pct(rows.false_drops, rows.different)} | {pct(rows.false_keeps, rows.same)}")
        lines.append(f"| {lang} | {len(idx)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def errors_table(pairs: Sequence[QueryPair], runs: Sequence[Run], chosen: dict[str, SweepRow],
                 distinct: Sequence[bool]) -> str:
    """The different-meaning pairs still dropped at the chosen threshold (guard on), per real model/backend."""
    lines = ["Different-meaning pairs still judged duplicate at the chosen threshold (guard on):", "",
             "| model / backend | pair | kind | cosine | a | b |", "|---|---|---|---|---|---|"]
    for run in (r for r in runs if not r.reference):
        t = chosen[run.label].threshold
        for p, c, d in zip(pairs, run.cosines, distinct):
            if not p.duplicate and c >= t and not d:
                lines.append(f"| {run.backend} | {p.id} | {p.kind} | {c:.3f} | {p.a} | {p.b} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--ceiling", type=float, default=0.5, help="Highest false-keep rate allowed (0..1).")
    parser.add_argument("--out", type=Path, default=None, help="Markdown file to write the section into.")
    parser.add_argument("--thresholds", type=Path, default=None, help="JSON table to write the thresholds into.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    pairs = load_pairs(args.pairs)
    distinct = [bool(distinguishing_terms(p.a, p.b)) for p in pairs]
    runs: list[Run] = []
    for backend, model, reference, embedder in embedders():
        cos = cosines(embedder, pairs)
        runs.append(Run(f"{model}/{backend}", model, backend, reference, cos, batch_self_cosine(embedder, pairs),
                        sweep(pairs, cos, distinct, THRESHOLDS, guarded=False),
                        sweep(pairs, cos, distinct, THRESHOLDS, guarded=True)))
        print(f"embedded {len(pairs)} pairs with {model} / {backend}", flush=True)
    chosen = {run.label: choose_threshold(run.guarded, args.ceiling) for run in runs}
    default = default_threshold(runs)
    text = section(pairs, runs, chosen, args.ceiling, default, distinct)
    if args.out:
        replace_section(args.out, HEADING, text)
        print(f"wrote {HEADING!r} into {args.out}")
    else:
        print(text)
    if args.thresholds:
        rel = args.pairs.resolve().relative_to(ROOT) if args.pairs.resolve().is_relative_to(ROOT) else args.pairs
        table = thresholds_table(runs, chosen, args.ceiling, default, str(rel), len(pairs))
        args.thresholds.parent.mkdir(parents=True, exist_ok=True)
        args.thresholds.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.thresholds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
