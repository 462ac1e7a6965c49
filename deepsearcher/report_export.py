"""The report as a file to hand on: Markdown, HTML, Word (DOCX) or PDF, all made from the one report Markdown
(``agents.report_markdown.report_markdown``, what ``query --output`` writes and the page downloads).

One parse (markdown-it-py, raw HTML off: a model's answer never injects markup) gives the tokens every format is
made from: headings, paragraphs, lists, tables, emphasis, code and links. Two token passes add what a file needs:
each ``[n]`` citation becomes a link to its entry in Sources, and each Sources entry links its file (``file://``)
or URL and carries the anchors the citations point to.

- **HTML**: one self-contained page (inline CSS, no scripts, no remote assets).
- **DOCX**: python-docx; Word styles (Title, Heading n, List Bullet/Number, Table Grid), citations as internal
  hyperlinks to bookmarks, sources as external hyperlinks, East Asian text in a CJK font.
- **PDF**: the HTML through WeasyPrint (extra ``export``), which lays out with Pango and embeds subsets of the
  system fonts fontconfig picks, so CJK text needs a CJK font installed (Debian: ``fonts-noto-cjk``); nothing is
  fetched at run time (``url_fetcher`` refuses every URL). Chosen over xhtml2pdf by measurement (docs/export.md).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from deepsearcher.agents.citations import find_citations
from deepsearcher.agents.scaffold import WORDS
from deepsearcher.errors import ExportError

FORMATS = ("md", "html", "docx", "pdf")
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
               "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
               "pdf": "application/pdf"}
FONTS = '"Noto Sans", "DejaVu Sans", "Liberation Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", sans-serif'
CJK_FONT = "Noto Sans CJK SC"
CSS = f"""
@page {{ size: A4; margin: 2cm; }}
body {{ font-family: {FONTS}; font-size: 11pt; line-height: 1.45; color: #111; max-width: 48em; margin: auto; }}
h1 {{ font-size: 20pt; }} h2 {{ font-size: 15pt; margin-top: 1.4em; }} h3 {{ font-size: 12.5pt; }}
table {{ border-collapse: collapse; margin: 0.8em 0; }}
th, td {{ border: 1px solid #999; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }}
th {{ background: #eee; }}
code, pre {{ font-family: "DejaVu Sans Mono", monospace; font-size: 9.5pt; }}
pre {{ background: #f5f5f5; padding: 0.6em; white-space: pre-wrap; }}
a {{ color: #1a4fa0; }} a.cite {{ text-decoration: none; }}
blockquote {{ border-left: 3px solid #ccc; margin-left: 0; padding-left: 1em; color: #444; }}
"""
_SOURCE_HEAD = re.compile(r"^(?P<source>.+?)(?= — |: \[\d)")


def export_format(path: str | Path, fmt: str | None = None) -> str:
    """The format to write: ``fmt`` when given, else the file's extension.

    Raises:
        ExportError: an unknown format or extension.
    """
    name = (fmt or Path(path).suffix.lstrip(".")).lower()
    name = {"markdown": "md", "htm": "html"}.get(name, name)
    if name not in FORMATS:
        given = f"format {fmt!r}" if fmt else f"extension of {str(path)!r}"
        raise ExportError(f"cannot export a report as {given}",
                          hint=f"use a file name ending in .{', .'.join(FORMATS)} or --format {'|'.join(FORMATS)}")
    return name


def export(markdown: str, fmt: str) -> bytes:
    """The report Markdown as a file's bytes in ``fmt`` (one of ``FORMATS``).

    Raises:
        ExportError: unknown format, or PDF without WeasyPrint.
    """
    fmt = export_format("", fmt)
    if fmt == "md":
        return markdown.encode("utf-8")
    if fmt == "html":
        return report_html(markdown).encode("utf-8")
    if fmt == "docx":
        return report_docx(markdown)
    return report_pdf(markdown)


def check_output(path: str | Path, fmt: str | None = None) -> str:
    """The format ``path`` will be written in, checked before the research whose report it will hold, so that a
    path that cannot be written fails in a second, not after minutes of research.

    Raises:
        ExportError: an unknown format, a folder that does not exist or cannot be written, or PDF without WeasyPrint.
    """
    name = export_format(path, fmt)
    folder = Path(path).expanduser().parent
    if not folder.is_dir():
        raise ExportError(f"cannot write the report to {path}: the folder {folder} does not exist",
                          hint="create the folder first, or give --output a path in an existing folder")
    if not os.access(folder, os.W_OK):
        raise ExportError(f"cannot write the report to {path}: the folder {folder} is not writable",
                          hint="give --output a path in a folder you may write to")
    if name == "pdf":
        _weasyprint_html()
    return name


def write_report(markdown: str, path: str | Path, fmt: str | None = None) -> str:
    """Write the report to ``path`` in ``fmt`` (default: by extension); returns the format written."""
    name = export_format(path, fmt)
    Path(path).write_bytes(export(markdown, name))
    return name


# --- parsing ---------------------------------------------------------------------------------------------------------
def parse(markdown: str) -> list[Token]:
    """The report's tokens with citation links and linked, anchored Sources entries."""
    return _markdown().parse(markdown)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.core.ruler.push("report_links", _link_report)
    md.add_render_rule("anchor", lambda _self, tokens, idx, *_: f'<a id="{tokens[idx].meta["name"]}"></a>')
    return md


#: the Sources heading in every report language (``agents.scaffold``): "Sources", "Quellen", "出典"…
_SOURCES_HEADINGS = tuple({words[key] for words in WORDS.values() for key in ("sources", "sources_consulted")
                           if key in words})


def _link_report(state: StateCore) -> None:
    """Citations -> links to ``#source-n``; each Sources entry -> anchors ``source-n`` and a link to its file/URL."""
    in_sources = False
    entries, texts = [], []
    for i, token in enumerate(state.tokens):
        if token.type == "heading_open" and token.tag in {"h1", "h2"}:
            in_sources = state.tokens[i + 1].content.startswith(_SOURCES_HEADINGS)
        if token.type != "inline" or not token.children:
            continue
        if in_sources and _in_list_item(state.tokens, i):
            entries.append(token)
        else:
            texts.append(token)
    anchored: set[int] = set()
    for token in entries:
        token.children = _source_entry(token.children or [], token.content, anchored)
    for token in texts:
        token.children = _cite_links(token.children or [], anchored)


def _in_list_item(tokens: list[Token], index: int) -> bool:
    return index >= 2 and tokens[index - 2].type == "list_item_open"


def _cite_links(children: list[Token], known: set[int]) -> list[Token]:
    """Each ``[n]`` whose numbers all have a Sources entry becomes links; others stay text."""
    out: list[Token] = []
    in_link = 0
    for child in children:
        in_link += child.type == "link_open"
        in_link -= child.type == "link_close"
        markers = [m for m in find_citations(child.content) if set(m.numbers) <= known] \
            if child.type == "text" and not in_link else []
        if not markers:
            out.append(child)
            continue
        text, pos = child.content, 0
        for marker in markers:
            out.append(_text(text[pos:marker.start] + "["))
            for k, number in enumerate(marker.numbers):
                out += ([_text(", ")] if k else []) + _link(f"#source-{number}", str(number), "cite")
            out.append(_text("]"))
            pos = marker.end
        out.append(_text(text[pos:]))
    return [t for t in out if t.type != "text" or t.content]


def _source_entry(children: list[Token], content: str, anchored: set[int]) -> list[Token]:
    """``/docs/a.md — Title: [1], [2] p. 3`` -> anchors for 1 and 2 (added to ``anchored``), the path as a
    ``file://`` link, the rest."""
    head = _SOURCE_HEAD.match(content)
    numbers = [n for marker in find_citations(content.split(" (also in ", 1)[0]) for n in marker.numbers]
    numbers = [n for n in dict.fromkeys(numbers) if n not in anchored]
    anchored.update(numbers)
    anchors = [_anchor(f"source-{n}") for n in numbers]
    first = children[0] if children else None
    if head is None or first is None or first.type != "text" or not first.content.startswith(head["source"]):
        return anchors + children
    source = head["source"]
    href = _href(source)
    linked = _link(href, source) if href else [_text(source)]
    return anchors + linked + [_text(first.content[len(source):])] + children[1:]


def _href(source: str) -> str | None:
    """A link for a source: http(s) URLs as they are, absolute paths as ``file://`` URIs, nothing else."""
    if urlsplit(source).scheme in {"http", "https"}:
        return source
    path = Path(source)
    return path.as_uri() if path.is_absolute() else None


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _link(href: str, text: str, css: str | None = None) -> list[Token]:
    opening = Token("link_open", "a", 1)
    opening.attrs = {"href": href, **({"class": css} if css else {})}
    return [opening, _text(text), Token("link_close", "a", -1)]


def _anchor(name: str) -> Token:
    token = Token("anchor", "", 0)
    token.meta = {"name": name}
    return token


# --- HTML ------------------------------------------------------------------------------------------------------------
def report_html(markdown: str) -> str:
    """A self-contained HTML page of the report (its title from the first heading)."""
    md = _markdown()
    tokens = md.parse(markdown)
    title = next((tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"), "Report")
    body = md.renderer.render(tokens, md.options, {})
    from html import escape

    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{CSS}</style></head><body>\n{body}</body></html>\n")


# --- PDF -------------------------------------------------------------------------------------------------------------
def report_pdf(markdown: str) -> bytes:
    """The HTML page laid out as PDF by WeasyPrint, offline (no URL is ever fetched).

    Raises:
        ExportError: WeasyPrint (or the Pango library it needs) is not installed.
    """
    HTML = _weasyprint_html()

    def refuse(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise ValueError(f"not fetched: {url}")  # a report never loads anything; WeasyPrint logs and goes on

    return HTML(string=report_html(markdown), url_fetcher=refuse).write_pdf()


def _weasyprint_html() -> Any:
    """WeasyPrint's ``HTML`` class.

    Raises:
        ExportError: WeasyPrint (or the Pango library it needs) is not installed.
    """
    try:
        from weasyprint import HTML
    except (ImportError, OSError) as exc:  # OSError: the Pango shared library is missing
        raise ExportError(f"PDF export needs WeasyPrint and Pango ({exc})",
                          hint="pip install 'deepsearcher[export]' (Debian/Ubuntu: apt install libpango-1.0-0 "
                               "fonts-noto-cjk), or export .html or .docx") from exc
    return HTML


# --- DOCX ------------------------------------------------------------------------------------------------------------
def report_docx(markdown: str) -> bytes:
    """The report as a Word document (python-docx), from the same tokens as the HTML."""
    from docx import Document

    document = Document()
    _cjk_font(document)
    DocxWriter(document).write(parse(markdown))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _cjk_font(document: Any) -> None:
    """East Asian text in a CJK font (Word and LibreOffice otherwise pick one that may lack the glyphs)."""
    from docx.oxml.ns import qn

    rpr = document.styles["Normal"].element.get_or_add_rPr()
    fonts = rpr.get_or_add_rFonts()
    fonts.set(qn("w:eastAsia"), CJK_FONT)


class DocxWriter:
    """Walks the markdown-it tokens and adds paragraphs, lists, tables, links and bookmarks to a document."""

    def __init__(self, document: Any) -> None:
        self.doc = document
        self.lists: list[str] = []  # "bullet" / "ordered", innermost last
        self.item_pending = False
        self.table: list[list[tuple[bool, list[Token]]]] | None = None
        self.quote = 0
        self.bookmarks = 0

    def write(self, tokens: list[Token]) -> None:
        i = 0
        while i < len(tokens):
            i = self.block(tokens, i) + 1

    def block(self, tokens: list[Token], i: int) -> int:
        """Handle the block token at ``i``; returns the index of the last token it consumed."""
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            level = int(token.tag[1])
            paragraph = self.doc.add_heading("", level=0 if level == 1 else min(level - 1, 9))
            self.inline(paragraph, tokens[i + 1].children or [])
            return i + 2
        if kind in {"bullet_list_open", "ordered_list_open"}:
            self.lists.append("bullet" if kind == "bullet_list_open" else "ordered")
        elif kind in {"bullet_list_close", "ordered_list_close"}:
            self.lists.pop()
        elif kind == "list_item_open":
            self.item_pending = True
        elif kind == "blockquote_open":
            self.quote += 1
        elif kind == "blockquote_close":
            self.quote -= 1
        elif kind == "table_open":
            return self.add_table(tokens, i)
        elif kind == "inline":
            self.inline(self.paragraph(), token.children or [])
        elif kind in {"fence", "code_block"}:
            run = self.doc.add_paragraph().add_run(token.content.rstrip("\n"))
            run.font.name = "DejaVu Sans Mono"
        elif kind == "hr":
            self.doc.add_paragraph("—" * 10)
        return i

    def paragraph(self) -> Any:
        """A new paragraph styled by where it is: a list item's first paragraph, a quote, or body text."""
        style = None
        if self.lists and self.item_pending:
            depth = len(self.lists)
            base = "List Bullet" if self.lists[-1] == "bullet" else "List Number"
            style = base if depth == 1 else f"{base} {min(depth, 3)}"
        elif self.quote:
            style = "Quote"
        self.item_pending = False
        return self.doc.add_paragraph(style=style)

    def add_table(self, tokens: list[Token], i: int) -> int:
        rows: list[list[tuple[bool, list[Token]]]] = []
        while tokens[i].type != "table_close":
            token = tokens[i]
            if token.type == "tr_open":
                rows.append([])
            elif token.type == "inline":
                rows[-1].append((tokens[i - 1].type == "th_open", token.children or []))
            i += 1
        width = max((len(row) for row in rows), default=0)
        table = self.doc.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, (header, children) in enumerate(row):
                paragraph = table.cell(r, c).paragraphs[0]
                self.inline(paragraph, children, bold=header)
        return i

    def inline(self, paragraph: Any, children: Iterable[Token], bold: bool = False) -> None:
        """Runs for the inline tokens: text, emphasis, code, line breaks, links (external or to a bookmark)."""
        strong, em, link = bold, False, None
        for child in children:
            kind = child.type
            if kind in {"strong_open", "strong_close"}:
                strong = kind == "strong_open" or bold
            elif kind in {"em_open", "em_close"}:
                em = kind == "em_open"
            elif kind == "link_open":
                link = self.hyperlink(paragraph, str(child.attrs.get("href", "")))
            elif kind == "link_close":
                link = None
            elif kind == "anchor":
                self.bookmark(paragraph, child.meta["name"])
            elif kind == "hardbreak":
                paragraph.add_run().add_break()
            elif kind in {"text", "softbreak", "code_inline"}:
                text = " " if kind == "softbreak" else child.content
                run = paragraph.add_run(text)
                run.bold, run.italic = strong or None, em or None
                if kind == "code_inline":
                    run.font.name = "DejaVu Sans Mono"
                if link is not None:
                    self.style_link(run)
                    link.append(run._r)

    def hyperlink(self, paragraph: Any, href: str) -> Any:
        """A ``w:hyperlink`` in the paragraph: to a bookmark for ``#name``, else to the external address."""
        from docx.opc.constants import RELATIONSHIP_TYPE
        from docx.oxml import OxmlElement
        from docx.oxml.ns import qn

        element = OxmlElement("w:hyperlink")
        if href.startswith("#"):
            element.set(qn("w:anchor"), _bookmark_name(href[1:]))
        else:
            element.set(qn("r:id"), paragraph.part.relate_to(href, RELATIONSHIP_TYPE.HYPERLINK, is_external=True))
        paragraph._p.append(element)
        return element

    @staticmethod
    def style_link(run: Any) -> None:
        from docx.shared import RGBColor

        run.font.color.rgb = RGBColor(0x1A, 0x4F, 0xA0)
        run.font.underline = True

    def bookmark(self, paragraph: Any, name: str) -> None:
        from docx.oxml import OxmlElement
        from docx.oxml.ns import qn

        self.bookmarks += 1
        start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
        start.set(qn("w:id"), str(self.bookmarks))
        start.set(qn("w:name"), _bookmark_name(name))
        end.set(qn("w:id"), str(self.bookmarks))
        paragraph._p.append(start)
        paragraph._p.append(end)


def _bookmark_name(name: str) -> str:
    """Word bookmark names: letters, digits and underscores (``source-3`` -> ``source_3``)."""
    return re.sub(r"\W", "_", name)
