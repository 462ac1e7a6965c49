"""Expanding files, folders and glob patterns: symlink loops, depth, odd names, '..', the server's root filter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepsearcher.errors import IngestError
from deepsearcher.ingest.loaders import load_path
from deepsearcher.ingest.sources import display_path, expand_paths, file_items
from deepsearcher.ingest.options import LoaderOptions

OPTIONS = LoaderOptions()


def names(paths: list[Path], root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in paths)


@pytest.fixture
def loops(tmp_path: Path) -> Path:
    """The glob_symlink_loop.sh folder: one file and two links to the folder itself, plus a nested one."""
    root = tmp_path / "loops"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("a")
    (root / "sub" / "b.md").write_text("b")
    (root / "s1").symlink_to(".")
    (root / "s2").symlink_to(".")
    (root / "sub" / "up").symlink_to("..")
    return root


@pytest.mark.parametrize("pattern", ["**/*.md", "**", "*/**/*.md", "s1/**/*.md", "**/b.md"])
def test_globstar_over_symlink_loops_finds_each_file_once_and_ends(loops: Path, pattern: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[str] = []
    scandir = os.scandir

    def counting_scandir(path: str = ".") -> object:
        scanned.append(os.path.realpath(path))
        return scandir(path)

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", counting_scandir)
        found = expand_paths([str(loops / pattern)], OPTIONS)
    assert len(scanned) == len(set(scanned)) <= 2  # it ends: each of the two real folders is read at most once
    real = sorted(os.path.realpath(p) for p in found.files)
    assert len(real) == len(set(real))
    assert {Path(p).name for p in real} <= {"a.md", "b.md"} and real
    if pattern in ("**/*.md", "**"):
        assert {Path(p).name for p in real} == {"a.md", "b.md"}


def test_folder_with_loops_loads_each_file_once(loops: Path) -> None:
    found = expand_paths([str(loops)], OPTIONS)
    assert names(found.files, loops) == ["a.md", "sub/b.md"]
    assert found.skipped == []


def test_a_folder_1200_levels_deep_is_walked_without_recursion(deep_tree) -> None:
    root = deep_tree("deep", 1200)
    found = expand_paths([str(root)], OPTIONS)
    assert sorted(p.name for p in found.files) == ["bottom.md", "top.md"]
    pattern = expand_paths([str(root / "**" / "bottom.md")], OPTIONS)
    assert [p.name for p in pattern.files] == ["bottom.md"]


def test_a_folder_deeper_than_the_path_limit_is_a_skip_with_its_reason(deep_tree) -> None:
    root = deep_tree("too_deep", 2100)  # "d/" * 2100 passes PATH_MAX (4096)
    found = expand_paths([str(root)], OPTIONS)
    assert [p.name for p in found.files] == ["top.md"]
    [skip] = found.skipped
    assert skip.status == "skipped" and skip.reason == "folder not readable: file name too long"


def test_an_existing_name_with_glob_characters_is_taken_literally(tmp_path: Path) -> None:
    odd = tmp_path / "notes[1].md"
    odd.write_text("x")
    (tmp_path / "notes1.md").write_text("y")
    assert expand_paths([str(odd)], OPTIONS).files == [odd]
    assert names(expand_paths([str(tmp_path / "notes[1].md"), str(tmp_path / "n*1.md")], OPTIONS).files,
                 tmp_path) == ["notes1.md", "notes[1].md"]


def test_dotdot_after_a_wildcard_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d1").mkdir()
    with pytest.raises(IngestError, match=r"'\.\.' after a wildcard is not supported"):
        expand_paths([str(tmp_path / "d*" / ".." / "x.md")], OPTIONS)


def test_files_the_filter_refuses_count_as_absent(tmp_path: Path) -> None:
    """The server's roots: an outside file (through a link) is neither listed nor told apart from a missing one."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (outside / "passwd").write_text("secret")
    (inside / "ok.md").write_text("ok")
    (inside / "link").symlink_to(outside, target_is_directory=True)

    def allowed(path: Path) -> bool:
        return Path(os.path.realpath(path)).is_relative_to(inside)

    messages = []
    for name in ("passwd", "no-such-file"):
        with pytest.raises(IngestError) as err:
            expand_paths([str(inside / "l*" / name)], OPTIONS, allowed)
        messages.append(str(err.value).replace(name, "NAME"))
    assert messages[0] == messages[1]  # the same answer whether the outside file exists or not
    found = expand_paths([str(inside / "*"), str(inside / "**")], OPTIONS, allowed)
    assert names(found.files, inside) == ["ok.md"]


def test_non_utf8_names_get_a_stable_printable_id(tmp_path: Path) -> None:
    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9.md")
    with open(raw, "wb") as fh:
        fh.write(b"text")
    [path] = expand_paths([str(tmp_path)], OPTIONS).files
    assert display_path(path).endswith("/caf\\xe9.md")
    display_path(path).encode("utf-8")  # storable


@pytest.mark.parametrize("name, title", [(b"caf\xe9 notes.txt", "caf\\xe9 notes"), (b"\xff\xfe.md", "\\xff\\xfe"),
                                         (b"r\xc3\xa9sum\xc3\xa9.txt", "r\u00e9sum\u00e9")])
def test_a_file_name_that_is_not_utf8_gives_a_title_written_like_its_id(tmp_path: Path, name: bytes,
                                                                        title: str) -> None:
    raw = os.path.join(os.fsencode(tmp_path), name)
    with open(raw, "wb") as fh:
        fh.write(b"The blue kettle has product code QX-7781.")
    [path] = expand_paths([str(tmp_path)], OPTIONS).files
    [document] = load_path(path, OPTIONS)
    assert document.title == title  # once shown as "caf\udce9 notes" (a lone surrogate, escaped by the terminal)
    document.title.encode("utf-8")  # storable


def test_an_unreadable_or_vanished_file_becomes_an_item_with_a_reason(tmp_path: Path) -> None:
    gone = tmp_path / "gone.md"
    gone.write_text("x")
    files = expand_paths([str(tmp_path)], OPTIONS).files
    gone.unlink()
    [item] = file_items(files, loader=None, split_signature="s")  # type: ignore[arg-type]
    assert item.error == "cannot read: no such file or directory (removed during the load?)"


def test_globstar_never_enters_a_folder_the_filter_refuses(tmp_path: Path) -> None:
    """A link from inside the roots to '/' must not make ``root/**`` walk the whole file system."""
    inside = tmp_path / "inside"
    (inside / "sub").mkdir(parents=True)
    (inside / "sub" / "ok.md").write_text("ok")
    (inside / "to_root").symlink_to("/", target_is_directory=True)
    asked: list[Path] = []

    def allowed(path: Path) -> bool:
        asked.append(path)
        return Path(os.path.realpath(path)).is_relative_to(inside)

    found = expand_paths([str(inside / "**")], OPTIONS, allowed)
    assert names(found.files, inside) == ["sub/ok.md"] and found.skipped == []
    assert not [p for p in asked if (inside / "to_root") in p.parents]  # nothing below the link was looked at


@pytest.mark.parametrize("url", ["ftp://example.com/x.pdf", "s3://bucket/key.md", "file:///etc/hosts"])
def test_a_url_of_another_scheme_is_said_so_not_not_found(url: str, tmp_path: Path) -> None:
    # found by a new user: "load ftp://example.com/x" said "not found: ftp://…", as if it were a missing path
    with pytest.raises(IngestError, match="only http:// and https:// URLs can be loaded") as error:
        expand_paths([url, str(tmp_path / "missing.md")], OPTIONS)
    assert url in str(error.value) and "not found: " in str(error.value)  # the missing path is still named
    assert "download the file" in (error.value.hint or "")


def test_a_broken_link_and_a_pipe_in_a_folder_are_listed_as_skipped(tmp_path: Path) -> None:
    # found by a new user: both were left out of the load summary without a word
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nsome text")
    (folder / "broken.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(folder / "pipe.md")
    os.mkfifo(folder / "ignored.bin")
    found = expand_paths([str(folder)], LoaderOptions(exclude=["*.bin"]))
    assert found.files == [folder / "a.md"]
    reasons = {Path(r.source).name: r.reason for r in found.skipped}
    assert reasons == {"broken.md": "broken link (its target does not exist)", "pipe.md": "not a regular file (a pipe)"}
