"""``deepsearcher load DIR --watch``: the first load with its usual progress and summary, then one line per batch of
changes (``ingest.watch.FolderWatch``) until Ctrl-C or SIGTERM, which end it with the totals (exit 130 / 143, as an
interrupted load)."""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from rich.console import Console
from rich.text import Text

from deepsearcher.cli.safe_text import one_line
from deepsearcher.errors import ConfigError
from deepsearcher.events import ignore_event
from deepsearcher.ingest.watch import FolderWatch, WatchBatch
from deepsearcher.types import LoadSummary


def check_watch_inputs(inputs: Sequence[str], as_json: bool) -> Path:
    """The one folder ``--watch`` keeps in sync.

    Raises:
        ConfigError: not exactly one existing folder, or ``--json`` (a watch prints lines, not one summary).
    """
    if as_json:
        raise ConfigError("--watch prints one line per change batch; it has no --json output",
                          hint="drop --json (or load without --watch)")
    hint = "give one existing folder: deepsearcher load DIR --watch"
    if len(inputs) != 1:
        raise ConfigError(f"--watch keeps one folder in sync; got {len(inputs)} inputs: {', '.join(inputs)}",
                          hint="watch one folder per command (run one per folder), or load the rest without --watch")
    folder = Path(inputs[0]).expanduser()
    if folder.is_dir():
        return folder
    if "://" in inputs[0]:
        why = "is a URL; --watch follows a folder's file-system changes"
    elif folder.exists():
        why = "is a file, not a folder"
    elif any(char in inputs[0] for char in "*?["):
        why = "is a glob pattern, not a folder"
    else:
        why = "does not exist"
    raise ConfigError(f"--watch keeps one folder in sync; {inputs[0]} {why}", hint=hint)


def lite_file_filter(uri: str) -> Callable[[str], bool]:
    """``path -> True`` for the Milvus Lite file and what Milvus Lite keeps beside it: its own writes must not count
    as changes when it lies inside the watched folder."""
    if "://" in uri:
        return lambda path: False
    db = str(Path(uri).expanduser().resolve())
    return lambda path: str(Path(path).resolve()).startswith(db)


def store_uri(settings: Any) -> str:
    """The configured store's URI, a Lite file's path resolved as the store resolves it."""
    return str(settings.vector_db.resolved(settings.resolve_path).uri)


@contextmanager
def signal_kind(term_error: type[KeyboardInterrupt] = KeyboardInterrupt) -> Iterator[list[int]]:
    """Record the signals that stop the watch: a SIGTERM that arrives while the watcher waits is seen by it only as
    "a signal" (it ends the wait with KeyboardInterrupt), so the exit code comes from this record. A SIGTERM raises
    ``term_error`` (the CLI's ``Terminated``, a KeyboardInterrupt) where it lands."""
    seen: list[int] = []

    def on_term(signum: int, frame: Any) -> None:
        seen.append(signum)
        raise term_error()  # stops a batch where it is, as Ctrl-C does

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


def watch_folder(app: Any, folder: Path, collection: str | None, description: str | None, *,
                 console: Console, out: Console, load_options: dict[str, Any],
                 on_first_event: Callable[[Any], None] = ignore_event,
                 term_error: type[KeyboardInterrupt] = KeyboardInterrupt) -> int:
    """Load ``folder``, then keep it in sync until interrupted; prints the totals and returns the exit code (130 on
    Ctrl-C, 143 on SIGTERM), for the caller to end the process with.

    Raises:
        KeyboardInterrupt: Ctrl-C (or ``term_error``: SIGTERM) during the first load, before any watching: the caller
            says what a stopped load kept (``on_first_event`` sees that load's events), as for a load without --watch.
    """
    from deepsearcher.cli.render import LoadProgress, render_load_summary

    watching = False

    def sync(only: Optional[Sequence[str]]) -> LoadSummary:
        if only is not None:  # a change batch: its own line says what it did
            return app.load([str(folder)], collection, description, on_event=ignore_event, only=only,
                            **{**load_options, "force_new": False})
        with LoadProgress(console) as progress:
            def on_event(event: Any) -> None:
                on_first_event(event)
                progress.on_event(event)

            return app.load([str(folder)], collection, description, on_event=on_event,
                            only=[str(folder)], **load_options)

    def ready(summary: LoadSummary) -> None:
        nonlocal watching
        watching = True
        render_load_summary(out, summary)
        out.print(Text(f"Watching {one_line(str(folder))} for changes (Ctrl-C to stop)."), highlight=False)

    def batch_line(batch: WatchBatch) -> None:
        style = "red" if batch.error else "yellow" if batch.skipped else "green"
        stamp = time.strftime("%H:%M:%S")
        out.print(Text.assemble((stamp, style), f" {one_line(batch.describe())}"), highlight=False)

    watch = FolderWatch(folder, sync, on_batch=batch_line, ignore=lite_file_filter(store_uri(app.settings)))
    with signal_kind(term_error) as seen:
        try:
            watch.run(on_ready=ready)
        except KeyboardInterrupt as exc:
            if not watching:
                if seen and not isinstance(exc, term_error):
                    raise term_error() from exc
                raise
            console.print(Text(f"Stopped watching {one_line(str(folder))}: {watch.totals.describe()}. Everything "
                               "written is kept; a batch cut short is finished by the next load or watch."),
                          highlight=False)
            return 143 if seen else 130
    return 0
