"""DOCX fixtures: content controls (block, inline, table rows), text boxes, notes, headers, tables, tracked changes.

Built with python-docx, with lxml for the parts python-docx has no API for (the same XML Word writes).
"""

from __future__ import annotations

import datetime
import io
import re
import zipfile

import docx
from lxml import etree

from tests.fidelity.fixture import Fixture

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = {
    "w": W,
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "wps": "http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
    "v": "urn:schemas-microsoft-com:vml",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
}
DECL = " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items())
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument.wordprocessingml"


def _xml(fragment: str) -> etree._Element:
    return etree.fromstring(fragment)


def _save(d: docx.document.Document) -> bytes:
    buf = io.BytesIO()
    d.core_properties.author = "fidelity-suite"  # no personal data; fixed dates keep the bytes stable
    d.core_properties.last_modified_by = "fidelity-suite"
    d.core_properties.created = d.core_properties.modified = datetime.datetime(2024, 1, 1)
    d.save(buf)
    return _stable_zip(buf.getvalue())


def _stable_zip(data: bytes, extra: dict[str, bytes] | None = None,
                patch: dict[str, tuple[bytes, bytes]] | None = None) -> bytes:
    """Rewrite a zip with fixed timestamps (deterministic bytes), adding parts and patching existing ones; document
    dates in docProps/core.xml are pinned too (openpyxl stamps the save time)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for item in src.infolist():
            body = src.read(item.filename)
            if patch and item.filename in patch:
                old, new = patch[item.filename]
                body = body.replace(old, new)
            if item.filename == "docProps/core.xml":
                body = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", body)
            z.writestr(zipfile.ZipInfo(item.filename, (2024, 1, 1, 0, 0, 0)), body, zipfile.ZIP_DEFLATED)
        for name, body in (extra or {}).items():
            z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), body, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def sdt_block() -> Fixture:
    d = docx.Document()
    d.add_paragraph("OUTSIDE BEFORE the control.")
    sdt = _xml(f'<w:sdt xmlns:w="{W}"><w:sdtPr><w:alias w:val="Renewal"/><w:id w:val="7"/></w:sdtPr><w:sdtContent>'
               '<w:p><w:r><w:t>SDT PARAGRAPH contract renewal date is 14 March</w:t></w:r></w:p>'
               '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>SDT CELL owner</w:t></w:r></w:p></w:tc>'
               '<w:tc><w:p><w:r><w:t>SDT CELL Harbor Logistics</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
               '</w:sdtContent></w:sdt>')
    after = d.add_paragraph("OUTSIDE AFTER the control.")
    after._p.addprevious(sdt)
    return Fixture("docx/sdt_block.docx", "docx", _save(d), source_case="docx_content_control",
                   expected=("OUTSIDE BEFORE the control.", "SDT PARAGRAPH contract renewal date is 14 March",
                             "SDT CELL owner", "SDT CELL Harbor Logistics", "OUTSIDE AFTER the control."),
                   note="paragraph and table inside a body-level content control (w:sdt)")


def sdt_inline_and_rows() -> Fixture:
    d = docx.Document()
    p = d.add_paragraph()
    p._p.append(_xml(f'<w:r xmlns:w="{W}"><w:t xml:space="preserve">The contract value is </w:t></w:r>'))
    p._p.append(_xml(f'<w:sdt xmlns:w="{W}"><w:sdtPr><w:alias w:val="Value"/></w:sdtPr><w:sdtContent>'
                     '<w:r><w:t>EUR 40,000</w:t></w:r></w:sdtContent></w:sdt>'))
    p._p.append(_xml(f'<w:r xmlns:w="{W}"><w:t xml:space="preserve"> per year, payable quarterly.</w:t></w:r>'))
    table = d.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Item"
    table.cell(0, 1).text = "Quantity"
    # a repeating-section content control wrapping a table row, as Word forms write it
    table._tbl.append(_xml(
        f'<w:sdt xmlns:w="{W}"><w:sdtPr><w:alias w:val="Rows"/></w:sdtPr><w:sdtContent>'
        '<w:tr><w:tc><w:p><w:r><w:t>ROW CONTROL safety gloves</w:t></w:r></w:p></w:tc>'
        '<w:tc><w:p><w:r><w:t>ROW CONTROL 120 pairs</w:t></w:r></w:p></w:tc></w:tr></w:sdtContent></w:sdt>'))
    # a cell whose content is a content control (cell-level w:sdt)
    row = table.add_row()
    row.cells[0]._tc.remove(row.cells[0]._tc.p_lst[0])
    row.cells[0]._tc.append(_xml(f'<w:sdt xmlns:w="{W}"><w:sdtContent><w:p><w:r><w:t>CELL CONTROL ear plugs'
                                 '</w:t></w:r></w:p></w:sdtContent></w:sdt>'))
    row.cells[1].text = "400 pieces"
    return Fixture("docx/sdt_inline_rows.docx", "docx", _save(d),
                   expected=("The contract value is EUR 40,000 per year, payable quarterly.", "Item", "Quantity",
                             "ROW CONTROL safety gloves", "ROW CONTROL 120 pairs", "CELL CONTROL ear plugs",
                             "400 pieces"),
                   note="inline content control in a sentence; row-level and cell-level content controls in a table")


_BOX = '<w:txbxContent><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:txbxContent>'


def _textbox_run(text: str) -> etree._Element:
    box = _BOX.format(text)
    return _xml(
        f'<w:r {DECL}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor distT="0" distB="0" '
        'distL="0" distR="0" simplePos="0" relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1" '
        'allowOverlap="1"><wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column"><wp:posOffset>0'
        '</wp:posOffset></wp:positionH><wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset>'
        '</wp:positionV><wp:extent cx="2000000" cy="500000"/><wp:wrapNone/><wp:docPr id="1" name="Text Box 1"/>'
        '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
        f'<wps:wsp><wps:spPr/><wps:txbx>{box}</wps:txbx><wps:bodyPr/></wps:wsp></a:graphicData></a:graphic>'
        '</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape style="width:150pt;height:40pt">'
        f'<v:textbox>{box}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>')


def text_box() -> Fixture:
    d = docx.Document()
    p = d.add_paragraph("Body text before the box.")
    p._p.append(_textbox_run("CALLOUT backup runs at 02:00"))
    d.add_paragraph("Second paragraph.")
    return Fixture("docx/textbox.docx", "docx", _save(d), source_case="docx_text_box",
                   expected=("Body text before the box.", "CALLOUT backup runs at 02:00", "Second paragraph."),
                   noise=("box.CALLOUT",), once=("CALLOUT backup runs at 02:00",),
                   note="text box as mc:AlternateContent (DrawingML choice + VML fallback): once, not glued")


def vml_text_box() -> Fixture:
    d = docx.Document()
    p = d.add_paragraph("Legacy layout paragraph.")
    p._p.append(_xml(f'<w:r {DECL}><w:pict><v:shape style="width:150pt;height:40pt"><v:textbox>'
                     + _BOX.format("VML BOX the generator test is on the first Monday") + '</v:textbox></v:shape>'
                     '</w:pict></w:r>'))
    p2 = d.add_paragraph("Closing line.")
    p2._p.append(_textbox_run("SECOND BOX fuel is ordered at 40 percent"))
    return Fixture("docx/vml_textbox.docx", "docx", _save(d),
                   expected=("Legacy layout paragraph.", "VML BOX the generator test is on the first Monday",
                             "Closing line.", "SECOND BOX fuel is ordered at 40 percent"),
                   once=("VML BOX the generator test is on the first Monday",
                         "SECOND BOX fuel is ordered at 40 percent"),
                   noise=("paragraph.VML", "line.SECOND"),
                   note="a VML-only text box (older Word) and an AlternateContent one in the same document")


def _with_notes(kind: str, body: str, ref_id: int, note_text: str, path: str, note: str,
                case: str | None = None) -> Fixture:
    d = docx.Document()
    p = d.add_paragraph(body)
    tag = "footnoteReference" if kind == "footnote" else "endnoteReference"
    p._p.append(_xml(f'<w:r xmlns:w="{W}"><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                     f'<w:{tag} w:id="{ref_id}"/></w:r>'))
    d.add_paragraph("A second body paragraph follows the note reference.")
    buf = io.BytesIO()
    d.save(buf)
    ref = "footnoteRef" if kind == "footnote" else "endnoteRef"
    part = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{kind}s xmlns:w="{W}">'
            f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
            f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
            f'</w:p></w:{kind}><w:{kind} w:id="{ref_id}"><w:p><w:r><w:{ref}/></w:r><w:r><w:t xml:space="preserve">'
            f' {note_text}</w:t></w:r></w:p></w:{kind}></w:{kind}s>')
    data = _stable_zip(buf.getvalue(), extra={f"word/{kind}s.xml": part.encode()}, patch={
        "[Content_Types].xml": (b"</Types>", f'<Override PartName="/word/{kind}s.xml" ContentType="{CT}.{kind}s+xml"/>'
                                f'</Types>'.encode()),
        "word/_rels/document.xml.rels": (b"</Relationships>", f'<Relationship Id="rIdN1" Type="{REL}/{kind}s" '
                                         f'Target="{kind}s.xml"/></Relationships>'.encode())})
    return Fixture(path, "docx", data, source_case=case, expected=(body, note_text,
                   "A second body paragraph follows the note reference."), once=(note_text,), note=note)


def footnotes() -> Fixture:
    return _with_notes("footnote", "The 2019 audit found two issues.", 1,
                       "FOOTNOTE the second issue was an expired TLS certificate on the billing host",
                       "docx/footnotes.docx", "footnotes in word/footnotes.xml", "docx_footnotes")


def endnotes() -> Fixture:
    return _with_notes("endnote", "Coolant is replaced every two years.", 2,
                       "ENDNOTE the supplier changed the coolant type in 2022",
                       "docx/endnotes.docx", "endnotes in word/endnotes.xml")


def header_footer() -> Fixture:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "HEADER Internal draft do not circulate"
    d.sections[0].footer.paragraphs[0].text = "FOOTER Facilities handbook page"
    d.add_paragraph("The loading dock closes at 17:30 on weekdays.")
    d.add_paragraph("Deliveries after that time go to the night desk.")
    return Fixture("docx/header_footer.docx", "docx", _save(d),
                   expected=("The loading dock closes at 17:30 on weekdays.",
                             "Deliveries after that time go to the night desk."),
                   noise=("HEADER Internal draft", "FOOTER Facilities handbook"),
                   note="headers/footers repeat on every page: off by default (option include_headers=True)")


def tables() -> Fixture:
    d = docx.Document()
    d.add_paragraph("Room bookings for the spring term:")
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate([("Room", "Capacity", "Equipment"), ("MERGED Atrium hall seats 120", "", ""),
                             ("Seminar 2", "24", "projector")]):
        for c, text in enumerate(row):
            t.cell(r, c).text = text
    t.cell(1, 0).merge(t.cell(1, 2))
    inner = t.cell(2, 2).add_table(rows=1, cols=2)
    inner.cell(0, 0).text = "NESTED TABLE spare bulbs"
    inner.cell(0, 1).text = "NESTED TABLE in cupboard B"
    d.add_paragraph("Book rooms at least two days ahead.")
    return Fixture("docx/tables.docx", "docx", _save(d),
                   expected=("Room bookings for the spring term:", "Room", "Capacity", "Equipment",
                             "MERGED Atrium hall seats 120", "Seminar 2", "24", "projector",
                             "NESTED TABLE spare bulbs", "NESTED TABLE in cupboard B",
                             "Book rooms at least two days ahead."),
                   once=("MERGED Atrium hall seats 120",),
                   note="table with a merged (gridSpan) cell and a table nested in a cell")


def runs_and_revisions() -> Fixture:
    d = docx.Document()
    p = d.add_paragraph()
    for frag in (f'<w:r xmlns:w="{W}"><w:t xml:space="preserve">Report faults to the </w:t></w:r>',
                 f'<w:hyperlink xmlns:w="{W}" xmlns:r="{NS["r"]}" w:anchor="desk"><w:r><w:t>service desk</w:t></w:r>'
                 '</w:hyperlink>',
                 f'<w:r xmlns:w="{W}"><w:t xml:space="preserve"> by e</w:t></w:r>',
                 f'<w:r xmlns:w="{W}"><w:noBreakHyphen/><w:t xml:space="preserve">mail or on extension </w:t></w:r>',
                 f'<w:fldSimple xmlns:w="{W}" w:instr=" DOCPROPERTY Ext "><w:r><w:t>4410</w:t></w:r></w:fldSimple>',
                 f'<w:r xmlns:w="{W}"><w:t xml:space="preserve">. The Gesamt</w:t><w:softHyphen/>'
                 '<w:t>konzept is reviewed yearly.</w:t></w:r>'):
        p._p.append(_xml(frag))
    p2 = d.add_paragraph()
    for frag in (f'<w:r xmlns:w="{W}"><w:t xml:space="preserve">Spare keys are kept </w:t></w:r>',
                 f'<w:del xmlns:w="{W}" w:id="1" w:author="x" w:date="2024-01-01T00:00:00Z"><w:r>'
                 '<w:delText>DELETED in the reception safe</w:delText></w:r></w:del>',
                 f'<w:ins xmlns:w="{W}" w:id="2" w:author="x" w:date="2024-01-01T00:00:00Z"><w:r>'
                 '<w:t>in the security office</w:t></w:r></w:ins>',
                 f'<w:r xmlns:w="{W}"><w:t>.</w:t><w:tab/><w:t>Shift A</w:t><w:br/><w:t>Shift B</w:t></w:r>'):
        p2._p.append(_xml(frag))
    return Fixture("docx/runs_revisions.docx", "docx", _save(d),
                   expected=("Report faults to the service desk by e-mail or on extension 4410.",
                             "The Gesamtkonzept is reviewed yearly.", "Spare keys are kept in the security office.",
                             "Shift A", "Shift B"),
                   noise=("DELETED in the reception safe", "\u00ad", "Shift AShift B"),
                   note="hyperlink, non-breaking hyphen, simple field, soft hyphen element, tracked insert/delete, "
                        "tab and line break inside runs")


def headings_lists() -> Fixture:
    d = docx.Document()
    d.core_properties.title = "Onboarding checklist"
    d.add_heading("Onboarding checklist", level=1)
    d.add_paragraph("Collect the badge from reception.", style="List Number")
    d.add_paragraph("Install the password manager.", style="List Number")
    d.add_heading("First week", level=2)
    d.add_paragraph("Shadow a colleague on two support calls.", style="List Bullet")
    return Fixture("docx/headings_lists.docx", "docx", _save(d), title="Onboarding checklist",
                   expected=("Onboarding checklist", "Collect the badge from reception.",
                             "Install the password manager.", "First week",
                             "Shadow a colleague on two support calls."),
                   note="headings, numbered and bulleted lists, core title")


def all_fixtures() -> list[Fixture]:
    return [sdt_block(), sdt_inline_and_rows(), text_box(), vml_text_box(), footnotes(), endnotes(),
            header_footer(), tables(), runs_and_revisions(), headings_lists()]
