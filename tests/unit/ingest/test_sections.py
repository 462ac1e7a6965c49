"""A chunk's heading path and sheet rows (ingest.sections), and the [UNK] notice rule (ingest.scripts)."""

from __future__ import annotations

from deepsearcher.ingest.scripts import unrepresented_notice
from deepsearcher.ingest.sections import heading_offsets, markdown_headings, row_ranges, section_paths

DOC = "# Guide\n\nIntro text.\n\n## Install\n\nInstall words.\n\n### Linux\n\nLinux words here.\n\n## Use\n\nUse it."


def test_markdown_headings_skip_code_fences_and_read_setext() -> None:
    text = "Title\n=====\n\n```\n# not a heading\n```\n\n## Part *two*\n"
    assert markdown_headings(text) == [[1, "Title"], [2, "Part *two*"]]  # as written (found as a line)


def test_a_piece_gets_the_path_of_the_section_holding_most_of_it() -> None:
    headings = markdown_headings(DOC)
    pieces = ["# Guide\n\nIntro text.", "Install words.\n\n### Linux\n\nLinux words here.", "## Use\n\nUse it."]
    assert section_paths(DOC, headings, pieces) == [["Guide"], ["Guide", "Install", "Linux"], ["Guide", "Use"]]


def test_a_heading_not_found_as_a_line_is_left_out() -> None:
    assert heading_offsets("Install the Install tool.\n\nInstall\n\ntext", [[1, "Install"], [2, "Missing"]]) == \
        [(27, 1, "Install")]


def test_row_ranges_follow_the_lines_of_each_piece() -> None:
    text = "Prices\nbolt | 2\nnut | 1\nwasher | 3"
    assert row_ranges(text, [0, 1, 4, 5], ["Prices\nbolt | 2", "nut | 1\nwasher | 3"]) == [[1, 1], [4, 5]]


def test_unrepresented_notice_counts_letters_of_unknown_words() -> None:
    thai = "กรุงเทพ มหานคร"
    assert unrepresented_notice(["Berlin Straße"], lambda w: False) == ""
    notice = unrepresented_notice([thai + " and some English words"], lambda w: not w.isascii())
    assert notice.startswith("41% of its letters (Thai) are unknown")  # 13 Thai of 32 letters
    assert unrepresented_notice(["x" * 100 + " กรุง"], lambda w: True) == ""  # under 5 %: a stray name
