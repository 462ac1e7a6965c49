"""Command line: parse -> load_settings -> DeepSearcher -> render with rich. The only module that prints.

Errors raised by the library (``DeepSearcherError``) become one-line messages with a hint and exit code 1;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from deepsearcher.errors import DeepSearcherError
from deepsearcher.settings import Settings, load_settings

console = Console(stderr=True)
out = Console()


class ErrorBoundary(click.Group):
    """Turns library errors into messages; ``--debug`` re-raises."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except DeepSearcherError as exc:
            if ctx.meta.get("debug"):
                raise
            console.print(f"[bold red]Error:[/] {exc}", highlight=False)
            ctx.exit(1)
        except KeyboardInterrupt:
            if ctx.meta.get("debug"):
                raise
            console.print("[yellow]Interrupted.[/] Re-run the same command to resume; nothing is duplicated.")
            ctx.exit(130)
        except Exception as exc:  # the user never sees a traceback unless they ask for --debug
            if ctx.meta.get("debug"):
                raise
            console.print(f"[bold red]Unexpected error:[/] {type(exc).__name__}: {exc}\n"
                          "  Run again with --debug for the traceback, and please report it.", highlight=False)
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
    ctx.meta["debug"] = debug
    ctx.meta["verbose"] = verbose
    ctx.obj = {"config_path": config_path}
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not debug:
        for noisy in ("httpx", "sentence_transformers", "transformers", "pymilvus", "milvus_lite"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        # milvus-lite's in-process gRPC server logs unimplemented optional RPCs at ERROR; they are harmless
        logging.getLogger("grpc").setLevel(logging.CRITICAL)
        logging.getLogger("pymilvus").setLevel(logging.CRITICAL)


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
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def load(ctx: click.Context, inputs: tuple[str, ...], collection: str | None, description: str | None,
         force_new_collection: bool, batch_size: int | None, include: tuple[str, ...], exclude: tuple[str, ...],
         as_json: bool) -> None:
    """Load files, folders, glob patterns and URLs into a collection.

    Re-running is safe: unchanged files are skipped, changed files replace their old chunks.
    """
    from deepsearcher.render import LoadProgress, render_load_summary

    overrides: dict[str, Any] = {}
    if include or exclude:
        base = get_settings(ctx).loader
        overrides["loader"] = {"include": list(include) or base.include,
                               "exclude": list(base.exclude) + list(exclude)}
    app = make_app(ctx, overrides)
    with LoadProgress(console, quiet=as_json) as progress:
        summary = app.load(list(inputs), collection, description, force_new=force_new_collection,
                           batch_size=batch_size, on_event=progress.on_event)
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
    """List collections (name, description, chunk count, embedding model)."""
    if ctx.invoked_subcommand is not None:
        return
    app = make_app(ctx)
    infos = app.collections()
    if as_json:
        out.print_json(json.dumps([info.__dict__ for info in infos]))
        return
    if not infos:
        out.print("No collections yet. Load documents with: deepsearcher load PATH")
        return
    table = Table(title=f"Collections in {app.store.uri}")
    for col in ("name", "chunks", "embedding model", "description"):
        table.add_column(col, justify="right" if col == "chunks" else "left")
    for info in infos:
        table.add_row(info.name, str(info.chunk_count), f"{info.embedding_model} ({info.embedding_dim}d)",
                      info.description)
    out.print(table)


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
    out.print(f"Dropped collection {name}.")


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
    where = settings.config_path or "built-in defaults (no config file found)"
    console.print(f"[green]OK[/] configuration from {where}")
    out.print(yaml.safe_dump(settings.masked(), sort_keys=False, allow_unicode=True), highlight=False)


# --- retrieve ------------------------------------------------------------------------------------------------------
@main.command()
@click.argument("query")
@click.option("--collection", "-c", "collection_names", multiple=True, help="Collection(s) to search (default all).")
@click.option("--top-k", "-k", type=click.IntRange(1), default=None, help="Results wanted.")
@click.option("--mode", type=click.Choice(["dense", "bm25", "hybrid"]), default=None,
              help="Retrieval mode (default: hybrid when query.hybrid is true).")
@click.option("--json", "as_json", is_flag=True, help="Print hits as JSON.")
@click.pass_context
def retrieve(ctx: click.Context, query: str, collection_names: tuple[str, ...], top_k: int | None,
             mode: str | None, as_json: bool) -> None:
    """Return ranked chunks for QUERY with no LLM."""
    from deepsearcher.render import render_hits

    app = make_app(ctx)
    hits = app.retrieve(query, top_k=top_k, collections=list(collection_names) or None, mode=mode)
    if as_json:
        out.print_json(json.dumps([{"rank": i + 1, "score": h.score, "collection": h.collection,
                                    **h.chunk.__dict__} for i, h in enumerate(hits)], ensure_ascii=False))
    else:
        render_hits(out, hits)


def run() -> None:  # pragma: no cover - console-script entry
    main(prog_name="deepsearcher")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
