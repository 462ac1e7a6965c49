"""The fidelity suite: every fixture through the new extractors and the normalisation stage stores all of its
expected text and none of its noise (the aim of issue #13; the bench, scripts/bench_fidelity.py, scores the others)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepsearcher.ingest.formats import extract
from deepsearcher.errors import SkipSource
from deepsearcher.ingest.normalize import normalize_documents
from tests.fidelity.build import all_fixtures, build
from tests.fidelity.fixture import Fixture, fold, score

FIXTURES = all_fixtures()


def _load(fixture: Fixture):  # type: ignore[no-untyped-def]
    result = extract(fixture.data, f"/suite/{fixture.name}", suffix=Path(fixture.name).suffix,
                     title=Path(fixture.name).stem, **fixture.options)
    return result, normalize_documents(result.documents)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_fixture_is_stored_whole_and_clean(fixture: Fixture) -> None:
    if fixture.skip:
        with pytest.raises(SkipSource, match=fixture.skip):
            _load(fixture)
        return
    result, docs = _load(fixture)
    result_score = score(fixture, "\n\n".join(d.text for d in docs))
    assert result_score.missing == () and result_score.present_noise == (), fixture.note
    for page, phrases in fixture.pages.items():
        on_page = fold("\n".join(d.text for d in docs if d.page == page))
        assert all(fold(p) in on_page for p in phrases), f"page {page} of {fixture.name}"
    if fixture.title is not None:
        assert {d.title for d in docs} == {fixture.title}
    if fixture.skipped_records is not None:
        assert sum(result.skipped_records.values()) == fixture.skipped_records
    assert all(d.text == d.text.strip() and d.source == f"/suite/{fixture.name}" for d in docs)


def test_suite_covers_every_format_and_case(tmp_path: Path) -> None:
    fixtures = build(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert len(fixtures) == len(manifest) >= 40
    assert {f.fmt for f in fixtures} == {"pdf", "docx", "pptx", "xlsx", "html", "md", "txt", "json", "epub"}
    assert all((tmp_path / entry["name"]).is_file() for entry in manifest)
    cases = {f.source_case for f in fixtures if f.source_case}
    assert cases == {"docx_content_control", "docx_footnotes", "docx_text_box", "html_docs_page_code_and_div_lines",
                     "json_non_string_text", "markdown_base64_image", "nul_in_extracted_text",
                     "pdf_empty_user_password", "pptx_grouped_shapes", "pptx_speaker_notes", "same_file_two_folders",
                     "short_cp1252_text", "soft_hyphen_zero_width"}
    encodings = {f.name for f in fixtures if f.fmt == "txt"}
    assert {"txt/cp1252_short.txt", "txt/latin1_short.txt", "txt/shift_jis.txt", "txt/gb18030.txt",
            "txt/utf16le_bom.txt", "txt/utf8_bom.txt"} <= encodings


def test_suite_bytes_are_deterministic() -> None:
    again = {f.name: f.data for f in all_fixtures()}
    random_keys = {"pdf/aes128.pdf", "pdf/aes256.pdf", "pdf/rc4.pdf", "pdf/user_password.pdf"}  # pypdf draws keys
    assert all(again[f.name] == f.data for f in FIXTURES if f.name not in random_keys)
