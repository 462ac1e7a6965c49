"""Evaluation datasets: questions with gold answers and gold supporting titles, plus the corpus to retrieve from.

One record format (``multihop_unified_1100.jsonl`` in the project's shared data, one JSON object per line):
``id``, ``dataset``, ``question``, ``answer``, ``answer_aliases``, ``question_type``, ``supporting_titles`` (null when
the gold set is incomplete) and ``gold_passages`` (``[{title, text}]``). A dataset is given as

- a unified JSONL/JSON file (``subset`` picks one ``dataset`` value when the file holds several), or
- a dataset folder holding one ``*_corpus.json`` (e.g. ``qa/2wikimultihopqa_hipporag/``): its questions are read from
  the unified file in the sibling ``unified/`` folder.

Corpora are JSON lists of ``{title, text}`` (loaded as they are) or a dict ``title -> [sentences]`` (HotpotQA), which
is rewritten once as ``{title, text}`` JSONL in a cache folder so that the builtin JSON loader reads it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepsearcher.errors import ConfigError

UNIFIED_GLOB = "*.jsonl"


@dataclass(frozen=True)
class EvalQuestion:
    """One evaluation question.

    Attributes:
        id: stable id (resume key).
        dataset: dataset name, e.g. "2wikimultihopqa".
        question: the question text.
        answers: gold answer first, then its aliases.
        gold_titles: gold supporting titles (for incomplete gold: the titles that are known; may be empty).
        gold_complete: False when the gold set is known to be incomplete (left out of the "complete gold" mean).
        question_type: e.g. "compositional", "bridge/medium".
    """

    id: str
    dataset: str
    question: str
    answers: list[str]
    gold_titles: list[str]
    gold_complete: bool
    question_type: str = ""


@dataclass(frozen=True)
class EvalDataset:
    """Questions plus the corpus file they are answered from.

    Attributes:
        name: dataset name (used in the collection name and the output folder).
        questions: in file order.
        corpus: JSON/JSONL corpus file of ``{title, text}`` records, or None when not known (then the collection must
            already exist).
        questions_file: the file the questions were read from (absolute); runs are keyed by it.
    """

    name: str
    questions: list[EvalQuestion]
    corpus: Path | None = None
    notes: list[str] = field(default_factory=list)
    questions_file: Path | None = None


def load_dataset(path: str | Path, *, subset: str | None = None, corpus: str | Path | None = None,
                 cache_dir: str | Path | None = None) -> EvalDataset:
    """Resolve a dataset argument into questions and a corpus file.

    Args:
        path: a unified JSONL/JSON file, or a dataset folder with one ``*_corpus.json``.
        subset: the ``dataset`` value to keep when the file holds several datasets.
        corpus: corpus file; overrides the one found beside the questions.
        cache_dir: where to write a normalised copy of a dict-shaped corpus (default ``~/.cache/deepsearcher/eval``).

    Raises:
        ConfigError: the path does not exist, holds no questions, mixes datasets without ``subset``, or no corpus is
            found (the message says which option to pass).
    """
    src = Path(path).expanduser()
    if not src.exists():
        raise ConfigError(f"dataset not found: {src}", hint="pass a unified JSONL file or a dataset folder")
    found_corpus: Path | None = None
    if src.is_dir():
        found_corpus = _single_corpus(src)
        name = subset or _dataset_name_from_corpus(found_corpus)
        unified = sorted((src.parent / "unified").glob(UNIFIED_GLOB))
        if not unified:
            raise ConfigError(f"no question file for folder {src}",
                              hint="pass the unified JSONL file itself with --corpus")
        questions_file = unified[0]
        records = [r for r in _read_records(questions_file) if r.get("dataset") == name]
        if not records:
            raise ConfigError(f"{unified[0]} has no questions of dataset {name!r}", hint="pass --subset NAME")
    else:
        questions_file = src
        records = _read_records(src)
        names = sorted({str(r.get("dataset") or "") for r in records})
        if subset:
            records = [r for r in records if r.get("dataset") == subset]
            if not records:
                raise ConfigError(f"{src} has no questions of dataset {subset!r}",
                                  hint=f"datasets in the file: {', '.join(names)}")
            name = subset
        elif len(names) > 1:
            raise ConfigError(f"{src} holds several datasets ({', '.join(names)}); each has its own corpus",
                              hint="choose one with --subset NAME")
        else:
            name = names[0] if names and names[0] else src.stem
        if corpus is None:
            found_corpus = _sibling_corpus(src, name)
    corpus_path = Path(corpus).expanduser() if corpus is not None else found_corpus
    if corpus_path is not None:
        if not corpus_path.is_file():
            raise ConfigError(f"corpus not found: {corpus_path}")
        corpus_path = normalise_corpus(corpus_path, cache_dir)
    questions = [_question(r, name) for r in records]
    if not questions:
        raise ConfigError(f"no questions in {src}")
    return EvalDataset(name=name, questions=questions, corpus=corpus_path, questions_file=questions_file.resolve())


def default_run_folder(dataset: EvalDataset, mode: str, retrieval: str) -> Path:
    """``eval_runs/<question file>-<dataset>-<mode>-<retrieval>`` (the dataset part left out when the file is named
    after it): one folder per question file, so two question files never share (and overwrite) one run."""
    stem = dataset.questions_file.stem if dataset.questions_file else dataset.name
    key = stem if dataset.name in stem else f"{stem}-{dataset.name}"
    return Path("eval_runs") / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}-{mode}-{retrieval}"


def _read_records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines() if path.suffix in {".jsonl", ".ndjson"} else [text]
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            loaded = json.loads(line)
        except json.JSONDecodeError as exc:  # the file's line: a JSONL line is parsed alone (its lineno is 1)
            where = exc.lineno if len(lines) == 1 else number
            what = exc.msg.removesuffix(" at")  # "Unterminated string starting at" + its position
            raise ConfigError(f"{path}: invalid JSON at line {where}, column {exc.colno}: {what}") from exc
        rows.extend(loaded if isinstance(loaded, list) and len(lines) == 1 else [loaded])
    bad = [i for i, r in enumerate(rows) if not isinstance(r, dict) or "question" not in r]
    if bad:
        raise ConfigError(f"{path}: record {bad[0]} has no 'question' (expected the unified record format)")
    return rows


def _question(rec: dict[str, Any], dataset: str) -> EvalQuestion:
    answers = [str(rec.get("answer") or "")] + [str(a) for a in rec.get("answer_aliases") or []]
    titles = rec.get("supporting_titles")
    complete = titles is not None
    if titles is None:
        titles = [p.get("title", "") for p in rec.get("gold_passages") or [] if isinstance(p, dict)]
    qid = str(rec.get("id") or hashlib.sha256(rec["question"].encode("utf-8")).hexdigest()[:16])
    return EvalQuestion(id=qid, dataset=str(rec.get("dataset") or dataset), question=str(rec["question"]),
                        answers=[a for a in answers if a], gold_titles=[str(t) for t in titles if t],
                        gold_complete=complete, question_type=str(rec.get("question_type") or ""))


def _single_corpus(folder: Path) -> Path:
    found = sorted(folder.glob("*corpus*.json")) + sorted(folder.glob("*corpus*.jsonl"))
    if len(found) != 1:
        raise ConfigError(f"expected one *_corpus.json in {folder}, found {len(found)}", hint="pass --corpus PATH")
    return found[0]


def _dataset_name_from_corpus(corpus: Path) -> str:
    return re.sub(r"(_train|_dev|_test)?_corpus$", "", corpus.stem)


def _sibling_corpus(questions_file: Path, name: str) -> Path | None:
    """The corpus of dataset ``name`` in a sibling folder of the unified file's folder (the shared data layout)."""
    for folder in sorted(questions_file.parent.parent.glob(f"{name}*")):
        if folder.is_dir():
            try:
                return _single_corpus(folder)
            except ConfigError:
                continue
    return None


def normalise_corpus(path: Path, cache_dir: str | Path | None = None) -> Path:
    """Return ``path`` if it is a JSON list/JSONL of ``{title, text}``; else a ``{title, text}`` JSONL copy.

    A dict ``title -> text or [sentences]`` is rewritten (sentences joined with "") into ``cache_dir``, named by the
    source's content hash, so repeated runs reuse the same file and the load stays idempotent.

    Raises:
        ConfigError: the corpus is neither shape.
    """
    if path.suffix in {".jsonl", ".ndjson"}:
        return path
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return path
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a corpus must be a JSON list of {{title, text}} or a dict title -> text")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    folder = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "deepsearcher" / "eval"
    target = folder / f"{path.stem}-{digest}.jsonl"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for title, value in data.items():
                text = "".join(value) if isinstance(value, list) else str(value)
                fh.write(json.dumps({"title": title, "text": text}, ensure_ascii=False) + "\n")
        tmp.replace(target)
    return target
