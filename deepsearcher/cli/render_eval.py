"""Rich rendering of an evaluation run for the CLI: a progress bar fed by harness events, and the summary table."""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.console import Console
from rich.progress import TimeRemainingColumn
from rich.table import Table

from deepsearcher.eval.harness import EvalSummary
from deepsearcher.events import EvalQuestion, EvalStart, LoadBatch, LoadSource, LoadStart
from deepsearcher.cli.render import ProgressView, rate
from deepsearcher.cli.safe_text import one_line, plain, safe


class EvalProgress(ProgressView):
    """Two bars: the corpus load (chunks written of chunks split) and the questions (done of total, running
    recall@5). Without a terminal: a plain line every few seconds (``ProgressView.plain_line``)."""

    def __init__(self, console: Console, quiet: bool = False, watch_k: int = 5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(console, quiet, field="info", extra_columns=[TimeRemainingColumn()], clock=clock)
        self.watch_k = watch_k
        self._load: Any = None
        self._questions: Any = None
        self._recalls: list[float] = []
        self._collection = ""
        self._phase_start = self.started
        self.handlers = {LoadStart: self._load_start, LoadBatch: self._load_batch, LoadSource: self._load_source,
                         EvalStart: self._start, EvalQuestion: self._question}
        # a corpus is a file with a description; the summary is printed at the end
        self.ignored = {"crawl.queued", "crawl.fetched", "load.describe", "eval.done"}

    def _load_start(self, event: LoadStart) -> None:
        self._collection = event.collection
        self._phase_start = self.clock()
        self._load = self.progress.add_task(safe(f"Loading corpus into {event.collection}"), total=None, info="")
        self.plain_line(f"Loading corpus into {event.collection}", now=True)

    def _load_batch(self, event: LoadBatch) -> None:
        if self._load is not None:
            self.progress.update(self._load, completed=event.written, total=event.queued or None,
                                 info=f"{event.written:,} chunks")
        seconds = self.clock() - self._phase_start
        self.plain_line(f"Loading corpus into {self._collection}: {event.written:,}/{event.queued:,} chunks "
                        f"({rate(event.written, seconds)} chunks/s), {seconds:.0f} s")

    def _load_source(self, event: LoadSource) -> None:
        if self._load is None:
            return
        if event.status == "unchanged":
            info = "already loaded (unchanged)"
            self.progress.update(self._load, total=1, completed=1, info=info)
        else:
            info = f"{event.status} ({event.chunks:,} chunks)" + (f": {event.reason}" if event.reason else "")
            self.progress.update(self._load, info=info)
        self.plain_line(f"Corpus {one_line(event.source)}: {one_line(info)}", now=True)

    def _start(self, event: EvalStart) -> None:
        self._phase_start = self.clock()
        self._questions = self.progress.add_task(
            safe(f"{event.dataset} · {event.mode} · {event.retrieval}"), total=event.total, completed=event.done,
            info="" if not event.done else f"resumed after {event.done}")
        resumed = f" (resuming after {event.done})" if event.done else ""
        self.plain_line(f"Questions: {event.dataset} · {event.mode} · {event.retrieval}, {event.total}{resumed}",
                        now=True)

    def _question(self, event: EvalQuestion) -> None:
        if self._questions is None:
            return
        value = (event.recall or {}).get(self.watch_k)
        if value is not None:
            self._recalls.append(value)
        info = (f"R@{self.watch_k} {sum(self._recalls) / len(self._recalls):.3f}" if self._recalls else "")
        self.progress.update(self._questions, completed=event.done,
                             info=info + (" [yellow](errors)[/]" if event.error else ""))
        seconds = self.clock() - self._phase_start
        self.plain_line(f"Questions {event.done}/{event.total}" + (f", {info}" if info else "")
                        + (" (some with errors)" if event.error else "") + f", {seconds:.0f} s")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_eval_summary(console: Console, summary: EvalSummary) -> None:
    """The summary table: recall@k (all gold / complete gold), answer EM/F1, usage, seconds, citations."""
    table = Table(title=plain(f"{summary.dataset} · mode {summary.mode} · retrieval {summary.retrieval} · "
                              f"{summary.done}/{summary.questions} questions"), title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k in summary.ks:
        table.add_row(f"Recall@{k} (complete gold, n={summary.n_recall_complete})",
                      _fmt(summary.recall_complete.get(k)))
    for k in summary.ks:
        table.add_row(f"Recall@{k} (any gold, n={summary.n_recall_all})", _fmt(summary.recall_all.get(k)))
    if summary.em is not None:
        table.add_row("short answer exact match", _fmt(summary.em))
        table.add_row("short answer token F1", _fmt(summary.f1))
        table.add_row("gold answer in the answer (cover-EM)", _fmt(summary.cover_em))
        table.add_row("whole answer token F1", _fmt(summary.report_f1))
    if summary.llm_calls is not None:
        table.add_row("LLM calls / question", _fmt(summary.llm_calls, 2))
        table.add_row("prompt tokens / question", _fmt(summary.prompt_tokens, 0))
        table.add_row("completion tokens / question", _fmt(summary.completion_tokens, 0))
    if summary.citation_share is not None:
        table.add_row("citations that resolve", _fmt(summary.citation_share))
    if summary.seconds_mean is not None:
        table.add_row("seconds / question (mean · p50 · p95)",
                      f"{summary.seconds_mean:.3f} · {summary.seconds_p50:.3f} · {summary.seconds_p95:.3f}")
    if summary.errors:
        table.add_row("[yellow]questions with errors[/]", str(summary.errors))
    if summary.load:
        unchanged = summary.load["status"] and all(s == "unchanged" for s in summary.load["status"])
        table.add_row("corpus load", "already loaded (unchanged)" if unchanged else
                      f"{summary.load['seconds']:.1f} s, {summary.load['chunks_written']:,} chunks written")
    console.print(table)
    state = "complete" if summary.complete else "[yellow]incomplete: re-run the same command to resume[/]"
    console.print(f"Rows and summary in {safe(summary.out_dir)} ({state})", highlight=False)
