"""Typed events: docs/events.md is generated from the code, every kind is documented, and every view renders (or
deliberately ignores) every kind it can receive (issue #10)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rich.console import Console

from deepsearcher import events
from deepsearcher.cli.render_eval import EvalProgress
from deepsearcher.cli.render import LoadProgress, QueryProgress
from tests.conftest import REPO


def test_docs_events_md_matches_the_code() -> None:
    text = (REPO / "docs" / "events.md").read_text(encoding="utf-8")
    assert text == events.markdown(), "regenerate: python -m deepsearcher.events > docs/events.md"


def test_every_event_is_a_documented_frozen_dataclass_with_a_unique_kind() -> None:
    classes = events.event_classes()
    assert len({cls.kind for cls in classes}) == len(classes) == len(events.kinds())
    for cls in classes:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
        assert cls.__doc__ and cls.kind.startswith(cls.group + "."), cls
        for field in dataclasses.fields(cls):
            assert field.metadata.get("doc"), f"{cls.kind}.{field.name} has no description"


def test_event_data_is_json() -> None:
    ref = events.ChunkRef(id="c1", collection="docs", source="/d/a.md", page=None, title="a")
    accepted = events.QueryAccepted(iteration=1, sub_query="q", retrieved=2, accepted=1, chunks=[ref],
                                    fell_back=False)
    assert json.loads(json.dumps(accepted.data))["chunks"][0] == {"id": "c1", "collection": "docs",
                                                                 "source": "/d/a.md", "page": None, "title": "a"}
    assert accepted.kind == "query.accepted" and accepted.data["accepted"] == 1


def test_every_cli_view_covers_every_kind_it_receives() -> None:
    console = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the process
    cases = {
        QueryProgress(console, quiet=True): events.kinds("query"),
        LoadProgress(console, quiet=True): events.kinds("load") + events.kinds("crawl"),
        EvalProgress(console, quiet=True): events.kinds("eval") + events.kinds("load") + events.kinds("crawl"),
    }
    for view, expected in cases.items():
        missing = set(expected) - view.covered_kinds()
        assert not missing, f"{type(view).__name__} has no renderer for {sorted(missing)}"


def test_the_web_page_renders_every_query_kind() -> None:
    page = (REPO / "deepsearcher" / "web" / "app.js").read_text(encoding="utf-8")
    missing = [kind for kind in events.kinds("query") if f'"{kind}"' not in page]
    assert not missing, f"deepsearcher/web/app.js does not handle {missing}"


def test_kinds_group_names() -> None:
    assert events.kinds("query")[0] == "query.start" and events.kinds("query")[-1] == "query.report"
    assert set(events.kinds()) == {cls.kind for cls in events.event_classes()}
    assert Path(events.__file__).name == "events.py"
