"""Rich rendering of results and progress for the CLI (the library itself never prints)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from deepsearcher.types import Chunk, Event, Hit, LoadSummary


def location(chunk: Chunk) -> str:
    """Human citation target: ``source`` plus ``, p. N`` for paged formats."""
    return f"{chunk.source}, p. {chunk.page}" if chunk.page is not None else chunk.source


class ProgressView:
    """A transient rich progress display fed by events: a bar with done/total, a text field and elapsed time.

    Args:
        console: where to draw (stderr in the CLI).
        quiet: draw nothing (``--json`` output).
        field: name of the task field shown after the bar.
        extra_columns: further rich columns (e.g. time remaining).
    """

    def __init__(self, console: Console, quiet: bool = False, field: str = "info",
                 extra_columns: Sequence[Any] = ()) -> None:
        self.console = console
        self.quiet = quiet
        self.progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn(f"{{task.fields[{field}]}}"),
                                 TimeElapsedColumn(), *extra_columns, console=console, transient=True,
                                 disable=quiet, redirect_stdout=False, redirect_stderr=False)

    def __enter__(self) -> "ProgressView":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]


class LoadProgress(ProgressView):
    """Progress bar for ``load``: sources done (of total when known) and chunks written."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        super().__init__(console, quiet, field="chunks_text")
        self.task: Any = None

    def on_event(self, event: Event) -> None:
        data = event.data
        if event.kind == "load.start":
            self.task = self.progress.add_task(f"Loading into {data['collection']}", total=data.get("total"),
                                               chunks_text="0 chunks")
        elif self.task is None:
            return
        elif event.kind == "load.source":
            self.progress.advance(self.task)
            if data.get("status") == "skipped" and not self.quiet:
                self.progress.console.print(f"[yellow]skipped[/] {data['source']}: {data['reason']}",
                                            highlight=False)
        elif event.kind == "load.batch":
            self.progress.update(self.task, chunks_text=f"{data['written']} chunks")
        elif event.kind in {"crawl.queued", "crawl.fetched"}:
            self.progress.update(self.task, total=data.get("queued"), description=f"Fetched {data.get('fetched', 0)}"
                                 f" of {data.get('queued', '?')} pages")


def render_load_summary(console: Console, summary: LoadSummary) -> None:
    """Summary table: loaded / unchanged / skipped (with reasons), chunks written, seconds."""
    table = Table(title=f"Loaded into collection {summary.collection}", show_lines=False)
    table.add_column("status")
    table.add_column("source")
    table.add_column("chunks", justify="right")
    table.add_column("reason")
    for res in summary.files:
        colour = {"loaded": "green", "unchanged": "dim", "skipped": "yellow"}[res.status]
        table.add_row(f"[{colour}]{res.status}[/]", res.source, str(res.chunks) if res.chunks else "",
                      res.reason)
    if len(summary.files) <= 60:
        console.print(table)
    counts = Counter(f.status for f in summary.files)
    console.print(
        f"[bold]{counts['loaded']}[/] loaded, {counts['unchanged']} unchanged, {counts['skipped']} skipped; "
        f"{summary.chunks_written} chunks written, {summary.chunks_deleted} stale chunks removed; "
        f"{summary.seconds:.1f} s ({summary.embed_seconds:.1f} s embedding)", highlight=False)


def render_hits(console: Console, hits: Sequence[Hit]) -> None:
    """Ranked chunks with score, collection, location and a text excerpt."""
    if not hits:
        console.print("No results.")
        return
    for rank, hit in enumerate(hits, start=1):
        excerpt = " ".join(hit.chunk.text.split())
        excerpt = excerpt[:400] + ("…" if len(excerpt) > 400 else "")
        console.print(f"[bold]{rank}.[/] [cyan]{hit.score:.4f}[/] [magenta]{hit.collection}[/] "
                      f"{location(hit.chunk)}" + (f" — {hit.chunk.title}" if hit.chunk.title else ""),
                      highlight=False)
        console.print(f"   {excerpt}", highlight=False, markup=False)


# --- query ---------------------------------------------------------------------------------------------------------
_STOP_TEXT = {"no_gaps": "nothing left to search", "max_iter": "reached --max-iter",
              "token_budget": "token budget spent", "duplicates": "new queries repeat earlier ones"}


class QueryProgress:
    """Live view of a query: one line per step above a spinner, then the answer streaming in as it is written.

    The streamed text is transient: once the run ends the CLI prints the verified report (citations checked and
    renumbered) in its place. ``verbose`` also prints the model's reasoning; ``quiet`` prints nothing (``--json``).
    """

    def __init__(self, console: Console, verbose: bool = False, quiet: bool = False) -> None:
        from rich.live import Live
        from rich.spinner import Spinner

        self.spinner = Spinner("dots")  # one instance, so it animates across refreshes
        self.console = console
        self.verbose = verbose
        self.quiet = quiet
        self.status = "Starting"
        self.answer = ""
        self.live = Live(console=console, transient=True, refresh_per_second=8, get_renderable=self._view,
                         redirect_stdout=False, redirect_stderr=False)

    def __enter__(self) -> "QueryProgress":
        if not self.quiet:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.quiet:
            self.live.stop()

    def _view(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        self.spinner.update(text=Text(self.status, style="bold"))
        if not self.answer:
            return self.spinner
        room = max(3, self.console.size.height - 4)
        tail = "\n".join(self.answer.splitlines()[-room:])
        return Group(self.spinner, Text(tail))

    def _line(self, text: str, style: str = "") -> None:
        if not self.quiet:
            self.console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)

    def on_event(self, event: Event) -> None:
        data = event.data
        kind = event.kind
        if kind == "query.start":
            self._line(f"Researching in {', '.join(data['collections'])} (max {data['max_iter']} rounds)")
            self.status = "Planning"
        elif kind == "query.agent" and data["chosen_by"] != "config":
            self._line(f"Agent: {data['agent']} (chosen by {data['chosen_by']})")
        elif kind == "query.sub_queries":
            self._line(f"Round {data['iteration']}: searching")
            for query in data["sub_queries"]:
                self._line(f"  • {query}")
            for query in data["duplicates"]:
                self._line(f"  – skipped near-duplicate: {query}", "dim")
            self.status = f"Round {data['iteration']}: routing and retrieving"
        elif kind == "query.routed":
            self.status = f"Round {data['iteration']}: retrieving and judging chunks"
            dropped = f" (ignored unknown: {', '.join(data['dropped'])})" if data["dropped"] else ""
            self._line(f"    → {data['sub_query']}: {', '.join(data['collections'])}{dropped}", "dim")
        elif kind == "query.accepted":
            self._line(f"    ✓ kept {data['accepted']} of {data['retrieved']} new chunks for: {data['sub_query']}",
                       "green" if data["accepted"] else "dim")
            self.status = f"Round {data['iteration']}: thinking"
        elif kind == "query.intermediate":
            self._line(f"    = {data['answer'] or '(no answer found)'}", "cyan")
        elif kind == "query.gaps":
            if data["gaps"] and data["stop"] is None:
                self._line("  Gaps to search next: " + "; ".join(data["gaps"]), "yellow")
            elif data["gaps"]:
                self._line("  Open gaps: " + "; ".join(data["gaps"]), "yellow")
            if data["stop"]:
                self._line(f"Research done after {data['iteration']} round(s): {_STOP_TEXT.get(data['stop'], '')}")
                self.status = "Writing the report"
            else:
                self.status = "Reflecting"
        elif kind == "query.fallback":
            self._line(f"  ! {data['step']}: {data['error']}; {data['fallback']}", "yellow")
        elif kind == "query.reasoning" and self.verbose:
            self._line(f"  [reasoning: {data['step']}]", "dim italic")
            self._line("    " + data["text"].strip().replace("\n", "\n    "), "dim")
        elif kind == "query.answer_token":
            self.answer += data["text"]
            self.status = "Writing the report"


def render_usage(console: Console, usage: Any, removed_citations: int = 0) -> None:
    """One line: LLM calls, prompt/completion tokens, seconds, cost when prices are set."""
    calls = "call" if usage.llm_calls == 1 else "calls"
    line = (f"Usage: {usage.llm_calls} LLM {calls}, {usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} "
            f"completion tokens, {usage.seconds:.1f} s")
    if usage.cost is not None:
        line += f", cost {usage.cost:.4f}"
    if removed_citations:
        line += f"; removed {removed_citations} citation(s) to unknown sources"
    console.print(line, highlight=False, style="dim" if not removed_citations else "", soft_wrap=True)
