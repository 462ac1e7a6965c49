"""Citation verification, renumbering, what counts as a citation (never code), and the Sources section."""

from __future__ import annotations

import pytest

from deepsearcher.agents.citations import (
    cite_sentence,
    code_spans, cited_numbers, cited_sources, find_citations, strip_citations, verify_citations,
)
from deepsearcher.agents.report_markdown import group_sources, report_markdown
from deepsearcher.server.markdown import answer_html
from deepsearcher.types import Chunk, Hit, Report, Source, Usage
from tests.unit.query_fakes import MILVUS_DOCS, RECIPES, chunk


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
    assert v.text == "See [the docs](https://milvus.io) and [2024] release [1]."
    assert v.removed == 0  # [2024] is a year, not a chunk number (issue #20 item 7)


@pytest.mark.parametrize("text", [
    "Milvus 2.4 shipped in [2024] [1].",
    "The rule held from [2019-2024] and [1999–2003] [1].",
    "Das Release kam [2023] heraus [1].",
    "Milvus 2.4 发布于 [2024] 年 [1]。",
    "See [1.2] for the details and [3.10.1] for the version [1].",
    "Repeat step [10] and read Table [12], Schritt [5], version [4] [1].",
    "Как сказано в разделе [7] [1].",
])
def test_years_decimals_and_numbered_values_are_kept_as_written(text):
    v = verify_citations(text, 3)
    assert v.text == text and v.removed == 0 and v.cited == [1]


@pytest.mark.parametrize("text, kept", [
    ("It scales to the Moon [10]. It runs locally [1].", "It scales to the Moon. It runs locally [1]."),
    ("For more, see [10]. It runs locally [1].", "For more, see. It runs locally [1]."),
    ("Fast [1, 10] and cheap [2].", "Fast [1] and cheap [2]."),
])
def test_an_out_of_range_number_in_citation_position_is_an_invented_citation(text, kept):
    v = verify_citations(text, 3)
    assert v.text == kept and v.removed == 1


def test_years_are_no_citations_for_the_page_and_the_metrics_either():
    assert cited_numbers("Released in [2024], cited [1] and [1999-2001].") == [1]


# --- issue #11 item 5: citations never rewrite code ----------------------------------------------------------------
def test_inline_code_is_left_alone():
    # the input: `results[0]` and `results[2]` were rewritten, [0] counted as removed, [2] became a source
    v = verify_citations("Index the list as `results[0]` … `results[2]` [1].", 3)
    assert v.text == "Index the list as `results[0]` … `results[2]` [1]."
    assert v.cited == [1] and v.removed == 0


def test_numbers_inside_fences_are_not_renumbered():
    answer = "Use a loop [2].\n\n```python\nfirst = hits[1]\nlast = hits[3]\n```\n\nAnd ~~~ too [3].\n~~~\nx[2]\n~~~\n"
    v = verify_citations(answer, 3)
    assert v.text == ("Use a loop [1].\n\n```python\nfirst = hits[1]\nlast = hits[3]\n```\n\nAnd ~~~ too [2].\n"
                      "~~~\nx[2]\n~~~")
    assert v.cited == [2, 3]


def test_an_unclosed_fence_protects_the_rest():
    v = verify_citations("Claim [1].\n```\ncode[2] [3]", 3)
    assert v.text == "Claim [1].\n```\ncode[2] [3]" and v.cited == [1]


@pytest.mark.parametrize("text, markers", [
    ("Use results[0] and results[2] in Python [1].", ["[1]"]),       # results is indexed with [0]: an index
    ("x = values_2[1] + obj.items[2] + myList[3] + a[1]", []),       # identifiers with _, ., camelCase, one letter
    ("call f(x)[1] or grid[0][1]", []),                               # after ) and after an index
    ("x [1] = 2 and y [2](z) and z [3].real", []),                   # assignment, link, attribute access
    ("Milvus Lite runs in-process[1] and stores a file[2][3].", ["[1]", "[2]", "[3]"]),  # plain words: citations
    ("Milvus 是向量数据库[1]，支持混合检索[2]。", ["[1]", "[2]"]),         # CJK text puts no space before them
    ("Claims [1][2], more [3, 4] and 【5】.", ["[1]", "[2]", "[3, 4]", "【5】"]),
    ("Milvus 是向量数据库［1］。", ["［1］"]),  # full-width brackets (a helper's reply, 2026-12-03)
    ("Paris is the capital.[1] It lies on the Seine.[2][3]", ["[1]", "[2]", "[3]"]),  # after a full stop
    ("Christian Moerlein Brewing Co.[2][4]", ["[2]", "[4]"]),
    ("obj.items.[1] and x.[2]", []),  # a dotted name, a one-letter one: still code
])
def test_citation_position(text, markers):
    assert [text[m.start:m.end] for m in find_citations(text)] == markers


def test_strip_and_count_follow_the_same_rule():
    text = "See `a[1]` and b_c[2]; the claim holds [3][4]."
    assert cited_numbers(text) == [3, 4]
    assert strip_citations(text) == "See `a[1]` and b_c[2]; the claim holds ."


def test_code_spans_follow_commonmark_backtick_runs():
    text = "a ``b`c`` d `e` f ```g``` h `unclosed"
    assert [text[a:b] for a, b in code_spans(text)] == ["``b`c``", "`e`", "```g```"]


def test_html_citations_skip_code_and_indexing():
    html = answer_html("Lite [1]; `results[1]`; values_2[1]; and\n\n```\nx[1]\n```\n", {1})
    assert html.count('class="cite"') == 1
    assert "<code>results[1]</code>" in html and "values_2[1]" in html


# --- sources -------------------------------------------------------------------------------------------------------
def test_sources_follow_the_renumbering():
    hits = [Hit(MILVUS_DOCS[0], 0.9, "milvus"), Hit(MILVUS_DOCS[4], 0.8, "milvus"), Hit(RECIPES[0], 0.1, "recipes")]
    v = verify_citations("Sparse [2]; lite [1]; bread [3].", 3)
    sources = cited_sources(v, hits)
    assert [(s.number, s.chunk.source) for s in sources] == [
        (1, "/d/sparse.pdf"), (2, "/d/lite.md"), (3, "https://example.org/bread")]


def test_sources_list_each_file_once_with_its_pages():
    pdf = [chunk(f"page {p} text", "/d/guide.pdf", page=p, index=p) for p in (2, 5, 2)]
    sources = [Source(1, MILVUS_DOCS[0], "milvus"), Source(2, pdf[0], "milvus"), Source(3, MILVUS_DOCS[1], "milvus"),
               Source(4, pdf[1], "milvus"), Source(5, pdf[2], "milvus"), Source(6, RECIPES[0], "recipes")]
    report = Report("q", "A [1] B [2] C [3] D [4] E [5] F [6].", sources, ["q"], 1, Usage(), "deep_search")
    md = report_markdown(report)
    assert md.endswith("## Sources\n\n"  # titles that only repeat the file name are left out
                       "- /d/lite.md: [1], [3]\n"
                       "- /d/guide.pdf: [2] p. 2, [4] p. 5, [5] p. 2\n"
                       "- https://example.org/bread: [6]\n")
    assert [g.source for g in group_sources(sources)] == ["/d/lite.md", "/d/guide.pdf", "https://example.org/bread"]


def test_report_markdown_lists_sources_or_says_none():
    src = [Source(1, MILVUS_DOCS[0], "milvus")]
    report = Report("q", "Lite runs in-process [1].", src, ["q"], 1, Usage(), "deep_search")
    assert report_markdown(report).startswith("Lite runs in-process [1].\n\n## Sources\n\n- /d/lite.md: [1]\n")
    uncited = Report("q", "No citations here.", src, ["q"], 1, Usage(), "deep_search")
    assert "## Sources consulted (the answer cites none)" in report_markdown(uncited)
    empty = Report("q", "Nothing.", [], ["q"], 1, Usage(), "deep_search")
    assert "No sources: nothing relevant was retrieved." in report_markdown(empty)


def test_a_real_title_is_shown_once_per_file():
    a = Chunk("a", "t1", "/d/2024-q3.pdf", "Quarterly report", 3, 0, "h")
    b = Chunk("b", "t2", "/d/2024-q3.pdf", "Quarterly report", 7, 1, "h")
    assert group_sources([Source(2, b, "c"), Source(1, a, "c")])[0].line() == \
        "/d/2024-q3.pdf — Quarterly report: [1] p. 3, [2] p. 7"


@pytest.mark.parametrize("sentence, numbers, cited", [
    ("Milvus Lite stores data in a local file.", [1], "Milvus Lite stores data in a local file [1]."),
    ("It stores data [1].", [1, 2], "It stores data [1] [2]."),       # a number it cites already is not repeated
    ("It stores data [2].", [2], "It stores data [2]."),
    ("It stores data?!", [3, 3], "It stores data [3]?!"),
    ('"It stores data in a local file."', [1], '"It stores data in a local file." [1]'),  # quoted whole: after
    ("**It stores data.**", [1], "**It stores data.** [1]"),  # emphasis wrapping it whole: after too
    ("It stores data.  \n", [1], "It stores data [1].  \n"),          # a Markdown hard break kept
    ("Milvus Lite 在本地文件中存储数据。", [4], "Milvus Lite 在本地文件中存储数据 [4]。"),
    ("No stop at the end", [1, 2], "No stop at the end [1][2]"),
])
def test_cite_sentence_places_new_numbers_before_the_closing_punctuation(sentence: str, numbers: list[int],
                                                                        cited: str):
    # one rule for every step that adds a number to a sentence (support.cite_copies, filler's verdicts)
    assert cite_sentence(sentence, numbers) == cited
