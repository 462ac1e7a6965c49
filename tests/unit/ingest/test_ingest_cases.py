"""Every case of ../shared/cases/ingest as a test with the right stored text (from each script's docstring).

The inputs are built by tests/fidelity (copies of the case scripts' logic, so these tests run where ../shared is
absent); each test states the stored text the case's docstring asks for.
"""

from __future__ import annotations

import pytest

from deepsearcher.ingest.formats import extract, extract_json, extract_pdf
from deepsearcher.errors import SkipSource
from deepsearcher.ingest.normalize import normalize_documents
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.types import Document
from tests.fidelity import fx_data, fx_docx, fx_html, fx_pdf, fx_pptx, fx_text


def _stored(data: bytes, suffix: str, **options) -> list[Document]:  # type: ignore[no-untyped-def]
    return normalize_documents(extract(data, "/case/file" + suffix, suffix=suffix, **options).documents)


def _text(docs: list[Document]) -> str:
    return "\n\n".join(d.text for d in docs)


def test_pptx_grouped_shapes():
    (slide,) = _stored(fx_pptx.grouped().data, ".pptx")
    assert slide.page == 1
    for marker in ("PLAIN BOX launch checklist", "GROUPED BOX rollback window is 45 minutes",
                   "NESTED GROUP BOX pager rota owner is team Kestrel"):
        assert slide.text.count(marker) == 1


def test_pptx_speaker_notes_are_stored_with_their_slide():
    (slide,) = _stored(fx_pptx.notes().data, ".pptx")
    assert slide.page == 1 and slide.metadata["notes"] is True
    assert slide.text == "Quarterly review\n\nNOTES: churn fell because the onboarding call moved to day two"


def test_docx_content_control_paragraph_and_table_in_document_order():
    (doc,) = _stored(fx_docx.sdt_block().data, ".docx")
    assert doc.text == ("OUTSIDE BEFORE the control.\n\nSDT PARAGRAPH contract renewal date is 14 March\n\n"
                        "SDT CELL owner | SDT CELL Harbor Logistics\n\nOUTSIDE AFTER the control.")


def test_docx_text_box_once_and_apart_from_the_body():
    (doc,) = _stored(fx_docx.text_box().data, ".docx")
    assert doc.text == "Body text before the box.\n\nCALLOUT backup runs at 02:00\n\nSecond paragraph."


def test_docx_footnotes_are_stored():
    (doc,) = _stored(fx_docx.footnotes().data, ".docx")
    assert doc.text == ("The 2019 audit found two issues.\n\nA second body paragraph follows the note reference.\n\n"
                        "FOOTNOTE the second issue was an expired TLS certificate on the billing host")


@pytest.mark.parametrize("name", ["aes128", "aes256", "rc4"])
def test_pdf_empty_user_password_is_decrypted(name: str):
    fixture = next(f for f in fx_pdf.encrypted() if f.name == f"pdf/{name}.pdf")
    (page,) = normalize_documents(extract_pdf(fixture.data, "/case/x.pdf"))
    assert page.text == "Restricted manual: torque for M8 bolts is 25 Nm" and page.page == 1


def test_pdf_with_a_real_password_is_a_skip_with_a_reason_not_a_crash():
    fixture = next(f for f in fx_pdf.encrypted() if f.skip)
    with pytest.raises(SkipSource, match="needs a password"):
        extract_pdf(fixture.data, "/case/locked.pdf")
    # the plain note beside it in the case folder loads on its own
    assert _text(_stored(b"Plain note: the maintenance window is Sunday 03:00.\n", ".txt")) == \
        "Plain note: the maintenance window is Sunday 03:00."


def test_nul_in_extracted_text_pdf_pages_are_kept_without_nuls():
    few, many = fx_pdf.nul_glyphs()
    few_text = _text(_stored(few.data, ".pdf"))
    assert "\x00" not in few_text and "move is planned for the spring." in few_text
    many_text = _text(_stored(many.data, ".pdf"))  # ~2.5 % NUL glyphs: not "binary or corrupt"
    assert "\x00" not in many_text
    assert "review board will meet again in the autumn to decide on the budget for next year." in many_text


def test_nul_in_extracted_text_jsonl():
    nul = next(f for f in fx_data.json_records() if f.name == "json/nul.jsonl")
    docs = _stored(nul.data, ".jsonl")
    assert [d.text for d in docs] == [
        "The backup job runs nightly at 02:00 and keeps 14 copies.",
        "Export from the old CRM: the customer tier is gold and the renewal is due in June."]


def test_json_non_string_text_lists_joined_others_counted():
    records = next(f for f in fx_data.json_records() if f.name == "json/records.jsonl")
    result = extract_json(records.data, "/case/records.jsonl", lines=True)
    assert [d.text for d in result.documents] == [
        "The staging cluster is rebuilt every Friday at 18:00.",
        "PARAGRAPH ONE the VPN certificate expires on 30 September.\n\n"
        "PARAGRAPH TWO renewals are requested through the service desk."]
    assert result.skipped == {"text is an object": 1, "text is a number": 1} and result.skipped_count == 2
    nested = extract_json(records.data, "/case/records.jsonl", lines=True, text_path="text.body")
    assert [d.text for d in nested.documents] == ["NESTED BODY the on-call phone is handed over on Mondays."]


def test_json_records_under_a_top_level_key_are_found():
    wrapped = next(f for f in fx_data.json_records() if f.name == "json/wrapped.json")
    for path in ("text", "data[].text"):
        result = extract_json(wrapped.data, "/case/wrapped.json", lines=False, text_path=path)
        assert [d.text for d in result.documents] == ["WRAPPED ONE printers on floor 3 use the follow-me queue.",
                                                      "WRAPPED TWO guest Wi-Fi passwords rotate weekly."]


def test_html_docs_page_keeps_div_line_and_code_blocks_not_nav_or_footer():
    text = _text(_stored(fx_html.docs_page().data, ".html"))
    for kept in ("IMPORTANT LINE the agent must run as the relay user, never as root.",
                 "sudo apt-get install relay-agent=4.2.1 --no-install-recommends",
                 "systemctl status relay-agent --no-pager", "relayctl health --timeout 30s"):
        assert kept in text
    assert "Log in" not in text and "Cookie settings" not in text


def test_same_file_in_two_folders_gives_identical_text():
    # extraction side only: both copies store the same text (the retrieval stage folds identical text into one slot)
    policy = next(f for f in fx_text.markdown() if f.name == "md/policy.md")
    first, second = _stored(policy.data, ".md"), _stored(policy.data, ".md")
    assert first[0].text == second[0].text and first[0].text.startswith("# Travel policy")


def test_soft_hyphen_and_zero_width_characters_are_removed():
    shy = _text(_stored(fx_html.soft_hyphens().data, ".html"))
    assert "Gesamtkonzept" in shy and "Wertpapierindex" in shy and "\u00ad" not in shy
    txt = _text(_stored(next(f for f in fx_text.invisible() if f.name == "txt/soft_hyphen.txt").data, ".txt"))
    assert txt == "Das Gesamtkonzept sieht einen Wertpapierindex mit Verwaltungskosten unter 0,2 Prozent vor."
    md = _text(_stored(next(f for f in fx_text.markdown() if f.name == "md/zero_width.md").data, ".md"))
    assert "ReplicationControllerManager" in md and "cluster-wide" in md


def test_markdown_base64_image_gives_one_or_two_chunks():
    note = next(f for f in fx_text.markdown() if f.name == "md/note_base64.md")
    docs = _stored(note.data, ".md")
    assert docs[0].text == ("# Backup rota\n\nThe backup rota: Anna covers Mondays, Ben covers Tuesdays, and restores "
                            "are tested on the first Friday of each month.\n\n![diagram]([data URI image/png])\n\n"
                            "Escalations go to the storage team channel.")
    assert 1 <= len(Splitter(240, 32).split(docs, "h")) <= 2


def test_short_cp1252_text_is_decoded_as_windows_1252():
    fixture = next(f for f in fx_text.encodings() if f.name == "txt/cp1252_short.txt")
    assert _text(_stored(fixture.data, ".txt")) == "Grüße aus München – Straße €5. Der Kaffee kostet 3 €."
