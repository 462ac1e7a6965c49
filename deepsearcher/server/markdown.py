"""Report answer -> safe HTML with clickable ``[n]`` citations (the web page); the Markdown to copy or download is
``agents.report_markdown.report_markdown``, the same text ``query --output`` writes.

HTML comes from markdown-it-py with raw HTML disabled (a model's answer never injects markup or script), and each
citation that resolves to a source becomes ``<a class="cite" data-source="n">``. What counts as a citation is
``agents.citations.find_citations`` (citation position only; code is never touched: markdown-it gives code its own
tokens, which are skipped, and links are left alone).
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from deepsearcher.agents.citations import find_citations


def answer_html(answer: str, source_numbers: set[int]) -> str:
    """Render the answer's Markdown to HTML; ``[n]`` for a known source number becomes a citation link."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.core.ruler.push("citations", _citations_rule(source_numbers))
    return md.render(answer)


def _citations_rule(numbers: set[int]) -> Any:
    def rule(state: StateCore) -> None:
        for token in state.tokens:
            if token.type != "inline" or not token.children:
                continue
            out: list[Token] = []
            in_link = 0
            for child in token.children:
                if child.type == "link_open":
                    in_link += 1
                elif child.type == "link_close":
                    in_link -= 1
                if child.type == "text" and not in_link and find_citations(child.content):
                    out.extend(_split(child.content, numbers))
                else:
                    out.append(child)
            token.children = out

    return rule


def _split(text: str, numbers: set[int]) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    for marker in find_citations(text):
        tokens.append(_text(text[pos:marker.start]))
        nums = marker.numbers
        if all(n in numbers for n in nums):
            links = ", ".join(f'<a class="cite" href="#source-{n}" data-source="{n}">{n}</a>' for n in nums)
            html_token = Token("html_inline", "", 0)
            html_token.content = f"[{links}]"
            tokens.append(html_token)
        else:
            tokens.append(_text(text[marker.start:marker.end]))
        pos = marker.end
    tokens.append(_text(text[pos:]))
    return [t for t in tokens if t.type != "text" or t.content]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token
