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


class LoadProgress:
    """Progress bar for ``load``: sources done (of total when known) and chunks written."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self.progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[chunks]} chunks"),
                                 TimeElapsedColumn(), console=console, transient=True, disable=quiet)
        self.task: Any = None

    def __enter__(self) -> "LoadProgress":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def on_event(self, event: Event) -> None:
        data = event.data
        if event.kind == "load.start":
            self.task = self.progress.add_task(f"Loading into {data['collection']}", total=data.get("total"),
                                               chunks=0)
        elif self.task is None:
            return
        elif event.kind == "load.source":
            self.progress.advance(self.task)
            if data.get("status") == "skipped" and not self.quiet:
                self.progress.console.print(f"[yellow]skipped[/] {data['source']}: {data['reason']}",
                                            highlight=False)
        elif event.kind == "load.batch":
            self.progress.update(self.task, chunks=data["written"])
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
