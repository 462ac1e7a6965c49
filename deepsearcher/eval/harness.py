"""``deepsearcher eval``: load a QA corpus into its own collection, run the questions, score them, write the results.

Output folder (``out_dir``):
- ``run.json``: the run's settings; a resumed run must match them.
- ``rows.jsonl``: one row per finished question, appended and flushed as each finishes (the resume log).
- ``rows.csv``: the same rows, flat (``recall@k`` columns), rewritten at the end.
- ``summary.json``: means over the rows (see ``EvalSummary``), rewritten at the end, also after an interruption.

Resuming: questions whose id already has a row without an error are skipped; rows with an error are run again.
The corpus load is idempotent (content-hashed chunk ids, unchanged sources skipped), so a re-run loads nothing.
Progress is reported as events: "eval.start", the load's own "load.*" events, "eval.question", "eval.done".
"""

from __future__ import annotations

import csv
import json
import logging
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from deepsearcher.errors import ConfigError, DeepSearcherError
from deepsearcher.eval.datasets import EvalDataset, EvalQuestion
from deepsearcher.eval.metrics import (
    citation_share, cover_match, exact_match, mean, recall_at_k, strip_citations, token_f1,
)
from deepsearcher import events
from deepsearcher.events import EventCallback, ignore_event
from deepsearcher.types import LoadSummary

log = logging.getLogger(__name__)

RETRIEVALS = ("dense", "bm25", "hybrid")
DEFAULT_KS = (1, 2, 5, 10)
#: run.json keys that must match for a resume (the rest may change, e.g. --limit); "questions" is the question file
RESUME_KEYS = ("questions", "dataset", "mode", "report", "retrieval", "collection", "embedding_model")


@dataclass(frozen=True)
class EvalRow:
    """The result of one question.

    Attributes:
        id, dataset, question_type, question: from the dataset.
        gold_titles, gold_complete, gold_answers: from the dataset.
        retrieved_titles: titles of the retrieved chunks best first (retrieve mode), or of the report's sources in
            citation-number order (agent modes).
        recall: k -> recall@k (None when the question has no gold title).
        answer: the agent's answer ("" in retrieve mode).
        short_answer: the report's one-line answer ("" in retrieve mode).
        em, f1: exact match / token F1 of the short answer (of the whole answer when the report has no short
            answer; None in retrieve mode).
        report_f1: token F1 of the whole answer (citations removed), as scored before reports had a short answer.
        cover_em: a gold answer appears in the short answer or in the whole answer (cover-EM).
        llm_calls, prompt_tokens, completion_tokens: LLM usage of the question (0 in retrieve mode).
        seconds: wall time of the question (embed + search in retrieve mode).
        citation_share: share of the answer's citations that resolve to a source (None with no citation).
        error: "" or the error that stopped the question (then it is run again on resume).
        kept_titles: titles of every chunk the agent kept (its ``QueryAccepted`` events, in order, each chunk once),
            cited or not: what recall "over every chunk kept" scores (empty in retrieve mode).
        fallbacks: the steps that used their fallback (``QueryFallback``: "step: error"), to tell a failing JSON
            step or an empty relevance verdict from a bad answer.
        unsourced_dates: dates the answer gives that are the run's own date and in no source or the question
            (``Report.unsourced_dates``: the date of the prompt, copied).
        unsupported_citations: the answer's cited sentences whose sources do not hold most of their words
            (``Report.unsupported_citations``).
    """

    id: str
    dataset: str
    question_type: str
    question: str
    gold_titles: list[str]
    gold_complete: bool
    gold_answers: list[str]
    retrieved_titles: list[str]
    recall: dict[int, float | None]
    answer: str = ""
    em: float | None = None
    f1: float | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    citation_share: float | None = None
    error: str = ""
    short_answer: str = ""
    report_f1: float | None = None
    cover_em: float | None = None
    kept_titles: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    unsourced_dates: list[str] = field(default_factory=list)
    unsupported_citations: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EvalRow":
        data = dict(data)
        data["recall"] = {int(k): v for k, v in (data.get("recall") or {}).items()}
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class EvalSummary:
    """Means over the finished rows of a run.

    Attributes:
        recall_all: k -> mean recall@k over questions with at least one gold title (``n_recall_all`` of them).
        recall_complete: k -> mean recall@k over questions whose gold set is complete (``n_recall_complete``);
            this is the number comparable with the reference system's evaluation.
        em, f1: mean exact match / token F1 of the short answers (None in retrieve mode).
        report_f1, cover_em: mean token F1 of the whole answers, and share of questions whose gold answer appears in
            the short or the whole answer (None in retrieve mode).
        llm_calls, prompt_tokens, completion_tokens: means per question.
        seconds_mean, seconds_p50, seconds_p95: per-question wall time.
        citation_share: mean share of resolving citations over questions that cite.
        load: the corpus load (None when the corpus was not loaded in this run).
        complete: every selected question has a row without error.
    """

    dataset: str
    mode: str
    retrieval: str
    collection: str
    embedding_model: str
    questions: int
    done: int
    errors: int
    ks: list[int]
    recall_all: dict[int, float | None]
    n_recall_all: int
    recall_complete: dict[int, float | None]
    n_recall_complete: int
    em: float | None
    f1: float | None
    llm_calls: float | None
    prompt_tokens: float | None
    completion_tokens: float | None
    seconds_mean: float | None
    seconds_p50: float | None
    seconds_p95: float | None
    citation_share: float | None
    out_dir: str
    complete: bool
    load: dict[str, Any] | None = field(default=None)
    report_f1: float | None = None
    cover_em: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class QueryTrail:
    """An ``on_event`` callback that records what a query kept and where it fell back, then passes every event on
    (the app's own callback keeps its progress display)."""

    def __init__(self, forward: EventCallback) -> None:
        self.forward = forward
        self.kept_ids: list[str] = []
        self.kept_titles: list[str] = []
        self.fallbacks: list[str] = []

    def __call__(self, event: events.Event) -> None:
        if isinstance(event, events.QueryAccepted):
            for ref in event.chunks:
                if ref.id not in self.kept_ids:
                    self.kept_ids.append(ref.id)
                    self.kept_titles.append(ref.title)
        elif isinstance(event, events.QueryFallback):
            self.fallbacks.append(f"{event.step}: {event.error}")
        self.forward(event)


def eval_modes(registry: Any) -> list[str]:
    """The modes ``deepsearcher eval`` accepts: "retrieve" (no LLM) and every registered agent."""
    return ["retrieve", *registry.names("agent")]


def check_long_report_mode(app: Any, mode: str) -> None:
    """Refuse ``--report long`` with a mode whose agent does not declare ``sections``
    (``agents.base.AgentCapabilities``; retrieve mode writes no report).

    Raises:
        ConfigError: the message names the agents that write long reports.
    """
    from deepsearcher.agents.long_report.agent import also, either, section_agents

    capable = section_agents(app.registry, app.settings.agent_options)
    if mode not in capable:
        raise ConfigError(f"long reports are written by {either(capable)}, not mode {mode!r}",
                          hint=f"use --mode {capable[0]}{also(capable)} with --report long")


def collection_name(dataset: str) -> str:
    """Collection used for a dataset's corpus, e.g. ``eval_2wikimultihopqa``."""
    return "eval_" + re.sub(r"[^A-Za-z0-9_]", "_", dataset)[:200]


class EvalHarness:
    """Run one evaluation.

    Args:
        app: a ``DeepSearcher``.
        dataset: questions and corpus (see ``load_dataset``).
        out_dir: output folder (created).
        mode: "retrieve" (no LLM) or an agent name.
        retrieval: "dense", "bm25" or "hybrid" (retrieve mode; agents use dense or hybrid).
        limit: first N questions only.
        collection: collection to use (default ``collection_name(dataset.name)``).
        ks: recall cut-offs; retrieve mode fetches max(ks) chunks per question.
        restart: discard earlier rows in ``out_dir`` (this run's, or another run's) instead of resuming
            (``--force``).
        on_event: progress callback.
        report: "short", or "long" to answer with a long report (agent modes whose agent declares sections:
            deep_research, deep_search, a plugin's).

    Raises:
        ConfigError: unknown mode/retrieval, a long report in retrieve mode, or ``out_dir`` holds another run
            (another question file or other settings) and ``restart`` is False (raised by ``run`` before anything
            is written).
    """

    def __init__(self, app: Any, dataset: EvalDataset, out_dir: str | Path, *, mode: str = "retrieve",
                 retrieval: str = "hybrid", limit: int | None = None, collection: str | None = None,
                 ks: Sequence[int] = DEFAULT_KS, restart: bool = False,
                 on_event: EventCallback = ignore_event, report: str = "short") -> None:
        modes = eval_modes(app.registry)
        if mode not in modes:
            raise ConfigError(f"unknown eval mode {mode!r}", hint=f"use one of {', '.join(modes)}")
        if retrieval not in RETRIEVALS:
            raise ConfigError(f"unknown retrieval {retrieval!r}", hint=f"use one of {', '.join(RETRIEVALS)}")
        if mode != "retrieve" and retrieval == "bm25":
            raise ConfigError("agents retrieve with dense or hybrid search", hint="use --retrieval dense|hybrid")
        if report == "long":
            check_long_report_mode(app, mode)
        self.report = report
        self.app = app
        self.dataset = dataset
        self.out_dir = Path(out_dir)
        self.mode = mode
        self.retrieval = retrieval
        self.questions = dataset.questions[:limit] if limit else list(dataset.questions)
        self.collection = collection or collection_name(dataset.name)
        self.ks = sorted(set(int(k) for k in ks))
        self.restart = restart
        self.on_event = on_event
        self.load_summary: LoadSummary | None = None

    # --- files ---------------------------------------------------------------------------------------------------
    @property
    def rows_path(self) -> Path:
        return self.out_dir / "rows.jsonl"

    def _run_settings(self) -> dict[str, Any]:
        questions = str(self.dataset.questions_file) if self.dataset.questions_file else None
        long = {"report": "long"} if self.report == "long" else {}  # absent for short runs: older run.json match
        return {"questions": questions, "dataset": self.dataset.name, "mode": self.mode, **long,
                "retrieval": self.retrieval,
                "collection": self.collection, "embedding_model": self.app.embedder.model_name,
                "corpus": str(self.dataset.corpus) if self.dataset.corpus else None, "ks": self.ks}

    def _prepare_out_dir(self) -> dict[str, EvalRow]:
        """Create the folder, check run.json, and return the finished rows by question id."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        settings = self._run_settings()
        run_file = self.out_dir / "run.json"
        if self.restart:
            for name in ("rows.jsonl", "rows.csv", "summary.json"):
                (self.out_dir / name).unlink(missing_ok=True)
        elif run_file.is_file() and self.rows_path.is_file():
            before = json.loads(run_file.read_text(encoding="utf-8"))
            # a key an older run.json does not have cannot be compared (runs from before it was recorded)
            changed = [k for k in RESUME_KEYS if k in before and before[k] != settings.get(k)]
            if changed:
                detail = ", ".join(f"{k}: {before[k]} there, {settings.get(k)} now" for k in changed)
                raise ConfigError(
                    f"{self.out_dir} holds the rows of another run ({detail}); nothing was changed",
                    hint="use another --out folder, or --force to discard that run's rows")
        run_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")
        return read_rows(self.rows_path)

    # --- steps ---------------------------------------------------------------------------------------------------
    def ensure_corpus(self) -> LoadSummary | None:
        """Load the corpus into the run's collection; a complete earlier load is skipped by the load pipeline.

        Raises:
            ConfigError: no corpus is known and the collection does not exist.
        """
        if self.dataset.corpus is None:
            if self.collection not in self.app.store.list_collections():
                raise ConfigError(f"no corpus for dataset {self.dataset.name!r} and no collection "
                                  f"{self.collection!r}", hint="pass --corpus PATH")
            return None
        description = f"Evaluation corpus of {self.dataset.name} ({self.dataset.corpus.name})"
        self.load_summary = self.app.load([str(self.dataset.corpus)], self.collection, description,
                                          on_event=self.on_event)
        return self.load_summary

    def answer(self, q: EvalQuestion) -> EvalRow:
        """Run one question in the harness's mode and score it."""
        start = time.perf_counter()
        base: dict[str, Any] = dict(id=q.id, dataset=q.dataset, question_type=q.question_type, question=q.question,
                    gold_titles=q.gold_titles, gold_complete=q.gold_complete, gold_answers=q.answers)
        if self.mode == "retrieve":
            hits = self.app.retrieve(q.question, top_k=max(self.ks), collections=[self.collection],
                                     mode=self.retrieval)
            seconds = time.perf_counter() - start
            titles = [h.chunk.title for h in hits]
            return EvalRow(**base, retrieved_titles=titles, recall=self._recall(titles, q), seconds=seconds)
        trail = QueryTrail(getattr(self.app, "on_event", ignore_event))
        report = self.app.query(q.question, collections=[self.collection], agent=self.mode, report=self.report,
                                on_event=trail)
        seconds = time.perf_counter() - start
        sources = sorted(report.sources, key=lambda s: s.number)
        titles = [s.chunk.title for s in sources]
        usage = report.usage
        plain = strip_citations(report.answer)
        scored = report.short_answer or plain
        gold = q.answers or None
        return EvalRow(**base, retrieved_titles=titles, recall=self._recall(titles, q), answer=report.answer,
                       short_answer=report.short_answer,
                       em=exact_match(scored, q.answers) if gold else None,
                       f1=token_f1(scored, q.answers) if gold else None,
                       report_f1=token_f1(plain, q.answers) if gold else None,
                       cover_em=max(cover_match(scored, q.answers), cover_match(plain, q.answers)) if gold else None,
                       llm_calls=usage.llm_calls, prompt_tokens=usage.prompt_tokens,
                       completion_tokens=usage.completion_tokens, seconds=usage.seconds or seconds,
                       kept_titles=trail.kept_titles, fallbacks=trail.fallbacks,
                       unsourced_dates=report.unsourced_dates,
                       unsupported_citations=[u.sentence for u in report.unsupported_citations],
                       citation_share=citation_share(report.answer, [s.number for s in report.sources],
                                                     report.removed_citations))

    def _recall(self, titles: list[str], q: EvalQuestion) -> dict[int, float | None]:
        return {k: recall_at_k(titles, q.gold_titles, k) for k in self.ks}

    def run(self) -> EvalSummary:
        """Load the corpus, run every unfinished question, write rows, CSV and summary.

        Errors of a single question in agent modes (an LLM failure) are recorded in its row and the run goes on;
        errors of retrieval or the store stop the run. An interruption (KeyboardInterrupt) still writes the CSV
        and summary of the rows so far, then propagates.
        """
        done = self._prepare_out_dir()
        self.ensure_corpus()
        todo = [q for q in self.questions if q.id not in done or done[q.id].error]
        self.on_event(events.EvalStart(dataset=self.dataset.name, mode=self.mode, retrieval=self.retrieval,
                                total=len(self.questions), done=len(self.questions) - len(todo)))
        finished = {k: v for k, v in done.items() if not v.error}
        try:
            with self.rows_path.open("a", encoding="utf-8") as fh:
                for q in todo:
                    row = self._answer_safely(q)
                    fh.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
                    fh.flush()
                    finished[q.id] = row
                    self.on_event(events.EvalQuestion(
                        id=q.id, done=sum(1 for x in self.questions if x.id in finished),
                        total=len(self.questions), recall=row.recall, seconds=row.seconds, error=row.error))
        finally:
            rows = [finished[q.id] for q in self.questions if q.id in finished]
            summary = self.summarise(rows)
            # rows of questions outside this selection (an earlier, larger --limit) are kept, not dropped
            selected = {q.id for q in self.questions}
            self.write_outputs(rows + [r for qid, r in finished.items() if qid not in selected], summary)
        self.on_event(events.EvalDone(summary=summary.to_dict()))
        return summary

    def _answer_safely(self, q: EvalQuestion) -> EvalRow:
        if self.mode == "retrieve":
            return self.answer(q)
        try:
            return self.answer(q)
        except DeepSearcherError as exc:  # e.g. an LLM failing after its retries: record and go on
            log.warning("question %s failed: %s", q.id, exc)
            return EvalRow(id=q.id, dataset=q.dataset, question_type=q.question_type, question=q.question,
                           gold_titles=q.gold_titles, gold_complete=q.gold_complete, gold_answers=q.answers,
                           retrieved_titles=[], recall={}, error=f"{type(exc).__name__}: {exc}")

    # --- results -------------------------------------------------------------------------------------------------
    def summarise(self, rows: Sequence[EvalRow]) -> EvalSummary:
        """Means over rows without error (see ``EvalSummary``)."""
        ok = [r for r in rows if not r.error]
        with_gold = [r for r in ok if r.gold_titles]
        complete = [r for r in with_gold if r.gold_complete]
        answered = [r for r in ok if r.em is not None]
        seconds = np.array([r.seconds for r in ok]) if ok else None
        agent = self.mode != "retrieve"
        load = None
        if self.load_summary is not None:
            ls = self.load_summary
            load = {"seconds": ls.seconds, "embed_seconds": ls.embed_seconds, "chunks_written": ls.chunks_written,
                    "status": [f.status for f in ls.files]}
        ids = {q.id for q in self.questions}
        return EvalSummary(
            dataset=self.dataset.name, mode=self.mode, retrieval=self.retrieval, collection=self.collection,
            embedding_model=self.app.embedder.model_name, questions=len(self.questions), done=len(ok),
            errors=len(rows) - len(ok), ks=self.ks,
            recall_all={k: mean(r.recall.get(k) for r in with_gold) for k in self.ks}, n_recall_all=len(with_gold),
            recall_complete={k: mean(r.recall.get(k) for r in complete) for k in self.ks},
            n_recall_complete=len(complete),
            em=mean(r.em for r in answered) if answered else None,
            f1=mean(r.f1 for r in answered) if answered else None,
            llm_calls=mean(r.llm_calls for r in ok) if agent and ok else None,
            prompt_tokens=mean(r.prompt_tokens for r in ok) if agent and ok else None,
            completion_tokens=mean(r.completion_tokens for r in ok) if agent and ok else None,
            seconds_mean=float(seconds.mean()) if seconds is not None else None,
            seconds_p50=float(np.percentile(seconds, 50)) if seconds is not None else None,
            seconds_p95=float(np.percentile(seconds, 95)) if seconds is not None else None,
            citation_share=mean(r.citation_share for r in ok) if agent else None,
            out_dir=str(self.out_dir), complete=ids <= {r.id for r in ok}, load=load,
            report_f1=mean(r.report_f1 for r in answered) if answered else None,
            cover_em=mean(r.cover_em for r in answered) if answered else None)

    def write_outputs(self, rows: Sequence[EvalRow], summary: EvalSummary) -> None:
        """Rewrite rows.jsonl (deduplicated), rows.csv and summary.json."""
        tmp = self.rows_path.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
        tmp.replace(self.rows_path)
        write_csv(self.out_dir / "rows.csv", rows, self.ks)
        (self.out_dir / "summary.json").write_text(json.dumps(summary.to_dict(), indent=2), encoding="utf-8")


def read_rows(path: Path) -> dict[str, EvalRow]:
    """Rows of a rows.jsonl by id (the last row of an id wins); a torn last line from a crash is ignored."""
    rows: dict[str, EvalRow] = {}
    if not path.is_file():
        return rows
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = EvalRow.from_dict(json.loads(line))
        except (json.JSONDecodeError, TypeError) as exc:
            log.warning("%s:%d: unreadable row skipped (%s)", path, number, exc)
            continue
        rows[row.id] = row
    return rows


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a string from outside (a question, a title, a model's answer) that
    starts like a formula (``=HYPERLINK(...)``, ``+``, ``-``, ``@``) gets a leading apostrophe (OWASP's CSV
    injection advice), so opening rows.csv never runs it; numbers stay numbers."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def write_csv(path: Path, rows: Sequence[EvalRow], ks: Sequence[int]) -> None:
    """Flat CSV of rows: lists joined with " | ", recall as ``recall@k`` columns, text cells that start like a
    spreadsheet formula prefixed with an apostrophe (``_cell``)."""
    columns = ["id", "dataset", "question_type", "question", "gold_titles", "gold_complete", "gold_answers",
               "retrieved_titles", *[f"recall@{k}" for k in ks], "answer", "short_answer", "em", "f1",
               "report_f1", "cover_em", "llm_calls", "prompt_tokens", "completion_tokens", "seconds",
               "citation_share", "error", "kept_titles", "fallbacks", "unsourced_dates",
               "unsupported_citations"]
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            data = row.to_dict()
            recall = data.pop("recall")
            data = {key: " | ".join(value) if isinstance(value, list) else value for key, value in data.items()}
            for k in ks:
                data[f"recall@{k}"] = recall.get(k)
            writer.writerow({key: _cell(value) for key, value in data.items()})
