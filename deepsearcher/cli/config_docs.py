"""The configuration reference, generated from the settings models and the registry.

``python -m deepsearcher.cli.config_docs`` rewrites the generated part of docs/configuration.md (between the
``BEGIN``/``END`` markers); ``deepsearcher config providers`` lists the same options per provider. A test fails when
the file and the code differ.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

BEGIN = "<!-- BEGIN GENERATED: python -m deepsearcher.cli.config_docs -->"
END = "<!-- END GENERATED -->"


def option_rows(model: type[BaseModel]) -> list[dict[str, str]]:
    """One row per field of an options model: name, type, default and description (all strings)."""
    rows = []
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        if info.default_factory is not None:
            default: Any = info.default_factory()  # type: ignore[call-arg]
            if isinstance(default, BaseModel):
                default = "see below" if type(default).model_fields else "{}"
        elif info.default is PydanticUndefined:
            default = "required"
        else:
            default = info.default
        shown = default if isinstance(default, str) and default in ("required", "see below", "{}") else \
            json.dumps(default, default=str)
        description = info.description or ("Selects this provider." if name == "provider" else "")
        rows.append({"name": name, "type": _type_name(info.annotation), "default": shown,
                     "description": description})
    return rows


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation)
    for noise in ("typing.", "pathlib.", "deepsearcher.settings.", "pydantic.functional_serializers.",
                  "SerializeAsAny[", "NoneType"):
        text = text.replace(noise, "None" if noise == "NoneType" else "")
    optional = re.fullmatch(r"Optional\[(.*)\]", text)  # "Optional[Literal['a', 'b']]" as the others: "… | None"
    return f"{optional[1]} | None" if optional else text


def _table(model: type[BaseModel]) -> list[str]:
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for row in option_rows(model):
        desc = row["description"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{row['name']}` | `{row['type'].replace('|', '¦')}` | `{row['default']}` | {desc} |")
    return lines


def reference() -> str:
    """The generated Markdown: every section, every provider's options, every agent's options."""
    from deepsearcher.registry import registry
    from deepsearcher.settings import PROVIDER_SECTIONS, IngestSettings, QuerySettings, ServerSettings, Settings

    lines = [BEGIN, "", "## Reference (generated from the settings models)", "",
             "Every key with its type, default and meaning. Provider sections list the options of each registered "
             "provider (built-ins here; `deepsearcher config providers` also shows installed plugins).", ""]
    top = {name: info.description or "" for name, info in Settings.model_fields.items() if not info.exclude}
    for section, description in top.items():
        lines += [f"### `{section}`", "", description, ""]
        if section in PROVIDER_SECTIONS:
            kind = PROVIDER_SECTIONS[section]
            providers = [p for p in registry.providers(kind) if p.origin == "builtin"]
            if not providers:
                lines += ["No built-in provider; plugins may register one.", ""]
            for provider in providers:
                model = provider.options_model()
                lines += [f"#### `{section}.provider: {provider.name}`", "", provider.description, ""]
                if model is not None:
                    lines += _table(model) + [""] + _nested(f"{section}.", model, level="#####")
        elif section == "agents":
            with_options = [p for p in registry.providers("agent") if p.options_model() is not None
                            and p.origin == "builtin"]
            if not with_options:
                lines += ["No built-in agent has options yet.", ""]
            for provider in with_options:
                options = provider.options_model()
                if options is not None:
                    lines += [f"#### `agents.{provider.name}`", "", provider.description, ""] + _table(options)
                    lines.append("")
        else:
            plain: dict[str, type[BaseModel]] = {"ingest": IngestSettings, "query": QuerySettings,
                                                 "server": ServerSettings}
            lines += _table(plain[section]) + [""] + _nested(f"{section}.", plain[section], level="####")
    lines.append(END)
    return "\n".join(lines) + "\n"


def _nested(prefix: str, model: type[BaseModel], *, level: str) -> list[str]:
    """A heading and a table for each field of ``model`` that is itself a model with fields ("see below")."""
    lines: list[str] = []
    for key, info in model.model_fields.items():
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel) and nested.model_fields:
            lines += [f"{level} `{prefix}{key}`", "", " ".join((nested.__doc__ or "").split()), ""]
            lines += _table(nested) + [""]
    return lines


def rewrite(path: Path) -> bool:
    """Replace the generated part of ``path`` (appending it when the markers are missing); True if it changed."""
    text = path.read_text(encoding="utf-8")
    new_part = reference()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + new_part + ("\n" + tail if tail else "")
    else:
        new = text.rstrip("\n") + "\n\n" + new_part
    if new != text:
        path.write_text(new, encoding="utf-8")
        return True
    return False


def generated_part(text: str) -> str:
    """The generated part of a docs/configuration.md text ("" when the markers are missing)."""
    if BEGIN not in text or END not in text:
        return ""
    return BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END + "\n"


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "docs" / \
        "configuration.md"
    print(f"{target}: {'updated' if rewrite(target) else 'unchanged'}")
