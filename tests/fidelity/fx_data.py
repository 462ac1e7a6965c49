"""JSON/JSONL, XLSX and EPUB fixtures."""

from __future__ import annotations

import io
import json
import zipfile

from tests.fidelity.fixture import Fixture

STAMP = (2024, 1, 1, 0, 0, 0)


def _jsonl(records: list[object]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def json_records() -> list[Fixture]:
    recs = [
        {"title": "plain", "text": "The staging cluster is rebuilt every Friday at 18:00."},
        {"title": "paragraphs", "text": ["PARAGRAPH ONE the VPN certificate expires on 30 September.",
                                         "PARAGRAPH TWO renewals are requested through the service desk."]},
        {"title": "nested", "text": {"body": "NESTED BODY the on-call phone is handed over on Mondays.",
                                     "lang": "en"}},
        {"title": "number", "text": 42},
    ]
    wrapped = {"data": [{"text": "WRAPPED ONE printers on floor 3 use the follow-me queue."},
                        {"text": "WRAPPED TWO guest Wi-Fi passwords rotate weekly."}]}
    nested_path = {"response": {"total": 2, "docs": [
        {"id": 1, "content": {"body": "DEEP ONE the archive tapes are stored off site.", "lang": "en"}},
        {"id": 2, "content": {"body": ["DEEP TWO restores take two days.", "DEEP TWO request them early."],
                              "lang": "en"}},
        {"id": 3, "content": {"lang": "en"}}]}}
    nul = [{"title": "clean", "text": "The backup job runs nightly at 02:00 and keeps 14 copies."},
           {"title": "nul", "text": "Export from the old CRM:\u0000 the customer tier is gold and the renewal is due "
                                    "in June."}]
    array = [{"title": "Lift", "text": ["The goods lift takes 1,000 kg.", "It is inspected every six months."]},
             {"title": "Stairs", "text": "Stairwell B is closed for painting until Friday."}, "a bare string record"]
    return [
        Fixture("json/records.jsonl", "json", _jsonl(recs), source_case="json_non_string_text", skipped_records=2,
                expected=("The staging cluster is rebuilt every Friday at 18:00.",
                          "PARAGRAPH ONE the VPN certificate expires on 30 September.",
                          "PARAGRAPH TWO renewals are requested through the service desk."),
                noise=('"lang"', "42"),
                note="text as a string, a list of paragraphs (joined), an object and a number (both counted as "
                     "skipped with the reason)"),
        Fixture("json/records_nested_path.jsonl", "json", _jsonl(recs[2:3] * 2), options={"text_path": "text.body"},
                expected=("NESTED BODY the on-call phone is handed over on Mondays.",), noise=('"lang"',),
                note="text under a nested object, reached with text_path"),
        Fixture("json/wrapped.json", "json", json.dumps(wrapped).encode(), source_case="json_non_string_text",
                expected=("WRAPPED ONE printers on floor 3 use the follow-me queue.",
                          "WRAPPED TWO guest Wi-Fi passwords rotate weekly."),
                note="records under one top-level key: found without configuration"),
        Fixture("json/deep_path.json", "json", json.dumps(nested_path).encode(), skipped_records=1,
                options={"text_path": "response.docs[].content.body"},
                expected=("DEEP ONE the archive tapes are stored off site.", "DEEP TWO restores take two days.",
                          "DEEP TWO request them early."), noise=('"total"', '"lang"'),
                note="records and text at a configured path (response.docs[].content.body)"),
        Fixture("json/nul.jsonl", "json", _jsonl(nul), source_case="nul_in_extracted_text",
                expected=("The backup job runs nightly at 02:00 and keeps 14 copies.",
                          "Export from the old CRM: the customer tier is gold and the renewal is due in June."),
                noise=("\x00",), note="a \\u0000 escape inside the text"),
        Fixture("json/array.json", "json", json.dumps(array, ensure_ascii=False).encode(),
                expected=("The goods lift takes 1,000 kg.", "It is inspected every six months.",
                          "Stairwell B is closed for painting until Friday.", "a bare string record"),
                note="a top-level array: list text, string text, and a bare string record"),
    ]


def _xlsx(sheets: dict[str, list[list[object]]]) -> bytes:
    import datetime

    from openpyxl import Workbook

    wb = Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    wb.properties.creator = "fidelity-suite"
    wb.properties.created = wb.properties.modified = datetime.datetime(2024, 1, 1)
    buf = io.BytesIO()
    wb.save(buf)
    from tests.fidelity.fx_docx import _stable_zip

    return _stable_zip(buf.getvalue())


def xlsx() -> list[Fixture]:
    inventory = {"Inventory": [["Part", "Bin", "Count"], ["M8 bolt", "A-12", 250], ["Hinge, steel", None, 40],
                               ["Washer", "C-03", None]],
                 "Suppliers": [["Name", "Contact hours"], ["Northwind Fasteners", "08:00-16:00"],
                               ["Contoso Metals", "by e-mail only"]]}
    sparse = {"Notes": [["OPEN ITEM replace the loading bay light"], [], [None, None, "FAR CELL ask facilities"],
                        ["Größe", "Überprüfung fällig"]]}
    return [
        Fixture("xlsx/inventory.xlsx", "xlsx", _xlsx(inventory),
                expected=("Inventory", "Part", "M8 bolt", "A-12", "250", "Hinge, steel", "40", "Washer", "C-03",
                          "Suppliers", "Northwind Fasteners", "08:00-16:00", "Contoso Metals", "by e-mail only"),
                noise=("NaN", "Unnamed: ", "nan"), note="two sheets, empty cells (no NaN noise)"),
        Fixture("xlsx/sparse.xlsx", "xlsx", _xlsx(sparse),
                expected=("OPEN ITEM replace the loading bay light", "FAR CELL ask facilities", "Größe",
                          "Überprüfung fällig"), noise=("NaN", "Unnamed: ", "nan"),
                note="a sparse sheet without a header row"),
    ]


def _epub(title: str, chapters: list[tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype", STAMP), "application/epub+zip", zipfile.ZIP_STORED)

        def put(name: str, text: str) -> None:
            z.writestr(zipfile.ZipInfo(name, STAMP), text.encode("utf-8"), zipfile.ZIP_DEFLATED)

        put("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
            'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/'
            'oebps-package+xml"/></rootfiles></container>')
        items = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                        for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        put("OEBPS/content.opf", '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf"'
            ' version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:identifier id="id">urn:uuid:00000000-0000-4000-8000-000000000001</dc:identifier><dc:title>{title}'
            '</dc:title><dc:language>en</dc:language><meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>'
            f'</metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" '
            f'properties="nav"/>{items}</manifest><spine>{spine}</spine></package>')
        links = "".join(f'<li><a href="c{i}.xhtml">{h}</a></li>' for i, (h, _) in enumerate(chapters))
        put("OEBPS/nav.xhtml", '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head><body>'
            f'<nav epub:type="toc"><ol>{links}</ol></nav></body></html>')
        for i, (heading, body) in enumerate(chapters):
            put(f"OEBPS/c{i}.xhtml", '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/'
                f'xhtml"><head><title>{heading}</title></head><body><h1>{heading}</h1>{body}</body></html>')
    return buf.getvalue()


def epub() -> list[Fixture]:
    manual = _epub("Field manual", [
        ("Chapter 1 Tents", "<p>CHAPTER ONE pitch the tent with the door away from the wind.</p>"
                            "<p>Peg the corners before the poles go in.</p>"),
        ("Chapter 2 Water", "<p>CHAPTER TWO boil stream water for one full minute.</p>"
                            "<table><tr><td>TABLE altitude above 2000 m</td><td>TABLE boil three minutes</td></tr>"
                            "</table>")])
    novel = _epub("Die Reise", [
        ("Erstes Kapitel", "<p>Die Reise\u00adgesellschaft erreichte das Berg\u00addorf am späten Abend.</p>"
                           '<p>Der Wirt<a href="#n1" epub:type="noteref" xmlns:epub="http://www.idpf.org/2007/ops">1'
                           '</a> öffnete trotzdem die Küche.</p><aside id="n1" epub:type="footnote" '
                           'xmlns:epub="http://www.idpf.org/2007/ops"><p>FUSSNOTE der Wirt hieß Anton.</p></aside>')])
    return [
        Fixture("epub/field_manual.epub", "epub", manual, title="Field manual",
                expected=("CHAPTER ONE pitch the tent with the door away from the wind.",
                          "Peg the corners before the poles go in.",
                          "CHAPTER TWO boil stream water for one full minute.",
                          "TABLE altitude above 2000 m", "TABLE boil three minutes"),
                note="two chapters, a table"),
        Fixture("epub/soft_hyphen_novel.epub", "epub", novel, title="Die Reise",
                expected=("Die Reisegesellschaft erreichte das Bergdorf am späten Abend.",
                          "öffnete trotzdem die Küche.",
                          "FUSSNOTE der Wirt hieß Anton."), noise=("\u00ad",),
                note="an e-book with soft hyphens and an EPUB 3 footnote (aside)"),
    ]


def all_fixtures() -> list[Fixture]:
    return [*json_records(), *xlsx(), *epub()]
