"""Where in the document each chunk is, for every format, from real files (the fidelity suite's builders) loaded
into Milvus Lite: heading paths for Markdown, HTML, DOCX and EPUB, slides for PPTX, sheets for XLSX, pages for PDF;
shown by ``retrieve``'s location and by a report's Sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.agents.citations import location
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.filters import SearchFilter
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.fidelity import fx_data, fx_docx, fx_html, fx_pptx

pytestmark = pytest.mark.integration

GUIDE = """# Relay guide

The relay forwards events from the edge hosts to the central queue and keeps a local spool when offline.

## Install

### Linux

LINUX STEP install the relay with apt-get install relay-agent and enable the systemd unit afterwards.

```
# a comment in a code block, not a heading
relayctl health
```

### macOS

MACOS STEP install the relay with brew install relay-agent and start it with brew services.

## Upgrade

UPGRADE STEP stop the relay, replace the binary, start it again and check relayctl health.
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, bundled_embedder):
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    root = tmp_path_factory.mktemp("places")
    docs = root / "docs"
    fixtures = [fx_docx.headings_lists(), fx_pptx.slides_tables_notes(), fx_html.docs_page(), *fx_data.epub()[:1],
                *fx_data.xlsx()[:1]]
    for fixture in fixtures:
        path = docs / Path(fixture.name).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fixture.data)
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    settings = load_settings(None, {"vector_db": {"uri": str(root / "milvus.db")}, "llm": None,
                                    "ingest": {"chunk_size_tokens": 24, "chunk_overlap_tokens": 0}})
    app = DeepSearcher(settings, embedder=bundled_embedder)
    app.load([str(docs)], "docs", "Fixtures")
    yield app, docs
    app.close()


def place_of(loaded, file: str, phrase: str) -> str:
    app, docs = loaded
    hits = app.retrieve(phrase, top_k=20, where=SearchFilter(paths=(f"**/{file}",)))
    (hit,) = [h for h in hits if phrase in h.chunk.text][:1]
    return location(hit.chunk).removeprefix(str(docs) + "/")


@pytest.mark.parametrize(("file", "phrase", "expected"), [
    ("guide.md", "LINUX STEP", "guide.md › Relay guide › Install › Linux"),
    ("guide.md", "MACOS STEP", "guide.md › Relay guide › Install › macOS"),  # the fenced '#' line is no heading
    ("guide.md", "UPGRADE STEP", "guide.md › Relay guide › Upgrade"),
    ("headings_lists.docx", "Shadow a colleague", "headings_lists.docx › Onboarding checklist › First week"),
    ("install.html", "sudo apt-get install relay-agent", "install.html › Installing the relay agent › Install"),
    ("field_manual.epub", "CHAPTER TWO boil stream water", "field_manual.epub › Chapter 2 Water"),
    ("slides_tables_notes.pptx", "SLIDE TWO NOTES", "slides_tables_notes.pptx, slide 2"),
    ("slides_tables_notes.pptx", "SHAPE TEXT rollback", "slides_tables_notes.pptx, slide 3"),
    ("inventory.xlsx", "Northwind Fasteners", "inventory.xlsx, sheet Suppliers, rows 1–2"),  # header + its row
])
def test_retrieve_shows_where_in_the_document(loaded, file: str, phrase: str, expected: str) -> None:
    assert place_of(loaded, file, phrase) == expected


def test_report_sources_and_prompt_name_the_places(loaded) -> None:
    app, docs = loaded
    llm = ScriptedChatModel(["Install it with apt-get [1]; the deck names team Heron [2]."])
    app._llm, app._llm_checked = llm, True
    where = SearchFilter(paths=("**/guide.md", "**/slides_tables_notes.pptx"))
    report = app.query("LINUX STEP install the relay; SLIDE TWO NOTES team Heron", agent="naive", max_iter=1,
                       where=where)
    (prompt,) = llm.prompts
    assert "guide.md › Relay guide › Install › Linux" in prompt  # the model sees the place it cites
    text = report_markdown(report)
    cited = {s.number: s.chunk for s in report.sources}
    assert {"LINUX STEP" in c.text or "SLIDE TWO NOTES" in c.text for c in cited.values()} == {True}
    sources = text[text.index("Sources"):]
    assert "› Relay guide › Install › Linux" in sources or "slide 2" in sources
    for number, chunk in cited.items():
        if "SLIDE TWO NOTES" in chunk.text:
            assert f"[{number}] slide 2" in sources
        if "LINUX STEP" in chunk.text:
            assert f"[{number}] › Relay guide › Install › Linux" in sources


def test_sheet_rows_are_the_rows_the_chunk_holds(loaded) -> None:
    app, _ = loaded
    hits = app.retrieve("Contoso Metals by e-mail only", top_k=20, where=SearchFilter(paths=("**/inventory.xlsx",)))
    (chunk,) = [h.chunk for h in hits if "Contoso Metals" in h.chunk.text]
    first, last = chunk.metadata["rows"]
    assert first <= 3 <= last  # Contoso Metals is row 3 of the Suppliers sheet
    assert "line_rows" not in chunk.metadata and "headings" not in chunk.metadata
