"""PPTX fixtures: groups (nested three deep), speaker notes, tables (also inside a group), several slides."""

from __future__ import annotations

import datetime
import io

from pptx import Presentation
from pptx.util import Inches

from tests.fidelity.fixture import Fixture
from tests.fidelity.fx_docx import _stable_zip


def _save(prs: Presentation) -> bytes:
    prs.core_properties.author = "fidelity-suite"
    prs.core_properties.last_modified_by = "fidelity-suite"
    prs.core_properties.created = prs.core_properties.modified = datetime.datetime(2024, 1, 1)
    buf = io.BytesIO()
    prs.save(buf)
    return _stable_zip(buf.getvalue())


def grouped() -> Fixture:
    markers = ["PLAIN BOX launch checklist", "GROUPED BOX rollback window is 45 minutes",
               "NESTED GROUP BOX pager rota owner is team Kestrel"]
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    slide.shapes.add_textbox(Inches(1), Inches(0.5), Inches(6), Inches(1)).text = markers[0]
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text = markers[1]
    inner = group.shapes.add_group_shape()
    inner.shapes.add_textbox(Inches(1), Inches(3.5), Inches(6), Inches(1)).text = markers[2]
    return Fixture("pptx/grouped.pptx", "pptx", _save(prs), source_case="pptx_grouped_shapes",
                   expected=tuple(markers), pages={1: tuple(markers)}, once=tuple(markers),
                   note="text boxes in a group and in a group inside a group")


def deep_groups_and_table() -> Fixture:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Site map"
    g1 = slide.shapes.add_group_shape()
    g1.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1)).text = "LEVEL ONE loading bay"
    g2 = g1.shapes.add_group_shape()
    g2.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1)).text = "LEVEL TWO cold store"
    g3 = g2.shapes.add_group_shape()
    g3.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1)).text = "LEVEL THREE freezer room 4"
    # a table moved into the innermost group (python-pptx has no API for it; PowerPoint allows it)
    frame = slide.shapes.add_table(2, 2, Inches(5), Inches(2), Inches(4), Inches(1))
    for (r, c), text in {(0, 0): "Zone", (0, 1): "Temperature", (1, 0): "GROUP TABLE freezer",
                         (1, 1): "GROUP TABLE minus 18 C"}.items():
        frame.table.cell(r, c).text = text
    g3._element.append(frame._element)
    markers = ("Site map", "LEVEL ONE loading bay", "LEVEL TWO cold store", "LEVEL THREE freezer room 4", "Zone",
               "Temperature", "GROUP TABLE freezer", "GROUP TABLE minus 18 C")
    return Fixture("pptx/deep_groups_table.pptx", "pptx", _save(prs), expected=markers, pages={1: markers},
                   once=("LEVEL THREE freezer room 4", "GROUP TABLE freezer"),
                   note="groups three deep, a table inside the innermost group")


def notes() -> Fixture:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = "Quarterly review"
    slide.notes_slide.notes_text_frame.text = "NOTES: churn fell because the onboarding call moved to day two"
    return Fixture("pptx/notes.pptx", "pptx", _save(prs), source_case="pptx_speaker_notes",
                   expected=("Quarterly review", "NOTES: churn fell because the onboarding call moved to day two"),
                   pages={1: ("Quarterly review", "NOTES: churn fell because the onboarding call moved to day two")},
                   note="speaker notes stored with their slide")


def slides_tables_notes() -> Fixture:
    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[1])
    s1.shapes.title.text = "Release plan"
    body = s1.placeholders[1].text_frame
    body.text = "Freeze the branch on Tuesday"
    body.add_paragraph().text = "Tag the release candidate on Wednesday"
    s2 = prs.slides.add_slide(prs.slide_layouts[5])
    s2.shapes.title.text = "Owners"
    table = s2.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for (r, c), text in {(0, 0): "Task", (0, 1): "Owner", (1, 0): "Changelog", (1, 1): "team Osprey",
                         (2, 0): "Smoke tests", (2, 1): "team Heron"}.items():
        table.cell(r, c).text = text
    s2.notes_slide.notes_text_frame.text = "SLIDE TWO NOTES team Heron needs the staging keys by Monday"
    s3 = prs.slides.add_slide(prs.slide_layouts[6])
    shape = s3.shapes.add_shape(1, Inches(1), Inches(1), Inches(4), Inches(2))  # rectangle autoshape with text
    shape.text_frame.text = "SHAPE TEXT rollback owner is the release captain"
    return Fixture("pptx/slides_tables_notes.pptx", "pptx", _save(prs),
                   expected=("Release plan", "Freeze the branch on Tuesday", "Tag the release candidate on Wednesday",
                             "Owners", "Task", "Owner", "Changelog", "team Osprey", "Smoke tests", "team Heron",
                             "SLIDE TWO NOTES team Heron needs the staging keys by Monday",
                             "SHAPE TEXT rollback owner is the release captain"),
                   pages={1: ("Freeze the branch on Tuesday",), 2: ("Smoke tests", "SLIDE TWO NOTES team Heron"),
                          3: ("SHAPE TEXT rollback owner",)},
                   note="three slides: bullets, a table with notes, an autoshape; page = slide number")


def all_fixtures() -> list[Fixture]:
    return [grouped(), deep_groups_and_table(), notes(), slides_tables_notes()]
