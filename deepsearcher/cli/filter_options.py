"""The metadata filter options ``retrieve`` and ``query`` share (``--where-path``, ``--type``, ``--since``,
``--until``, ``--meta``), turned into a ``deepsearcher.filters.SearchFilter``."""

from __future__ import annotations

from typing import Any, Callable

import click
from pydantic import ValidationError

from deepsearcher.filters import FILE_TYPES, TYPE_ALIASES, SearchFilter, parse_meta

_TYPES = ", ".join(sorted({*FILE_TYPES, *TYPE_ALIASES}))


def filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the filter options to a click command (they arrive as ``where_path``, ``types``, ``since``, ``until``,
    ``meta``)."""
    options = [
        click.option("--where-path", "where_path", multiple=True, metavar="GLOB",
                     help='Only sources matching this path glob (repeatable), e.g. "contracts/2025/**" or "*.pdf"; '
                          "** spans folders, * stays within one; a glob not starting with / (or a URL scheme) "
                          "matches the end of the path, so *.pdf finds PDFs in every folder."),
        click.option("--type", "types", multiple=True, metavar="TYPE",
                     help=f"Only files of this type (repeatable): {_TYPES}."),
        click.option("--since", default=None, metavar="YYYY-MM-DD",
                     help="Only documents dated on or after this day (front matter date, else modified time)."),
        click.option("--until", default=None, metavar="YYYY-MM-DD",
                     help="Only documents dated on or before this day."),
        click.option("--meta", multiple=True, metavar="KEY=VALUE",
                     help="Only documents whose front matter has KEY equal to VALUE (repeatable)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def build_filter(where_path: tuple[str, ...], types: tuple[str, ...], since: str | None, until: str | None,
                 meta: tuple[str, ...]) -> SearchFilter | None:
    """The filter the options give, None when none was given.

    Raises:
        click.BadParameter: a bad date, type, glob or ``--meta`` pair (the message names the option and the fix).
    """
    try:
        where = SearchFilter(paths=where_path, types=types, since=since, until=until, meta=parse_meta(meta))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        option = {"paths": "--where-path", "types": "--type", "meta": "--meta", "": "--since/--until"}.get(
            field, f"--{field}")
        message = str(error["msg"]).removeprefix("Value error, ")
        if field in ("since", "until"):
            message = f"{error['input']!r} is not a day: give YYYY-MM-DD, e.g. 2025-01-01"
        elif not field:
            message = message.replace("since ", "--since ").replace("until ", "--until ")
        raise click.BadParameter(message, param_hint=option) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--meta") from None
    return None if where.empty else where
