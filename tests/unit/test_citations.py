"""Citation verification, renumbering and the Sources section."""

from __future__ import annotations

from deepsearcher.agents.citations import (
    cited_sources, report_markdown, source_line, verify_citations,
)
from deepsearcher.types import Hit, Report, Source, Usage
from tests.unit.query_fakes import MILVUS_DOCS, RECIPES


def test_unknown_citation_is_removed_and_counted():
    v = verify_citations("Milvus Lite runs locally [1]. It scales to billions [7]. Files are portable [3].", 3)
    assert v.text == "Milvus Lite runs locally [1]. It scales to billions. Files are portable [2]."
    assert v.removed == 1
    assert v.cited == [1, 3]


def test_citations_are_renumbered_by_first_appearance():
    v = verify_citations("B first [3], then A [1], B again [3] and both [1, 3].", 3)
    assert v.text == "B first [1], then A [2], B again [1] and both [2][1]."
    assert v.cited == [3, 1]
    assert v.removed == 0


def test_lists_ranges_and_full_width_brackets():
    v = verify_citations("All of them [1-3]; some 【2】; mixed [2, 9]; 0 is not valid [0].", 3)
    assert v.text == "All of them [1][2][3]; some [2]; mixed [2]; 0 is not valid."
    assert v.removed == 2


def test_markdown_links_and_years_in_brackets_are_not_citations():
    v = verify_citations("See [the docs](https://milvus.io) and [2024] release [1].", 1)
    assert v.text == "See [the docs](https://milvus.io) and release [1]."
    assert v.removed == 1  # [2024] is not a chunk number


def test_sources_follow_the_renumbering_and_render_location():
    hits = [Hit(MILVUS_DOCS[0], 0.9, "milvus"), Hit(MILVUS_DOCS[4], 0.8, "milvus"), Hit(RECIPES[0], 0.1, "recipes")]
    v = verify_citations("Sparse [2]; lite [1]; bread [3].", 3)
    sources = cited_sources(v, hits)
    assert [(s.number, s.chunk.source) for s in sources] == [
        (1, "/d/sparse.pdf"), (2, "/d/lite.md"), (3, "https://example.org/bread")]
    assert source_line(sources[0]) == "[1] /d/sparse.pdf, p. 2"
    assert source_line(sources[2]) == "[3] https://example.org/bread"


def test_report_markdown_lists_sources_or_says_none():
    src = [Source(1, MILVUS_DOCS[0], "milvus")]
    report = Report("q", "Lite runs in-process [1].", src, ["q"], 1, Usage(), "deep_search")
    md = report_markdown(report)
    assert md.startswith("Lite runs in-process [1].\n\n## Sources\n\n- [1] /d/lite.md")
    uncited = Report("q", "No citations here.", src, ["q"], 1, Usage(), "deep_search")
    assert "## Sources consulted (the answer cites none)" in report_markdown(uncited)
    empty = Report("q", "Nothing.", [], ["q"], 1, Usage(), "deep_search")
    assert "No sources: nothing relevant was retrieved." in report_markdown(empty)
