"""Reports exported as DOCX, PDF and HTML from the one report Markdown, read back with python-docx and pypdf: a table,
a CJK paragraph and 3 citations, with the citations linking to Sources and the Sources linking to their files/URLs."""

from __future__ import annotations

import io
import shutil
import subprocess

import pytest

from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.errors import ExportError
from deepsearcher.report_export import export, export_format, report_html, write_report
from deepsearcher.types import Chunk, Report, Source, Usage

CJK = "向量数据库 Milvus Lite 在本地文件中存储所有数据，无需单独的服务器"
ANSWER = (f"Milvus Lite is the **embedded** edition of Milvus [1]; it keeps *one file* [2].\n\n"
          "| Edition | Needs a server |\n|---|---|\n| Lite | no [1] |\n| Standalone | yes [3] |\n\n"
          f"{CJK} [2]。\n\n- Runs inside `python` [1].\n- Scales to billions with the server [3].")


def chunk(cid: str, source: str, title: str, page: int | None = None) -> Chunk:
    return Chunk(id=cid, text=f"text of {cid}", source=source, title=title, page=page, chunk_index=0, doc_hash="h")


@pytest.fixture(scope="module")
def markdown() -> str:
    sources = [Source(1, chunk("a", "/docs/milvus_lite.md", "Milvus Lite", page=2), "docs"),
               Source(2, chunk("b", "/docs/milvus_lite.md", "Milvus Lite"), "docs"),
               Source(3, chunk("c", "https://milvus.io/docs/overview.md", "Overview"), "web")]
    report = Report(question="What is Milvus Lite?", answer=ANSWER, sources=sources, sub_queries=[], iterations=1,
                    usage=Usage(), agent="deep_search")
    return report_markdown(report, title=True)


def test_the_format_comes_from_the_extension_or_the_option() -> None:
    assert export_format("r.DOCX") == "docx" and export_format("r.out", "pdf") == "pdf"
    assert export_format("r.htm") == "html" and export_format("notes.markdown") == "md"
    with pytest.raises(ExportError, match=r"cannot export a report as extension of 'r.odt'") as caught:
        export_format("r.odt")
    assert caught.value.hint is not None and "--format md|html|docx|pdf" in caught.value.hint


def test_html_links_citations_to_sources_and_sources_to_their_files(markdown: str) -> None:
    html = report_html(markdown)
    assert '<h1>What is Milvus Lite?</h1>' in html and "<table>" in html and CJK in html
    assert html.count('href="#source-1"') == 3 and 'href="#source-3"' in html
    assert ('<li><a id="source-1"></a><a id="source-2"></a><a href="file:///docs/milvus_lite.md">'
            '/docs/milvus_lite.md</a> — Milvus Lite: [1] p. 2, [2]</li>') in html
    assert '<a id="source-3"></a><a href="https://milvus.io/docs/overview.md">' in html
    assert "<script" not in html and "http" not in html.split("<body>")[0]  # self-contained, nothing remote


@pytest.mark.parametrize("language", ["de", "ja"])
def test_citations_link_to_sources_in_another_report_language(language: str) -> None:
    sources = [Source(1, chunk("a", "/docs/milvus_lite.md", "Milvus Lite"), "docs")]
    report = Report(question="q", answer="Milvus Lite [1].", sources=sources, sub_queries=[], iterations=1,
                    usage=Usage(), agent="deep_search", language=language)
    html = report_html(report_markdown(report, title=True))
    assert 'href="#source-1"' in html and '<li><a id="source-1"></a>' in html


def test_model_html_and_unsafe_links_stay_inert() -> None:
    html = report_html("# T\n\n<script>alert(1)</script> [x](javascript:alert(1)) [1]\n")
    body = html.split("<body>", 1)[1]
    assert "<script" not in body and "&lt;script&gt;" in body and 'href="javascript' not in body
    assert '<a href="#source-1"' not in body  # no Sources entry 1: the citation stays text


def test_docx_reads_back_with_headings_table_cjk_and_links(markdown: str) -> None:
    from docx import Document

    document = Document(io.BytesIO(export(markdown, "docx")))
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs]
    assert paragraphs[0] == ("Title", "What is Milvus Lite?")
    assert ("Normal", "Milvus Lite is the embedded edition of Milvus [1]; it keeps one file [2].") in paragraphs
    assert ("Normal", f"{CJK} [2]。") in paragraphs
    assert ("List Bullet", "Runs inside python [1].") in paragraphs
    assert ("Heading 1", "Sources") in paragraphs
    assert [[c.text for c in row.cells] for row in document.tables[0].rows] == [
        ["Edition", "Needs a server"], ["Lite", "no [1]"], ["Standalone", "yes [3]"]]
    links = [(h.text, h.address, h.fragment) for p in document.paragraphs for h in p.hyperlinks]
    assert links == [(str(n), "", f"source_{n}") for n in (1, 2, 2, 1, 3)] + [
        ("/docs/milvus_lite.md", "file:///docs/milvus_lite.md", ""),
        ("https://milvus.io/docs/overview.md", "https://milvus.io/docs/overview.md", "")]
    xml = document.element.xml
    assert all(f'w:name="source_{n}"' in xml for n in (1, 2, 3))  # the bookmarks the citations jump to
    table_links = [h.fragment for cell in document.tables[0].column_cells(1) for p in cell.paragraphs
                   for h in p.hyperlinks]
    assert table_links == ["source_1", "source_3"]


def test_pdf_reads_back_with_text_cjk_and_links(markdown: str, tmp_path) -> None:
    pytest.importorskip("weasyprint", reason="PDF export needs the extra `export` (weasyprint)")
    from pypdf import PdfReader

    path = tmp_path / "report.pdf"
    assert write_report(markdown, path) == "pdf"
    reader = PdfReader(path)
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    if _cjk_font_installed():  # without one, the text layer of the CJK report is unreadable (the Latin-only test)
        assert "What is Milvus Lite?" in text and "Standalone yes [3]" in text and "Sources" in text
    uris, internal = [], 0
    for page in reader.pages:
        for annot in page.get("/Annots", []):
            action = annot.get_object().get("/A", {})
            if "/URI" in action:
                uris.append(action["/URI"])
            elif action.get("/S") == "/GoTo" or "/Dest" in annot.get_object():
                internal += 1
    assert uris == ["file:///docs/milvus_lite.md", "https://milvus.io/docs/overview.md"]
    assert internal == 7  # every citation: [1] [2] in the text, [1] [3] in the table, [2] in CJK, [1] [3] in the list
    fonts = {str(font.get_object().get("/BaseFont")) for page in reader.pages
             for font in page["/Resources"]["/Font"].values()}
    if not _cjk_font_installed():
        pytest.skip("no CJK font installed (Debian: fonts-noto-cjk): the CJK text cannot be drawn")
    assert CJK.replace(" ", "") in text.replace(" ", "")
    assert any("CJK" in font for font in fonts), fonts  # embedded, so the PDF shows it anywhere


def test_pdf_of_a_latin_report_reads_back_without_any_cjk_font(markdown: str, tmp_path) -> None:
    pytest.importorskip("weasyprint", reason="PDF export needs the extra `export` (weasyprint)")
    from pypdf import PdfReader

    latin = "\n".join(line for line in markdown.splitlines() if CJK not in line)
    path = tmp_path / "latin.pdf"
    assert write_report(latin, path) == "pdf"
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(path).pages)
    assert "What is Milvus Lite?" in text and "Standalone yes [3]" in text and "Sources" in text


def _cjk_font_installed() -> bool:
    if shutil.which("fc-list") is None:
        return False
    return bool(subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout.strip())
