"""Ingestion fidelity benchmark: score extractors per format on the fidelity suite (tests/fidelity).

Usage:
    python scripts/bench_fidelity.py [--dir OUT_DIR] [--out docs/benchmarks.md] [--details]

Builds the suite (``tests/fidelity/build.py``; into OUT_DIR when given, else in memory), runs every candidate of a
fixture's format (scripts/fidelity_candidates.py) plus deepsearcher's own paths, and scores each fixture: share of
expected phrases found in the stored text after whitespace folding, share of noise items absent (a ``once`` phrase
stored twice is noise). A fixture that must be skipped scores 1/1 when the candidate stores nothing (deepsearcher's
paths must raise SkipSource; any other exception from them counts as an error). Prints a Markdown table per
format x candidate; ``--out`` replaces (or appends) the "Ingestion fidelity" section of that file.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from fidelity_candidates import CANDIDATES, OURS, Skipped  # noqa: E402

from tests.fidelity.build import all_fixtures, build  # noqa: E402
from tests.fidelity.fixture import Fixture, Score, score  # noqa: E402

SECTION = "## Ingestion fidelity (`scripts/bench_fidelity.py`)"


@dataclass(frozen=True)
class Run:
    fixture: Fixture
    candidate: str
    score: Score
    error: str | None = None


def run_one(fixture: Fixture, name: str, fn, ours: bool) -> Run:  # type: ignore[no-untyped-def]
    suffix = Path(fixture.name).suffix
    try:
        text = fn(fixture.data, suffix, fixture.options)
        error = None
    except Skipped as exc:
        text, error = "", None if fixture.skip else f"skipped: {exc}"
    except Exception as exc:  # a library failing on a fixture is a measured outcome, not a bench crash
        text = ""
        error = None if (fixture.skip and not ours) else f"{type(exc).__name__}: {str(exc)[:80]}"
    if fixture.skip:
        result = score(Fixture(fixture.name, fixture.fmt, b"", noise=fixture.noise), text)
        if text.strip():
            result = Score(0, 1, result.clean, result.noise, ("(should be skipped)",), result.present_noise)
        else:
            result = Score(1, 1, result.clean, result.noise)
        return Run(fixture, name, result, error)
    return Run(fixture, name, score(fixture, text), error)


def run_all(fixtures: list[Fixture]) -> list[Run]:
    logging.disable(logging.WARNING)  # libraries log per-fixture warnings (e.g. pypdf on the truncated file)
    runs = []
    for fixture in fixtures:
        for name, fn in OURS:
            runs.append(run_one(fixture, name, fn, ours=True))
        for name, fn in CANDIDATES[fixture.fmt]:
            runs.append(run_one(fixture, name, fn, ours=False))
    return runs


def table(runs: list[Run]) -> str:
    order: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        order.setdefault((run.fixture.fmt, run.candidate), []).append(run)
    lines = ["| format | extractor | fixtures | expected text found | noise absent | perfect fixtures | errors |",
             "|---|---|---|---|---|---|---|"]
    for (fmt, cand), rs in order.items():
        recall = sum(r.score.recall for r in rs) / len(rs)
        clean = sum(r.score.cleanliness for r in rs) / len(rs)
        perfect = sum(r.score.perfect and not r.error for r in rs)
        errors = sum(bool(r.error) for r in rs)
        lines.append(f"| {fmt} | {cand} | {len(rs)} | {recall:.1%} | {clean:.1%} | {perfect}/{len(rs)} | {errors} |")
    return "\n".join(lines)


def side_by_side(runs: list[Run]) -> str:
    """Per format: the built-in loader, markitdown and unstructured, as "found / noise absent (perfect)"."""
    columns = [("deepsearcher builtin", lambda c: c == OURS[-1][0]), ("markitdown", lambda c: "markitdown" in c),
               ("unstructured", lambda c: c.startswith("unstructured"))]
    formats = list(dict.fromkeys(r.fixture.fmt for r in runs))
    lines = ["| format | " + " | ".join(name for name, _ in columns) + " |", "|---|" + "---|" * len(columns)]
    for fmt in formats:
        cells = []
        for _, pick in columns:
            rs = [r for r in runs if r.fixture.fmt == fmt and pick(r.candidate)]
            perfect = sum(r.score.perfect and not r.error for r in rs)
            cells.append(f"{sum(r.score.recall for r in rs) / len(rs):.0%} / "
                         f"{sum(r.score.cleanliness for r in rs) / len(rs):.0%} ({perfect}/{len(rs)})" if rs else "–")
        lines.append(f"| {fmt} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details(runs: list[Run], only: str | None = None) -> str:
    lines = ["| fixture | extractor | found | noise absent | missing / noise present / error |",
             "|---|---|---|---|---|"]
    for r in runs:
        if (only and r.candidate != only) or (r.score.perfect and not r.error):
            continue
        what = "; ".join([*(f"missing {m[:50]!r}" for m in r.score.missing),
                          *(f"noise {n[:40]!r}" for n in r.score.present_noise), *([r.error] if r.error else [])])
        lines.append(f"| {r.fixture.name} | {r.candidate} | {r.score.found}/{r.score.expected} | "
                     f"{r.score.clean}/{r.score.noise} | {what.replace('|', '/')} |")
    return "\n".join(lines)


def ablation(fixtures: list[Fixture]) -> str:
    """New path with each normalisation rule switched off in turn, and with plain NFKC: recall / noise-absent."""
    from functools import partial

    from deepsearcher.ingest.normalize import RULES
    from fidelity_candidates import new_formats

    variants = [("all rules (default)", partial(new_formats))]
    variants += [(f"without {rule}", partial(new_formats, skip=(rule,))) for rule in RULES]
    variants += [("no normalisation", partial(new_formats, skip=RULES)),
                 ("plain NFKC instead of the targeted mapping", partial(new_formats, skip=("compatibility",),
                                                                        nfkc=True))]
    formats = sorted({f.fmt for f in fixtures})
    lines = ["| normalisation | " + " | ".join(formats) + " |", "|---|" + "---|" * len(formats)]
    for label, fn in variants:
        runs = [run_one(f, label, fn, ours=True) for f in fixtures]
        cells = []
        for fmt in formats:
            rs = [r for r in runs if r.fixture.fmt == fmt]
            cells.append(f"{sum(r.score.recall for r in rs) / len(rs):.1%} / "
                         f"{sum(r.score.cleanliness for r in rs) / len(rs):.1%}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def unstructured_note(runs: list[Run]) -> str:
    """What the unstructured rows show: the fixtures it could read, and its errors counted by kind."""
    rs = [r for r in runs if r.candidate.startswith("unstructured")]
    if not rs or all(r.error and r.error.startswith("skipped: UNSTRUCTURED_PYTHON") for r in rs):
        return "not run (set `UNSTRUCTURED_PYTHON` to the python of a venv with unstructured installed)."
    errors: dict[str, int] = {}
    for r in rs:
        if r.error:
            key = r.error.split(" from ")[0].split(" because ")[0].split(" (")[0][:90]
            errors[key] = errors.get(key, 0) + 1
    listed = "; ".join(f"`{e}` ({n})" for e, n in sorted(errors.items(), key=lambda kv: -kv[1]))
    return (f"**cannot run offline** for most formats: `partition(strategy=\"fast\")` raised on "
            f"{sum(errors.values())} of the {sum(not r.fixture.skip for r in rs)} fixtures with text: {listed}. Measured with unstructured 0.27 in its own "
            "venv (`UNSTRUCTURED_PYTHON`; in the project's venv its install would downgrade `filelock` 4.3 to 3.x, a "
            "torch dependency) with the extras docx, pptx, md, xlsx, epub. Every text format (TXT, MD, HTML, DOCX, "
            "PPTX, EPUB) downloads the spaCy model `en_core_web_sm` from GitHub at first use; PDF needs the `pdf` "
            "extra (unstructured-inference, torch). The spaCy model exists on PyPI only as third-party re-uploads, "
            "which were not installed. JSON (its own element schema) and part of XLSX ran.")


def render(day: str, fixtures: list[Fixture], summary: str, rules: str, imperfect: str, unstructured: str,
           compact: str) -> str:
    """The docs/benchmarks.md section: method, the table, the choice per format, the rule ablation."""
    counts: dict[str, int] = {}
    for f in fixtures:
        counts[f.fmt] = counts.get(f.fmt, 0) + 1
    per_format = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    none_left = imperfect.count("\n") <= 1
    return f"""{SECTION}

Measured by `scripts/bench_fidelity.py --out docs/benchmarks.md` ({day}). The suite (`tests/fidelity/build.py`, also
run by `tests/fidelity/test_fidelity.py`) is {len(fixtures)} small synthetic documents ({per_format}), among them
every case of `../shared/cases/ingest` rebuilt, each with the phrases that must be stored and the noise that must not
(base64 runs, NULs, soft hyphens, a text box stored twice, deleted revisions, front matter keys, navigation...).
"expected text found" = mean share of a fixture's phrases present after whitespace folding; "noise absent" = mean
share of its noise items absent (a phrase that must be stored once counts as noise when stored twice); "perfect" =
fixtures with both at 100 %. Fixtures that must be skipped (a real user password, no text layer, a truncated file)
score 1/1 when nothing is stored; "errors" counts exceptions other than deepsearcher's `SkipSource` (for the libraries:
any exception on a fixture with text). Candidates read the whole file through their documented text API
(`scripts/fidelity_candidates.py`).

Side by side (expected text found / noise absent, perfect fixtures):

{compact}

Every candidate per format:

{summary}

**Chosen per format** (`deepsearcher/ingest/formats/`, each module's docstring gives the same reason):
- PDF: **pypdfium2**. Raw text: pypdfium2 10/11 fixtures perfect, pypdf 7/11 (NULs and ligature code points kept;
  AES needs `cryptography`, without it the whole-folder `DependencyError` of issue #13; measured here with it
  installed), pdfminer via markitdown 7/11. The loader before #13 errs on the ligature-heavy page skipped as "binary
  or corrupt". PDFium opens empty-password AES/RC4 files itself, maps ligatures, drops NUL glyphs and marks line-end
  hyphens (U+FFFE), which the normalisation stage turns into joined words or kept compounds.
- DOCX: **a WordprocessingML walk over the tree python-docx loads**. No library read every fixture: python-docx's
  API, mammoth, docx2python and markitdown (mammoth to HTML) miss content controls, nested tables, notes or
  non-breaking hyphens, or store text boxes twice; the walk stores all of it once.
- PPTX: **python-pptx, shapes walked recursively** (groups at any depth, tables, notes with their slide); markitdown
  is as complete but gives one text for the deck, without slide numbers.
- HTML: **trafilatura `favor_recall` on the page with bare text made into paragraphs** (`formats/html.py`).
  trafilatura alone drops text that sits directly in a `<div>`/`<section>` (the bare `<div>` line, a line after a
  heading); reading the page's `<main>`/`<article>` whole with html-text keeps those lines but stores MediaWiki's
  page tools, language list and categories that sit inside `<main>` (html/wiki_like.html); html2txt,
  readability-lxml, justext and markitdown keep navigation or drop paragraphs.
- XLSX: **openpyxl** cell values (markitdown/pandas stores `NaN` and `Unnamed: 1`). EPUB: **markitdown**.
- TXT/MD: charset-normalizer with two corrections (`formats/text.py`; short cp1252/Latin-1 right, CJK and Cyrillic
  still detected: `tests/unit/ingest/formats/test_text_decoding.py`), python-frontmatter for front matter. JSON:
  paths and counted skips (`formats/json_records.py`).
- `unstructured`: {unstructured}

**Normalisation rules** (`deepsearcher/ingest/normalize.py`), the extractors with each rule switched off in turn
(expected found / noise absent per format). No rule lowers any format's score; plain NFKC instead of the targeted
compatibility mapping lowers TXT (it rewrites `…` and full-width punctuation that the fixtures expect kept). The
whitespace rule cannot show here (the score folds whitespace); `tests/unit/ingest/test_normalize.py` covers it:

{rules}

Fixtures not perfect with the built-in loader (load_bytes + normalisation stage): {"none." if none_left else chr(10) + chr(10) + imperfect}
"""


def write_section(path: Path, body: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(SECTION) + r".*?(?=\n## |\Z)", re.S)
    text = pattern.sub(lambda _: body.rstrip() + "\n", text) if pattern.search(text) else \
        text.rstrip() + "\n\n" + body.rstrip() + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default=None, help="Also write the fixture files and manifest.json here.")
    parser.add_argument("--out", default=None, help="Markdown file whose 'Ingestion fidelity' section is replaced.")
    parser.add_argument("--details", action="store_true", help="Print every imperfect (fixture, extractor) pair.")
    args = parser.parse_args()
    fixtures = build(Path(args.dir)) if args.dir else all_fixtures()
    started = time.perf_counter()
    runs = run_all(fixtures)
    summary = table(runs)
    ours = details(runs, only=OURS[-1][0])
    rules = ablation(fixtures)
    print(side_by_side(runs) + "\n\n" + summary)
    print("\nNormalisation rules (expected found / noise absent, new extractors):\n" + rules)
    print(f"\n{len(fixtures)} fixtures, {len(runs)} runs in {time.perf_counter() - started:.1f} s")
    print("\nImperfect fixtures of the new path:\n" + ours)
    if args.details:
        print("\nAll imperfect pairs:\n" + details(runs))
    if args.out:
        write_section(Path(args.out), render(date.today().isoformat(), fixtures, summary, rules, ours,
                                             unstructured_note(runs), side_by_side(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
