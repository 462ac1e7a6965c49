"""Rich rendering of an evaluation run for the CLI: a progress bar fed by harness events, and the summary table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import TimeRemainingColumn
from rich.table import Table

from deepsearcher.eval.harness import EvalSummary
from deepsearcher.render import ProgressView
from deepsearcher.types import Event


class EvalProgress(ProgressView):
    """Two bars: the corpus load (chunks written) and the questions (done of total, running recall@5)."""

    def __init__(self, console: Console, quiet: bool = False, watch_k: int = 5) -> None:
        super().__init__(console, quiet, field="info", extra_columns=[TimeRemainingColumn()])
        self.watch_k = watch_k
        self._load: Any = None
        self._questions: Any = None
        self._recalls: list[float] = []

    def on_event(self, event: Event) -> None:
        data = event.data
        if event.kind == "load.start":
            self._load = self.progress.add_task(f"Loading corpus into {data['collection']}", total=None,
                                                info="")
        elif event.kind == "load.batch" and self._load is not None:
            self.progress.update(self._load, info=f"{data['written']} chunks")
        elif event.kind == "load.source" and self._load is not None:
            self.progress.update(self._load, total=1, completed=1,
                                 info=f"{data['status']} ({data.get('chunks', 0)} chunks)")
        elif event.kind == "eval.start":
            self._questions = self.progress.add_task(
                f"{data['dataset']} · {data['mode']} · {data['retrieval']}", total=data["total"],
                completed=data["done"], info="" if not data["done"] else f"resumed after {data['done']}")
        elif event.kind == "eval.question" and self._questions is not None:
            value = (data.get("recall") or {}).get(self.watch_k)
            if value is not None:
                self._recalls.append(value)
            info = (f"R@{self.watch_k} {sum(self._recalls) / len(self._recalls):.3f}" if self._recalls else "")
            if data.get("error"):
                info += " [yellow](errors)[/]"
            self.progress.update(self._questions, completed=data["done"], info=info)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_eval_summary(console: Console, summary: EvalSummary) -> None:
    """The summary table: recall@k (all gold / complete gold), answer EM/F1, usage, seconds, citations."""
    table = Table(title=f"{summary.dataset} · mode {summary.mode} · retrieval {summary.retrieval} · "
                        f"{summary.done}/{summary.questions} questions", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k in summary.ks:
        table.add_row(f"Recall@{k} (complete gold, n={summary.n_recall_complete})",
                      _fmt(summary.recall_complete.get(k)))
    for k in summary.ks:
        table.add_row(f"Recall@{k} (any gold, n={summary.n_recall_all})", _fmt(summary.recall_all.get(k)))
    if summary.em is not None:
        table.add_row("answer exact match", _fmt(summary.em))
        table.add_row("answer token F1", _fmt(summary.f1))
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
        table.add_row("corpus load (s, chunks written)",
                      f"{summary.load['seconds']:.1f} s, {summary.load['chunks_written']}")
    console.print(table)
    state = "complete" if summary.complete else "[yellow]incomplete: re-run the same command to resume[/]"
    console.print(f"Rows and summary in {summary.out_dir} ({state})", highlight=False)
