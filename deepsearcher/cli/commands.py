"""Command line: parse -> load_settings -> DeepSearcher -> render with rich. The only module that prints.

Errors raised by the library (``DeepSearcherError``) become one-line messages with a hint and exit code 1;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from typing import Any, Iterator
from contextlib import contextmanager

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from deepsearcher.errors import DeepSearcherError, without_hint
from deepsearcher.quiet_logs import quiet_libraries
from deepsearcher.cli.filter_options import build_filter, filter_options
from deepsearcher.cli.safe_text import plain, printable, safe
from deepsearcher.settings import Settings, load_settings

console = Console(stderr=True)
out = Console()


class Terminated(KeyboardInterrupt):
    """SIGTERM during a load, raised where the load is, so that it stops as on Ctrl-C (nothing half-written is
    left: every write is a whole batch) and says so, instead of dying silently with 143."""


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into ``Terminated`` while the block runs (main thread only; the old handler is put back)."""
    def on_term(signum: int, frame: Any) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (an embedding app): leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped_message(ctx: click.Context, exc: KeyboardInterrupt) -> tuple[str, int]:
    """The one line for a stopped command and its exit code (130 Ctrl-C, 143 SIGTERM); a load says what it kept."""
    what = "Stopped (SIGTERM)." if isinstance(exc, Terminated) else "Interrupted."
    code = 143 if isinstance(exc, Terminated) else 130
    if ctx.invoked_subcommand != "load":
        return f"[yellow]{what}[/]", code
    written = ctx.meta.get("load_written", 0)
    kept = (f" The {written:,} chunks written by this run are kept, as is everything stored before." if written
            else " Nothing was written by this run; everything stored before is kept.")
    return f"[yellow]{what}[/]{kept} Re-run the same command to resume; nothing is duplicated.", code


#: how long a stopped load waits for the store to close before it exits anyway (a close can be stuck behind a write
#: the signal cut short inside Milvus Lite's servicer thread; what was written is durable either way)
CLOSE_GRACE_S = 15.0


def exit_now(ctx: click.Context, code: int) -> None:
    """End the process right after SIGTERM or a Ctrl-C of a load: close the store (releases the Milvus Lite file),
    flush the output, and skip the interpreter's shutdown, which waits for Milvus Lite's background compaction and
    torch's threads (seconds on a busy machine, past a supervisor's grace period before SIGKILL). What was written is
    already durable: every write returned before the stop, as after a SIGKILL, which the load recovers from — so a
    close that does not end within ``CLOSE_GRACE_S`` (a signal that landed inside Lite's flush can leave its close
    waiting on that flush) is abandoned rather than left to hang the terminal."""
    closer = threading.Thread(target=_close_quietly, args=(ctx,), name="deepsearcher-close", daemon=True)
    closer.start()
    closer.join(CLOSE_GRACE_S)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _close_quietly(ctx: click.Context) -> None:
    """``ctx.close()`` (runs call_on_close: DeepSearcher.close); a failure there changes nothing about the exit."""
    try:
        ctx.close()
    except Exception:  # the run is already stopped and said so; a close error is only worth a debug line
        logging.getLogger(__name__).debug("closing after a stop failed", exc_info=True)


#: the options of ``deepsearcher`` itself, which go before the command (a command that has one of its own, such as
#: query's --verbose, takes it there)
GLOBAL_OPTIONS = ("--config", "--debug", "--verbose")


def wants_json(ctx: click.Context) -> bool:
    """The command was given ``--json`` (before any ``--``): its errors are printed as JSON on stdout too."""
    tokens = list(ctx.args)
    return "--json" in (tokens[:tokens.index("--")] if "--" in tokens else tokens)


class ErrorBoundary(click.Group):
    """Turns library errors into messages; ``--debug`` re-raises."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:  # `deepsearcher --json query …`: a command's option before the command
            owners = sorted(name for name, cmd in self.commands.items()
                            if any(exc.option_name in p.opts for p in cmd.params))
            command = next((a for a in args if a in self.commands), owners[0] if owners else None)
            if command not in owners:  # nobody has it, or the command given does not (`--json serve`)
                raise
            raise click.NoSuchOption(exc.option_name, ctx=ctx, message=(
                f"{exc.option_name} is an option of the command: it goes after it, e.g. deepsearcher {command} … "
                f"{exc.option_name}")) from None

    def invoke(self, ctx: click.Context) -> Any:
        as_json = wants_json(ctx)  # read before the group hands the command its arguments
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            if exc.option_name in GLOBAL_OPTIONS:  # the usual slip: `deepsearcher retrieve QUERY --config FILE`
                raise click.NoSuchOption(exc.option_name, ctx=exc.ctx, message=(
                    f"{exc.option_name} is a global option: it goes before the command, e.g. deepsearcher "
                    f"{exc.option_name}{' FILE' if exc.option_name == '--config' else ''} "
                    f"{ctx.invoked_subcommand or 'COMMAND'} …")) from None
            raise
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except DeepSearcherError as exc:
            if ctx.meta.get("debug"):
                raise
            console.print(f"[bold red]Error:[/] {safe(exc, multiline=True)}", highlight=False, soft_wrap=True)
            if as_json:  # a script reading stdout gets the error as JSON too, not an empty output
                out.print_json(json.dumps({"error": without_hint(exc), "hint": exc.hint or "",
                                           "kind": type(exc).__name__}, ensure_ascii=False))
            ctx.exit(1)
        except KeyboardInterrupt as exc:
            if ctx.meta.get("debug"):
                raise
            message, code = stopped_message(ctx, exc)
            console.print(message, highlight=False)
            if isinstance(exc, Terminated) or ctx.invoked_subcommand == "load":
                exit_now(ctx, code)
            ctx.exit(code)
        except Exception as exc:  # the user never sees a traceback unless they ask for --debug
            if ctx.meta.get("debug"):
                raise
            console.print(f"[bold red]Unexpected error:[/] {type(exc).__name__}: {safe(exc, multiline=True)}\n"
                          "  Run again with --debug for the traceback, and please report it.", highlight=False,
                          soft_wrap=True)
            ctx.exit(2)


@click.group(cls=ErrorBoundary)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: $DEEPSEARCHER_CONFIG, else ./config.yaml, else built-in defaults).")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.option("--verbose", "-v", is_flag=True, help="Show more detail (e.g. model reasoning).")
@click.version_option(package_name="deepsearcher")
@click.pass_context
def main(ctx: click.Context, config_path: str | None, debug: bool, verbose: bool) -> None:
    """deepsearcher: local-first agentic RAG over your documents, with cited reports."""
    global console, out
    console, out = Console(stderr=True), Console()  # bound to this invocation's streams (CliRunner swaps them)
    ctx.meta["debug"] = debug
    ctx.meta["verbose"] = verbose
    ctx.obj = {"config_path": config_path}
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    quiet_libraries(debug=debug)


class RegisteredName(click.ParamType):
    """A name registered for ``kind`` (built-in or plugin), checked when given; ``extra`` names are accepted too."""

    name = "name"

    def __init__(self, kind: str, extra: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.extra = extra

    def choices(self) -> list[str]:
        from deepsearcher.registry import registry

        return [*self.extra, *registry.names(self.kind)]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        choices = self.choices()
        if value not in choices:
            self.fail(f"{value!r} is not one of {', '.join(map(repr, choices))}.", param, ctx)
        return str(value)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "NAME"


def get_settings(ctx: click.Context, overrides: dict[str, Any] | None = None) -> Settings:
    return load_settings(ctx.find_root().obj["config_path"], overrides)


def make_app(ctx: click.Context, overrides: dict[str, Any] | None = None) -> Any:
    from deepsearcher.app import DeepSearcher

    app = DeepSearcher(get_settings(ctx, overrides))
    ctx.call_on_close(app.close)
    return app


# --- load ----------------------------------------------------------------------------------------------------------
@main.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--collection", "-c", default=None, help="Target collection (default: vector_db.default_collection).")
@click.option("--description", "-d", default=None, help="What the collection holds (used to route sub-queries).")
@click.option("--force-new-collection", is_flag=True, help="Drop the collection and rebuild it.")
@click.option("--batch-size", type=click.IntRange(1), default=None, help="Chunks embedded and upserted per batch.")
@click.option("--include", multiple=True, help="Glob a file in a folder must match (repeatable).")
@click.option("--exclude", multiple=True, help="Glob of files in folders to skip (repeatable).")
@click.option("--keep-missing", is_flag=True,
              help="Keep the chunks of files gone from a loaded folder (or no longer loadable); default: removed.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--watch", is_flag=True,
              help="Then keep the folder in sync: each change (created, changed, renamed, deleted files) is applied "
                   "as a re-load would, one line per batch, until Ctrl-C.")
@click.pass_context
def load(ctx: click.Context, inputs: tuple[str, ...], collection: str | None, description: str | None,
         force_new_collection: bool, batch_size: int | None, include: tuple[str, ...], exclude: tuple[str, ...],
         keep_missing: bool, as_json: bool, watch: bool) -> None:
    """Load files, folders, glob patterns and URLs into a collection.

    Re-running is safe: unchanged files are skipped, changed files replace their old chunks, and files gone from a
    loaded folder (or no longer loadable) lose theirs (--keep-missing keeps them). With --watch (one folder), the
    folder is then kept in sync by the same rules as its file-system events come in.
    """
    from deepsearcher.cli.render import LoadProgress, render_load_summary
    from deepsearcher.events import LoadBatch

    overrides: dict[str, Any] = {}
    if include or exclude:
        base = get_settings(ctx).loader
        overrides["loader"] = {"include": list(include) or base.include,
                               "exclude": list(base.exclude) + list(exclude)}
    root = ctx.find_root()

    def record(event: Any) -> None:
        if isinstance(event, LoadBatch):
            root.meta["load_written"] = event.written  # for the message of a stopped load

    def on_event(event: Any) -> None:
        record(event)
        progress.on_event(event)

    if watch:
        from deepsearcher.cli.watching import check_watch_inputs, watch_folder

        folder = check_watch_inputs(inputs, as_json)
        code = watch_folder(make_app(ctx, overrides), folder, collection, description, console=console, out=out,
                            load_options={"force_new": force_new_collection, "batch_size": batch_size,
                                          "keep_missing": keep_missing},
                            on_first_event=record, term_error=Terminated)
        exit_now(ctx, code)  # as an interrupted load: skip the slow interpreter shutdown
    with stop_on_sigterm():
        app = make_app(ctx, overrides)
        with LoadProgress(console, quiet=as_json) as progress:
            summary = app.load(list(inputs), collection, description, force_new=force_new_collection,
                               batch_size=batch_size, on_event=on_event, keep_missing=keep_missing)
    if as_json:
        out.print_json(json.dumps(summary.to_dict()))
    else:
        render_load_summary(out, summary)
    if not summary.loaded and not summary.unchanged:
        ctx.exit(1)


# --- collections ---------------------------------------------------------------------------------------------------
@main.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def collections(ctx: click.Context, as_json: bool) -> None:
    """List collections (name, description, chunk count, embedding model, search modes and index)."""
    if ctx.invoked_subcommand is not None:
        return
    from deepsearcher.vectordb.capabilities import lite_size_notice

    app = make_app(ctx)
    infos = app.collections()
    if as_json:
        out.print_json(json.dumps([info.__dict__ for info in infos]))
        return
    if not infos:
        out.print("No collections yet. Load documents with: deepsearcher load PATH")
        return
    from deepsearcher.cli.render import render_collections, render_notices

    caps = app.store.capabilities
    render_collections(out, infos, app.store.uri, caps)
    render_notices(console, [n for n in (lite_size_notice(i.name, caps.engine, i.chunk_count) for i in infos) if n])


@collections.command("describe")
@click.argument("name")
@click.option("--refresh", is_flag=True,
              help="Write a new description: by the configured LLM from a sample of the chunks, else from file names "
                   "and titles (a description you set is kept unless the LLM writes the new one).")
@click.option("--set", "text", default=None, metavar="TEXT", help="Set the description to TEXT.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def collections_describe(ctx: click.Context, name: str, refresh: bool, text: str | None, as_json: bool) -> None:
    """Show a collection's description, or change it (--set TEXT, or --refresh to generate one).

    Routing sends each sub-query to the collections whose descriptions fit it.
    """
    from deepsearcher.cli.render import render_description

    if refresh and text is not None:
        raise click.UsageError("give --refresh or --set, not both")
    app = make_app(ctx)
    if not refresh and text is None:
        info = app.store.describe(name)
        if as_json:
            out.print_json(json.dumps({"collection": name, "text": info.description,
                                       "generated": info.description_generated}, ensure_ascii=False))
        else:
            out.print(Text.assemble((f"{name}: ", "bold"), info.description,
                                    (" (generated)" if info.description_generated else "", "dim")))
        return
    with console.status(f"Describing {name}…", spinner="dots"):
        described = app.describe_collection(name, text)
    if as_json:
        out.print_json(json.dumps(described.__dict__, ensure_ascii=False))
    else:
        render_description(out, described)


@collections.command("drop")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def collections_drop(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete a collection and all its chunks."""
    app = make_app(ctx)
    info = app.store.describe(name)
    if not yes:
        click.confirm(f"Drop collection {name!r} ({info.chunk_count} chunks)?", abort=True, err=True)
    app.drop_collection(name)
    out.print(plain(f"Dropped collection {name}."))


# --- config --------------------------------------------------------------------------------------------------------
@main.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate the config file and print the effective settings (secrets masked)."""
    import yaml

    settings = get_settings(ctx)
    if settings.server.watch:  # the folders `serve` would watch: checked as serve checks them
        from deepsearcher.server.security import AccessPolicy

        AccessPolicy.from_settings(settings).watched_folders(settings)
    where = settings.config_path or "built-in defaults (no config file found)"
    console.print(f"[green]OK[/] configuration from {safe(where)}")
    out.print(plain(yaml.safe_dump(settings.masked(), sort_keys=False, allow_unicode=True), multiline=True),
              highlight=False)


@config.command("providers")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def config_providers(as_json: bool) -> None:
    """List the registered providers and agents (built-in and plugins), with their options."""
    from deepsearcher.registry import KINDS, registry
    from deepsearcher.cli.config_docs import option_rows

    rows: list[dict[str, Any]] = []
    for kind in KINDS:
        for provider in registry.providers(kind):
            model = provider.options_model()
            rows.append({"kind": kind, "name": provider.name, "origin": provider.origin,
                         "description": provider.description,
                         "options": option_rows(model) if model is not None else []})
    if as_json:
        out.print_json(json.dumps(rows, ensure_ascii=False))
        return
    for kind in KINDS:
        listed = [r for r in rows if r["kind"] == kind]
        out.print(f"[bold]{kind}[/]" + ("" if listed else " (none registered)"), highlight=False)
        for row in listed:
            origin = "" if row["origin"] == "builtin" else f" [dim]({safe(row['origin'])})[/]"
            out.print(f"  [bold]{safe(row['name'])}[/]{origin} — ", end="", highlight=False)
            out.print(plain(row["description"]), highlight=False, soft_wrap=True)
            for opt in row["options"]:
                if opt["name"] == "provider":
                    continue
                out.print(plain(f"      {opt['name']} ({opt['type']}, default {opt['default']}): "), end="",
                          highlight=False)
                out.print(plain(opt["description"]), highlight=False, soft_wrap=True)


# --- retrieve ------------------------------------------------------------------------------------------------------
@main.command()
@click.argument("query")
@click.option("--collection", "-c", "collection_names", multiple=True, help="Collection(s) to search (default all).")
@click.option("--top-k", "-k", type=click.IntRange(1), default=None, help="Results wanted.")
@click.option("--mode", type=click.Choice(["dense", "bm25", "hybrid"]), default=None,
              help="Retrieval mode (default: hybrid when query.hybrid is true).")
@click.option("--json", "as_json", is_flag=True, help="Print hits as JSON.")
@filter_options
@click.pass_context
def retrieve(ctx: click.Context, query: str, collection_names: tuple[str, ...], top_k: int | None,
             mode: str | None, as_json: bool, **filters: Any) -> None:
    """Return ranked chunks for QUERY with no LLM.

    Filters narrow the search: --where-path "contracts/2025/**" --type pdf --since 2025-01-01 --meta status=final.
    """
    from deepsearcher.events import Event, RetrievalNotice
    from deepsearcher.cli.render import render_hits, render_notice

    if not query.strip():
        raise click.BadParameter("the query is empty", param_hint="QUERY")
    where = build_filter(**filters)

    def notice(event: Event) -> None:
        if isinstance(event, RetrievalNotice):
            render_notice(console, event)  # on stderr, also with --json

    app = make_app(ctx)
    hits = app.retrieve(query, top_k=top_k, collections=list(collection_names) or None, mode=mode,
                        on_event=notice, where=where)
    if as_json:
        out.print_json(json.dumps([{"rank": i + 1, "score": h.score, "collection": h.collection,
                                    **h.chunk.__dict__, "also_in": [o.__dict__ for o in h.also_in]}
                                   for i, h in enumerate(hits)], ensure_ascii=False))
    elif not hits and where is not None:
        out.print(plain(f"No results match the filter ({where.describe()}); without it the search may find some."),
                  highlight=False, soft_wrap=True)
    else:
        render_hits(out, hits)


# --- query ---------------------------------------------------------------------------------------------------------
@main.command()
@click.argument("question")
@click.option("--collection", "-c", "collection_names", multiple=True,
              help="Collection(s) in scope (repeatable; default all). Routing picks among them per sub-query.")
@click.option("--max-iter", type=click.IntRange(1), default=None,
              help="Search rounds at most (default query.max_iter).")
@click.option("--agent", type=RegisteredName("agent", ("auto",)), default=None,
              help="Agent (default query.agent): deep_search reports, chain_of_rag multi-hop facts, naive one search, "
                   "deep_research a budgeted loop with an answer evaluator (and the web); auto lets the LLM pick; "
                   "plugins add more (`deepsearcher config providers`).")
@click.option("--report", "report_kind", type=click.Choice(["short", "long"]), default="short", show_default=True,
              help="long: an outline of 3-8 sections, each researched (deep_research, or deep_search with --agent "
                   "deep_search), then one editing pass; a Markdown report with a table of contents.")
@click.option("--outline", "outline_file", type=click.Path(dir_okay=False), default=None,
              help="Long report: follow the outline in this Markdown file ('# title', then '## section' + question "
                   "lines; a summary section without a question, such as '## Executive summary', or one whose text "
                   "starts with 'Synthesis:', is written from the others, not researched); with --outline-only, write the "
                   "planned outline there instead.")
@click.option("--outline-only", is_flag=True, help="Plan the long report's outline, write it to --outline FILE to "
                                                    "edit, and stop.")
@click.option("--web/--no-web", "web", default=None,
              help="Search the web too (deep_research; default: when web_search is configured) or never.")
@click.option("--save-to", "save_to", default=None, metavar="COLLECTION",
              help="Store the web pages read during the query in this collection, so later queries find them.")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also write the report with its Sources to this file: .md, .html, .docx or .pdf (by extension, "
                   "or --format; PDF needs the extra `export`).")
@click.option("--format", "out_format", type=click.Choice(["md", "html", "docx", "pdf"]), default=None,
              help="Format of --output when its extension does not say.")
@click.option("--json", "as_json", is_flag=True,
              help="Print answer, sources, sub-queries, iterations and usage as one JSON object.")
@click.option("--verbose", "-v", is_flag=True, help="Show the model's reasoning for every step.")
@filter_options
@click.pass_context
def query(ctx: click.Context, question: str, collection_names: tuple[str, ...], max_iter: int | None,
          agent: str | None, report_kind: str, outline_file: str | None, outline_only: bool, web: bool | None,
          save_to: str | None, output: str | None, out_format: str | None, as_json: bool, verbose: bool,
          **filters: Any) -> None:
    """Research QUESTION over your collections (and the web, when configured) and print one report with verified
    citations.

    Progress (sub-queries or steps, routed collections, accepted chunks, web searches, verdicts, gaps) shows live, the
    answer streams as it is written, and a usage line ends the run. Needs an LLM: see docs/llm-providers.md.
    """
    from deepsearcher.agents.report_markdown import report_markdown
    from deepsearcher.cli.render import QueryProgress, render_usage
    from deepsearcher.report_export import check_output

    if out_format and not output:
        raise click.UsageError("--format needs --output FILE")
    if output:
        out_format = check_output(output, out_format)  # a path that cannot be written fails now, not after the research
    outline = outline_source(outline_file, outline_only, report_kind)
    where = build_filter(**filters)
    app = make_app(ctx)
    if outline_only:
        write_outline(app, question, list(collection_names) or None, outline_file)
        return
    with QueryProgress(console, verbose=verbose or bool(ctx.find_root().meta.get("verbose")),
                       quiet=as_json) as progress:
        report = app.query(question, collections=list(collection_names) or None, agent=agent, max_iter=max_iter,
                           on_event=progress.on_event, report=report_kind, outline=outline, web=web,
                           save_to=save_to, where=where)
    links = app.settings.query.report_links
    markdown = report_markdown(report, links=links)
    if as_json:
        out.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
        if output:
            save_report(report_markdown(report, title=True, links=links), output, out_format)
        return
    if out.is_terminal:
        from rich.markdown import Markdown

        # hyperlinks=False: a link shows its URL, so a model or a document cannot disguise one
        out.print(Markdown(printable(markdown), hyperlinks=False))
    else:
        out.print(plain(markdown, multiline=True), highlight=False, soft_wrap=True)
    render_usage(console, report.usage, report.removed_citations)
    if output:
        save_report(report_markdown(report, title=True, links=links), output, out_format)
        console.print(plain(f"Report written to {output}"), highlight=False, soft_wrap=True)


def save_report(markdown: str, output: str, out_format: str | None) -> None:
    """Write ``--output`` after the report was printed, so that a write that fails (the folder removed meanwhile, a
    full disk) loses nothing of the research.

    Raises:
        ExportError: the file could not be written (the message says the report was printed above).
    """
    from deepsearcher.errors import ExportError, first_line
    from deepsearcher.report_export import write_report

    try:
        write_report(markdown, output, out_format)
    except (OSError, ExportError) as exc:
        raise ExportError(f"the report above was not written to {output}: {first_line(exc)}",
                          hint="copy it from above, or run the query again with another --output") from exc


def outline_source(path: str | None, outline_only: bool, report_kind: str) -> Any:
    """The outline to follow (read from ``path``), or None; checks the outline options go together.

    Raises:
        click.UsageError: --outline-only without --outline, or --outline without --report long.
    """
    if outline_only:
        if not path:
            raise click.UsageError("--outline-only writes the planned outline to --outline FILE: give a FILE")
        return None
    if path is None:
        return None
    if report_kind != "long":
        raise click.UsageError("--outline applies to long reports: add --report long")
    from deepsearcher.agents.long_report.outline import read_outline

    return read_outline(path)


def write_outline(app: Any, question: str, collections: list[str] | None, path: str | None) -> None:
    """Plan a long report's outline and write it to ``path`` for editing."""
    from pathlib import Path

    from deepsearcher.agents.long_report.outline import outline_markdown

    outline = app.plan_outline(question, collections=collections)
    Path(str(path)).write_text(outline_markdown(outline), encoding="utf-8")
    out.print(plain(outline_markdown(outline), multiline=True), highlight=False, soft_wrap=True)
    console.print(plain(f"Outline written to {path}: edit it, then run the same query with --report long --outline "
                        f"{path}"), highlight=False, soft_wrap=True)


# --- serve ---------------------------------------------------------------------------------------------------------
@main.command()
@click.option("--host", default=None,
              help="Interface to bind (default: server.host, 127.0.0.1). Any non-loopback host needs the token in "
                   "$DEEPSEARCHER_API_TOKEN (server.token_env).")
@click.option("--port", type=click.IntRange(0, 65535), default=None, help="Port (default: server.port, 8000).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Serve the HTTP API (streaming query events) and the web page."""
    try:
        import uvicorn

        from deepsearcher.server import create_app
    except ModuleNotFoundError as exc:
        raise click.ClickException(f"serving needs the extra `server` ({exc.name} is not installed): "
                                   "pip install 'deepsearcher[server]'") from exc
    overrides = {"server": {k: v for k, v in {"host": host, "port": port}.items() if v is not None}}
    settings = get_settings(ctx, overrides)
    app = create_app(settings)  # refuses a non-loopback host without a token
    sock = listening_socket(settings.server.host, settings.server.port)  # a port in use fails before the store opens
    app.state.service.ready()  # open the store now: a Lite file in use fails here, not on the first request
    shown = f"[{settings.server.host}]" if ":" in settings.server.host else settings.server.host
    console.print(f"Serving deepsearcher on [bold]http://{safe(shown)}:{sock.getsockname()[1]}/[/] "
                  f"(API docs at /docs). Ctrl-C stops.", highlight=False, soft_wrap=True)
    config = uvicorn.Config(app, timeout_graceful_shutdown=5, log_level="debug" if ctx.meta.get("debug") else "info")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass


def listening_socket(host: str, port: int) -> Any:
    """The server's socket, bound here rather than by uvicorn, so that a port in use is one line naming the fix
    instead of uvicorn's log lines and exit 3.

    Raises:
        click.ClickException: the address cannot be bound (in use, not an address of this machine, no permission).
    """
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart need not wait
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise click.ClickException(f"port {port} on {host} is already in use (another server is running there): "
                                       "stop it, or pass --port with a free port") from None
        raise click.ClickException(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return sock


# --- mcp -----------------------------------------------------------------------------------------------------------
@main.command("mcp")
@click.pass_context
def mcp_cmd(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio, for desktop and IDE agents (docs/integrations.md).

    Tools: list_collections, retrieve, query (progress per research step) and load (inside server.allowed_roots
    only). stdout carries the protocol; messages go to stderr.
    """
    try:
        from deepsearcher.server.mcp_tools import build_mcp
    except ModuleNotFoundError as exc:
        raise click.ClickException(f"the MCP server needs the extra `mcp` ({exc.name} is not installed): "
                                   "pip install 'deepsearcher[mcp]'") from exc
    from deepsearcher.server.security import AccessPolicy
    from deepsearcher.server.service import Service

    settings = get_settings(ctx, {"server": {"host": "127.0.0.1"}})  # a local process: the loopback rules apply
    app = make_app(ctx, {"server": {"host": "127.0.0.1"}})
    service = Service(settings, app, AccessPolicy.from_settings(settings))
    service.ready()  # open the store now: a Lite file in use fails here, before the client connects
    try:
        build_mcp(service, allow_load=True).run("stdio")
    finally:
        service.close(close_searcher=False)


# --- eval ----------------------------------------------------------------------------------------------------------
@main.command("eval")
@click.argument("dataset", type=click.Path(exists=True))
@click.option("--mode", type=RegisteredName("agent", ("retrieve",)), default="retrieve", show_default=True,
              help="retrieve = no LLM; otherwise the agent that answers (deep_search, chain_of_rag, naive, or a "
                   "plugin's agent).")
@click.option("--retrieval", type=click.Choice(["dense", "bm25", "hybrid"]), default=None,
              help="Retrieval mode (default: hybrid when query.hybrid is true, else dense).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Run the first N questions only.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: ./eval_runs/QUESTIONFILE-DATASET-MODE-RETRIEVAL).")
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Corpus file (default: the *_corpus.json beside the questions).")
@click.option("--subset", default=None, help="Dataset name to keep when the question file holds several.")
@click.option("--collection", "-c", default=None, help="Collection for the corpus (default: eval_DATASET).")
@click.option("--force", "--restart", "restart", is_flag=True,
              help="Discard the rows already in the output folder instead of resuming (needed when they belong to "
                   "another question file or other settings).")
@click.option("--report", "report_kind", type=click.Choice(["short", "long"]), default="short", show_default=True,
              help="Agent modes: answer each question with a long report (mode deep_research or deep_search).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def eval_cmd(ctx: click.Context, dataset: str, mode: str, retrieval: str | None, limit: int | None,
             out_dir: str | None, corpus: str | None, subset: str | None, collection: str | None, restart: bool,
             report_kind: str, as_json: bool) -> None:
    """Evaluate retrieval (and answers, with an agent) on a QA DATASET: a unified JSONL file or a dataset folder.

    Loads the corpus into its own collection (skipped when already loaded), writes rows.jsonl/rows.csv and
    summary.json, and resumes where an interrupted run stopped.
    """
    from deepsearcher.eval import EvalHarness, load_dataset
    from deepsearcher.eval.datasets import default_run_folder
    from deepsearcher.cli.render_eval import EvalProgress, render_eval_summary

    retrieval = retrieval or ("hybrid" if get_settings(ctx).query.hybrid else "dense")
    overrides: dict[str, Any] = {"loader": {"json_text_path": "text", "json_title_path": "title"}}
    if mode != "retrieve":
        overrides["query"] = {"hybrid": retrieval == "hybrid"}
    app = make_app(ctx, overrides)
    data = load_dataset(dataset, subset=subset, corpus=corpus)
    out_path = out_dir or default_run_folder(data, mode + ("-long" if report_kind == "long" else ""), retrieval)
    with EvalProgress(console, quiet=as_json) as progress:
        harness = EvalHarness(app, data, out_path, mode=mode, retrieval=retrieval, limit=limit,
                              collection=collection, restart=restart, on_event=progress.on_event,
                              report=report_kind)
        summary = harness.run()
    if as_json:
        out.print_json(json.dumps(summary.to_dict()))
    else:
        render_eval_summary(out, summary)


def run() -> None:  # pragma: no cover - console-script entry
    main(prog_name="deepsearcher")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
