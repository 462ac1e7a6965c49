"""Per-format extractors (deepsearcher/ingest/formats): options, page numbers, titles, metadata and skip reasons."""

from __future__ import annotations

import json

import pytest

from deepsearcher.ingest.formats import (extract, extract_docx, extract_html, extract_json, extract_markdown,
                                         extract_pdf, extract_pptx, extract_xlsx)
from deepsearcher.ingest.formats.json_records import describe_skipped, split_path
from deepsearcher.errors import SkipSource
from tests.fidelity import fx_data, fx_docx, fx_pdf, fx_pptx
from tests.fidelity.pdfgen import build_pdf


def test_docx_headers_and_footers_only_when_asked():
    data = fx_docx.header_footer().data
    (default,) = extract_docx(data, "/h.docx")
    (with_headers,) = extract_docx(data, "/h.docx", include_headers=True)
    assert "HEADER" not in default.text and "FOOTER" not in default.text
    assert "HEADER Internal draft do not circulate" in with_headers.text
    assert "FOOTER Facilities handbook page" in with_headers.text


def test_docx_title_and_unreadable_file():
    (doc,) = extract_docx(fx_docx.headings_lists().data, "/c.docx", title="stem")
    assert doc.title == "Onboarding checklist" and doc.metadata["format"] == "docx"
    with pytest.raises(SkipSource, match="unreadable DOCX"):
        extract_docx(b"PK\x03\x04 not really a zip", "/bad.docx")


def test_pptx_one_document_per_slide_with_notes_flag():
    docs = extract_pptx(fx_pptx.slides_tables_notes().data, "/d.pptx", title="deck")
    assert [d.page for d in docs] == [1, 2, 3]
    assert [d.metadata["notes"] for d in docs] == [False, True, False]
    assert "Smoke tests | team Heron" in docs[1].text and docs[0].title == "deck"
    without = extract_pptx(fx_pptx.slides_tables_notes().data, "/d.pptx", include_notes=False)
    assert "SLIDE TWO NOTES" not in without[1].text


def test_pdf_pages_title_and_skip_reasons():
    docs = extract_pdf(fx_pdf.pages().data, "/p.pdf", title="stem")
    assert [(d.page, d.title, d.metadata["format"]) for d in docs] == [(n, "Harbour notices", "pdf") for n in (1, 2, 3)]
    with pytest.raises(SkipSource, match="no text layer"):
        extract_pdf(build_pdf([[]]), "/scan.pdf")
    with pytest.raises(SkipSource, match="unreadable PDF"):
        extract_pdf(b"%PDF-1.4\n garbage", "/bad.pdf")


def test_json_paths():
    assert split_path("text") == ([], ["text"])
    assert split_path("data[].body") == (["data", "[]"], ["body"])
    assert split_path("response.docs[].content.body") == (["response", "docs", "[]"], ["content", "body"])
    assert split_path("paragraphs[]") == ([], ["paragraphs", "[]"])
    assert split_path("[].text") == (["[]"], ["text"])
    deep = next(f for f in fx_data.json_records() if f.name == "json/deep_path.json")
    result = extract_json(deep.data, "/d.json", text_path="response.docs[].content.body", lines=False)
    assert [d.metadata["record"] for d in result.documents] == [0, 1]
    assert result.skipped == {"no text at the path": 1}
    paragraphs = json.dumps([{"paragraphs": ["one", "two"]}]).encode()
    (doc,) = extract_json(paragraphs, "/p.json", text_path="[].paragraphs[]", lines=False).documents
    assert doc.text == "one\n\ntwo"


def test_json_titles_bad_lines_and_nothing_usable():
    data = b'{"title": "A", "text": "alpha"}\nnot json\n{"text": "beta"}\n'
    result = extract_json(data, "/r.jsonl", title="r", lines=True)
    assert [(d.title, d.text) for d in result.documents] == [("A", "alpha"), ("r#1", "beta")]
    assert result.skipped == {"invalid JSON line": 1}
    with pytest.raises(SkipSource, match=r"2 of 2 records skipped: text is a number \(2\).*json_text_path"):
        extract_json(b'[{"text": 1}, {"text": 2}]', "/n.json", lines=False)
    with pytest.raises(SkipSource, match="invalid JSON"):
        extract_json(b'{"text": ', "/broken.json", lines=False)
    assert describe_skipped({"text is an object": 1, "text is a number": 1}, 4) == \
        "2 of 4 records skipped: text is a number (1), text is an object (1)"


def test_markdown_front_matter_becomes_title_and_metadata():
    data = b"---\ntitle: Incident handbook\nlayout: post\ntags: [oncall, sre]\ndate: 2024-02-01\n---\n\n# Body\n"
    (doc,) = extract_markdown(data, "/i.md", title="i")
    assert doc.title == "Incident handbook" and doc.text.strip() == "# Body"
    assert doc.metadata["front_matter"] == {"layout": "post", "tags": ["oncall", "sre"], "date": "2024-02-01"}
    (toml,) = extract_markdown(b'+++\ntitle = "Notes"\ndraft = false\n+++\nBody.\n', "/t.md")
    assert toml.title == "Notes" and toml.text.strip() == "Body." and toml.metadata["front_matter"] == {"draft": False}


def test_markdown_without_or_with_broken_front_matter_keeps_all_text():
    plain = b"# Title\n\n---\n\nA thematic break above."
    assert extract_markdown(plain, "/p.md", title="p")[0].text == plain.decode()
    broken = b"---\ntitle: [unclosed\n---\nBody\n"
    (doc,) = extract_markdown(broken, "/b.md", title="b")
    assert doc.text == broken.decode() and doc.title == "b"


def test_html_bare_text_becomes_paragraphs_and_chrome_stays_out():
    import lxml.html

    from deepsearcher.ingest.formats.html import bare_text_to_paragraphs

    tree = lxml.html.fromstring("<div><section>Lead line<h2>Step</h2>After heading<p>para</p>Tail"
                                "<div>only <b>inline</b> text</div></section></div>")
    bare_text_to_paragraphs(tree)
    assert lxml.html.tostring(tree, encoding="unicode") == (
        "<div><section><p>Lead line</p><h2>Step</h2><p>After heading</p><p>para</p><p>Tail</p>"
        "<p>only <b>inline</b> text</p></section></div>")
    lorem = "Long paragraph about the release and what changed in it. " * 4
    article = (f"<html><head><title> T </title></head><body><nav><a href='/'>Menu</a></nav><article><p>{lorem}</p>"
               "<div>Bare line.</div></article><footer>Cookie settings</footer></body></html>").encode()
    (doc,) = extract_html(article, "/a.html")
    assert doc.title == "T" and doc.metadata == {"format": "html", "content_type": "text/html"}
    assert "Bare line." in doc.text and lorem.strip() in doc.text
    assert "Menu" not in doc.text and "Cookie" not in doc.text
    listing = ("<html><body>" + "".join(f"<article><h2>Post {i}</h2><p>{lorem}</p></article>" for i in range(3))
               + "</body></html>").encode()
    (doc,) = extract_html(listing, "/l.html", title="l")
    # a listing of several <article>s: every post's text (trafilatura 2.3 drops the first post's heading)
    assert doc.title == "l" and doc.text.count(lorem.strip()) == 3 and "Post 2" in doc.text
    with pytest.raises(SkipSource):
        extract_html(b"<html><body><main>   </main></body></html>", "/e.html")


def test_xlsx_sheets_as_pages_and_empty_workbook():
    docs = extract_xlsx(next(f for f in fx_data.xlsx() if f.name == "xlsx/inventory.xlsx").data, "/i.xlsx")
    assert [(d.page, d.metadata["sheet"]) for d in docs] == [(1, "Inventory"), (2, "Suppliers")]
    assert docs[0].text.splitlines()[:3] == ["Inventory", "Part | Bin | Count", "M8 bolt | A-12 | 250"]
    with pytest.raises(SkipSource, match="no cell"):
        extract_xlsx(fx_data._xlsx({"Empty": []}), "/e.xlsx")


def test_epub_title_and_dispatch_of_unknown_suffix_as_text():
    book = next(f for f in fx_data.epub() if f.name == "epub/field_manual.epub")
    (doc,) = extract(book.data, "/f.epub", suffix=".EPUB").documents
    assert doc.title == "Field manual" and "CHAPTER TWO boil stream water" in doc.text
    (log,) = extract(b"plain log line\n", "/x.log", suffix=".log").documents
    assert log.text == "plain log line\n" and log.metadata["encoding"] == "utf-8"
