"""The metadata filter model, its Milvus expression and the CLI options that build it."""

from __future__ import annotations

import click
import pytest
from pydantic import ValidationError

from deepsearcher.cli.filter_options import build_filter
from deepsearcher.filters import SearchFilter, path_matches
from deepsearcher.types import Chunk
from deepsearcher.vectordb.filters import compile_filter, like_pattern, quote_literal


def chunk(source: str, **metadata: object) -> Chunk:
    return Chunk(id="x", text="t", source=source, title="", page=None, chunk_index=0, doc_hash="h", metadata=metadata)


@pytest.mark.parametrize(("glob", "source", "matches"), [
    ("contracts/2025/**", "/h/contracts/2025/q1/a.pdf", True),
    ("contracts/2025/**", "/h/old-contracts/2025/a.pdf", False),  # a relative glob starts at a folder boundary
    ("contracts/*.pdf", "/h/contracts/a.pdf", True),
    ("contracts/*.pdf", "/h/contracts/2025/a.pdf", False),
    ("**/a.pdf", "/a.pdf", True),
    ("/h/**", "/h/x/y", True),
    ("/h/*", "/h/x/y", False),
    ("report-202?.md", "/d/report-2024.md", True),
    ("[ab].md", "/d/c.md", False),
    ("*.pdf", "/h/contracts/2025/a.pdf", True),  # the help's example: a relative glob matches the path's end
    ("*.pdf", "/h/contracts/a.pdf.txt", False),
])
def test_path_globs(glob: str, source: str, matches: bool) -> None:
    assert path_matches(glob, source) is matches


def test_compiled_expression_quotes_outside_text_and_escapes_like_wildcards() -> None:
    assert quote_literal('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert like_pattern("x_%/*.md") == "%x\\_\\%/%.md"
    assert like_pattern("/abs/**") == "/abs/%"
    where = SearchFilter(paths=("contracts/**",), types=("pdf",), since="2025-01-01", until="2025-01-31",
                         meta={"status": "final", "rev": "2", "ok": "true"})
    assert compile_filter(where) == (
        'source like "%contracts/%" and (metadata["format"] == "pdf" or source like "%.pdf") and '
        'metadata["date"] >= 1735689600.0 and metadata["date"] <= 1738367999.999 and '
        'metadata["front_matter"]["status"] == "final" and '
        '(metadata["front_matter"]["rev"] == "2" or metadata["front_matter"]["rev"] == 2) and '
        '(metadata["front_matter"]["ok"] == "true" or metadata["front_matter"]["ok"] == true)')
    assert compile_filter(None) == compile_filter(SearchFilter()) == ""


def test_admits_is_the_same_rule_in_python() -> None:
    where = SearchFilter(types=("md",), since="2025-01-01", meta={"draft": "false"})
    good = chunk("/d/a.md", format="markdown", date=1_740_000_000, front_matter={"draft": False})
    assert where.admits(good)
    assert not where.admits(chunk("/d/a.md", format="markdown", front_matter={"draft": False}))  # no date
    assert not where.admits(chunk("/d/a.txt", format="text", date=1_740_000_000, front_matter={"draft": False}))
    assert SearchFilter(types=("pdf",)).admits(chunk("/d/x.PDF"))  # by extension where no format is stored


def test_bad_filters_name_the_cause() -> None:
    with pytest.raises(ValidationError, match="unknown file type 'exe'"):
        SearchFilter(types=("exe",))
    with pytest.raises(ValidationError, match="not a plain name"):
        SearchFilter(meta={'a"]': "x"})
    with pytest.raises(ValidationError, match="extra"):
        SearchFilter.model_validate({"path": ["x"]})


def test_cli_options_build_the_filter_or_say_what_is_wrong() -> None:
    where = build_filter(("contracts/2025/**",), ("PDF",), "2025-01-01", None, ("status=final",))
    assert where == SearchFilter(paths=("contracts/2025/**",), types=("pdf",), since="2025-01-01",
                                 meta={"status": "final"})
    assert build_filter((), (), None, None, ()) is None
    with pytest.raises(click.BadParameter, match="YYYY-MM-DD") as bad_date:
        build_filter((), (), "last week", None, ())
    assert bad_date.value.param_hint == "--since"
    with pytest.raises(click.BadParameter, match="not key=value") as bad_meta:
        build_filter((), (), None, None, ("status",))
    assert bad_meta.value.param_hint == "--meta"
    with pytest.raises(click.BadParameter, match="unknown file type") as bad_type:
        build_filter((), ("exe",), None, None, ())
    assert bad_type.value.param_hint == "--type"


def test_a_folder_glob_is_taken_as_a_shell_completes_it() -> None:
    """``./docs/**`` and ``docs/`` (what tab completion gives) mean the folder, not nothing."""
    assert SearchFilter(paths=("./docs/**", "docs/", "././a/*.md", "./")).paths == ("docs/**", "docs/**", "a/*.md",
                                                                                   "**")
    assert SearchFilter(paths=("docs/",)).admits(chunk("/h/docs/x/y.md"))
    assert not SearchFilter(paths=("docs/",)).admits(chunk("/h/olddocs/y.md"))


def test_a_date_range_that_cannot_match_is_an_error() -> None:
    with pytest.raises(click.BadParameter, match="--since 2025-06-01 is after --until 2025-01-01") as swapped:
        build_filter((), (), "2025-06-01", "2025-01-01", ())
    assert swapped.value.param_hint == "--since/--until"
    assert build_filter((), (), "2025-01-01", "2025-01-01", ()) is not None  # one day is a range
    with pytest.raises(click.BadParameter) as bad_date:
        build_filter((), (), None, "2025/01/31", ())
    assert bad_date.value.message == "'2025/01/31' is not a day: give YYYY-MM-DD, e.g. 2025-01-01"
    assert bad_date.value.param_hint == "--until"
