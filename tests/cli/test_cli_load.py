"""CLI tests for load / collections / config check / retrieve, through click's CliRunner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from tests.conftest import DATA

pytestmark = pytest.mark.integration


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text("llm: null\nvector_db:\n  uri: ./store/milvus.db\n")
    return path


def invoke(runner: CliRunner, cfg: Path, *args: str):
    return runner.invoke(main, ["--config", str(cfg), *args], catch_exceptions=False)


def test_load_list_retrieve_drop(runner: CliRunner, cfg: Path, tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DATA / "milvus_docs" / "limitations.md", docs)
    shutil.copy(DATA / "pdf" / "WhatisMilvus.pdf", docs)
    (docs / "empty.md").write_text("  \n")

    result = invoke(runner, cfg, "load", str(docs), "-c", "milvus_docs", "-d", "Milvus documentation")
    assert result.exit_code == 0, result.output
    assert "2 loaded, 0 unchanged, 1 skipped" in result.output
    assert (tmp_path / "store" / "milvus.db").is_dir()  # relative to the config file's folder

    again = invoke(runner, cfg, "load", str(docs), "-c", "milvus_docs", "--json")
    summary = json.loads(again.stdout)
    assert summary["chunks_written"] == 0
    assert sorted(f["status"] for f in summary["files"]) == ["skipped", "unchanged", "unchanged"]

    listed = json.loads(invoke(runner, cfg, "collections", "--json").stdout)
    assert listed[0]["name"] == "milvus_docs" and listed[0]["description"] == "Milvus documentation"
    assert listed[0]["embedding_model"] == "all-MiniLM-L6-v2" and listed[0]["chunk_count"] > 0

    hits = json.loads(invoke(runner, cfg, "retrieve", "maximum length of a collection name", "-k", "2",
                             "--json").stdout)
    assert len(hits) == 2 and hits[0]["source"].endswith("limitations.md")

    typo = runner.invoke(main, ["--config", str(cfg), "collections", "drop", "milvus_doc", "--yes"])
    assert typo.exit_code == 1 and "no collection named 'milvus_doc'" in typo.output
    assert "did you mean milvus_docs? collections here: milvus_docs" in typo.output

    dropped = invoke(runner, cfg, "collections", "drop", "milvus_docs", "--yes")
    assert dropped.exit_code == 0
    assert "No collections yet" in invoke(runner, cfg, "collections").output
    again = runner.invoke(main, ["--config", str(cfg), "collections", "drop", "milvus_docs", "--yes"])
    assert again.exit_code == 1 and "this store has no collections yet" in again.output
    assert "deepsearcher load PATH -c NAME" in again.output


def test_missing_path_is_a_message_not_a_traceback(runner: CliRunner, cfg: Path, tmp_path: Path):
    result = invoke(runner, cfg, "load", str(tmp_path / "nope"))
    assert result.exit_code == 1
    assert "Error: not found:" in result.output and "Traceback" not in result.output


def test_invalid_collection_name_message(runner: CliRunner, cfg: Path):
    result = invoke(runner, cfg, "load", str(DATA / "milvus_docs" / "overview.md"), "-c", "9lives")
    assert result.exit_code == 1
    assert "letters, digits and underscores" in result.output


def test_bad_config_key_message(runner: CliRunner, tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("vector_db:\n  urii: x\n")
    result = runner.invoke(main, ["--config", str(bad), "collections"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "vector_db.urii: unknown key" in result.output and str(bad) in result.output


def test_config_check_masks_secrets(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SECRET_FOR_TEST", "sk-verysecretvalue123")
    path = tmp_path / "c.yaml"
    path.write_text("llm:\n  api_key_env: SECRET_FOR_TEST\n")
    result = runner.invoke(main, ["--config", str(path), "config", "check"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "sk-verysecretvalue123" not in result.output and "SECRET_FOR_TEST (set: sk-" in result.output


def test_help_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys; from click.testing import CliRunner; from deepsearcher.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_empty_retrieve_query_is_refused(runner: CliRunner, cfg: Path):
    result = invoke(runner, cfg, "retrieve", "  ")
    assert result.exit_code == 2 and "the query is empty" in result.output


def test_a_collection_loaded_without_d_describes_itself_and_can_be_described(runner: CliRunner, cfg: Path,
                                                                            tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DATA / "milvus_docs" / "limitations.md", docs)
    shutil.copy(DATA / "milvus_docs" / "consistency.md", docs)

    loaded = invoke(runner, cfg, "load", str(docs), "-c", "milvus_docs")
    assert loaded.exit_code == 0, loaded.output
    said = " ".join(loaded.stdout.split())
    assert "Description of milvus_docs (from file names and titles; no LLM is configured): Files: consistency.md, " \
           "limitations.md. Titles: Consistency; Milvus Limits." in said  # front matter titles
    assert "deepsearcher collections describe milvus_docs --set" in said
    listed = invoke(runner, cfg, "collections")
    assert "(generated)" in listed.stdout
    assert json.loads(invoke(runner, cfg, "collections", "--json").stdout)[0]["description_generated"] is True

    changed = invoke(runner, cfg, "collections", "describe", "milvus_docs", "--set", "Milvus limits and consistency")
    assert changed.exit_code == 0
    assert "Description of milvus_docs (set): Milvus limits and consistency" in changed.stdout
    shown = json.loads(invoke(runner, cfg, "collections", "describe", "milvus_docs", "--json").stdout)
    assert shown == {"collection": "milvus_docs", "text": "Milvus limits and consistency", "generated": False}
    kept = invoke(runner, cfg, "collections", "describe", "milvus_docs", "--refresh")  # no LLM: yours is kept
    assert kept.exit_code == 1 and "kept the description you set for 'milvus_docs'" in kept.stderr
    assert "no LLM is configured" in kept.stderr and "Traceback" not in kept.output
    shown = json.loads(invoke(runner, cfg, "collections", "describe", "milvus_docs", "--json").stdout)
    assert shown == {"collection": "milvus_docs", "text": "Milvus limits and consistency", "generated": False}

    both = runner.invoke(main, ["--config", str(cfg), "collections", "describe", "milvus_docs", "--refresh", "--set",
                                "x"])
    assert both.exit_code == 2 and "not both" in both.output
    missing = runner.invoke(main, ["--config", str(cfg), "collections", "describe", "nothing_here", "--set", "x"])
    assert missing.exit_code == 1 and "no collection named 'nothing_here'" in missing.output


def test_retrieve_filter_options(runner: CliRunner, cfg: Path, tmp_path: Path):
    docs = tmp_path / "docs"
    (docs / "2025").mkdir(parents=True)
    shutil.copy(DATA / "milvus_docs" / "limitations.md", docs / "2025")
    shutil.copy(DATA / "pdf" / "WhatisMilvus.pdf", docs)
    assert invoke(runner, cfg, "load", str(docs), "-c", "mixed").exit_code == 0

    def sources(*options: str) -> set[str]:
        result = invoke(runner, cfg, "retrieve", "What is Milvus?", "-k", "40", "--json", *options)
        assert result.exit_code == 0, result.output
        return {Path(hit["source"]).name for hit in json.loads(result.stdout)}

    assert sources() == {"limitations.md", "WhatisMilvus.pdf"}
    assert sources("--type", "pdf") == {"WhatisMilvus.pdf"}
    assert sources("--where-path", "2025/**") == {"limitations.md"}
    assert sources("--where-path", "2025/**", "--type", "pdf") == set()
    assert sources("--since", "2000-01-01") == {"limitations.md", "WhatisMilvus.pdf"}  # dated by modified time
    # as a shell completes a folder: ./ in front, / at the end (the store's filter and the exact check agree)
    assert sources("--where-path", "./2025/**") == sources("--where-path", "2025/") == {"limitations.md"}
    none = invoke(runner, cfg, "retrieve", "What is Milvus?", "--where-path", "2026/**", "--meta", "status=final")
    assert none.exit_code == 0 and " ".join(none.stdout.split()) == (
        "No results match the filter (path 2026/**, status=final); without it the search may find some.")
    bad = runner.invoke(main, ["--config", str(cfg), "retrieve", "x", "--since", "yesterday"])
    assert bad.exit_code == 2 and "Invalid value for --since" in bad.output and "YYYY-MM-DD" in bad.output
    swapped = runner.invoke(main, ["--config", str(cfg), "retrieve", "x", "--since", "2025-06-01", "--until",
                                   "2025-01-01"])
    assert swapped.exit_code == 2 and "--since 2025-06-01 is after --until 2025-01-01" in swapped.output


@pytest.mark.parametrize("given, cause", [
    ("missing", "missing does not exist"),
    ("a.md", "a.md is a file, not a folder"),
    ("docs/*.md", "docs/*.md is a glob pattern, not a folder"),
    ("https://example.com/", "https://example.com/ is a URL"),
])
def test_load_watch_names_why_an_input_is_not_a_folder(runner: CliRunner, cfg: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, given: str, cause: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.md").write_text("text\n")
    result = invoke(runner, cfg, "load", given, "--watch")
    err = " ".join(result.stderr.split())
    assert result.exit_code == 1 and f"--watch keeps one folder in sync; {cause}" in err
    assert "give one existing folder: deepsearcher load DIR --watch" in err and "Traceback" not in result.output
    assert not (tmp_path / "store").exists()  # nothing opened, nothing written


def test_load_watch_of_two_folders_says_one_per_command(runner: CliRunner, cfg: Path, tmp_path: Path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    result = invoke(runner, cfg, "load", str(tmp_path / "x"), str(tmp_path / "y"), "--watch")
    err = " ".join(result.stderr.split())
    assert result.exit_code == 1 and "got 2 inputs" in err and "watch one folder per command" in err


def test_retrieve_from_an_empty_store_names_the_store(runner: CliRunner, cfg: Path, tmp_path: Path):
    """A relative vector_db.uri resolves against the config file's folder: the error names the store it opened."""
    result = invoke(runner, cfg, "retrieve", "anything")
    err = " ".join(result.stderr.split())
    assert result.exit_code == 1
    assert f"there are no collections yet in {tmp_path / 'store' / 'milvus.db'}" in err
    assert "relative to the config file's folder" in err and "Traceback" not in result.output


@pytest.mark.parametrize("args, hint, bogus", [
    (["retrieve", "x", "--config", "c.yaml"], "--config is a global option: it goes before the command, e.g. "
                                              "deepsearcher --config FILE retrieve …", ["retrieve", "x", "--bogus"]),
    (["load", "docs", "--debug"], "--debug is a global option: it goes before the command, e.g. deepsearcher "
                                  "--debug load …", ["retrieve", "x", "--bogus"]),
    # found by a new user: `deepsearcher --json query …` was told "Did you mean '--version'?"
    (["--json", "query", "x"], "--json is an option of the command: it goes after it, e.g. deepsearcher query … "
                               "--json", ["--bogus", "query", "x"]),
    (["-k", "3", "retrieve", "x"], "-k is an option of the command: it goes after it, e.g. deepsearcher retrieve "
                                   "… -k", ["--bogus", "query", "x"]),
])
def test_an_option_on_the_wrong_side_of_the_command_says_where_it_goes(runner: CliRunner, args: list[str],
                                                                       hint: str, bogus: list[str]):
    result = runner.invoke(main, args)
    assert result.exit_code == 2 and f"Error: {hint}" in result.output
    unknown = runner.invoke(main, bogus)  # an option nobody has keeps click's own message
    assert unknown.exit_code == 2 and "No such option '--bogus'" in unknown.output
    not_its = runner.invoke(main, ["--json", "serve"])  # serve has no --json: never told to put it after serve
    assert not_its.exit_code == 2 and "No such option '--json'" in not_its.output


@pytest.mark.parametrize("watch, allowed, message", [
    ("gone", "docs", "server.watch: {tmp}/gone is not a folder"),
    ("file.md", ".", "server.watch: {tmp}/file.md is not a folder"),
    ("other", "docs", "server.watch: {tmp}/other is outside server.allowed_roots"),
])
def test_config_check_refuses_the_folders_serve_would_refuse_to_watch(runner: CliRunner, tmp_path: Path, watch: str,
                                                                     allowed: str, message: str) -> None:
    for folder in ("docs", "other"):
        (tmp_path / folder).mkdir()
    (tmp_path / "file.md").write_text("x")
    path = tmp_path / "config.yaml"
    path.write_text(f"llm: null\nserver:\n  allowed_roots: [{tmp_path / allowed}]\n"
                    f"  watch:\n    - {{path: {tmp_path / watch}, collection: notes}}\n")
    result = runner.invoke(main, ["--config", str(path), "config", "check"])
    assert result.exit_code == 1 and "OK" not in result.output
    assert message.format(tmp=tmp_path) in " ".join(result.output.split())
    good = tmp_path / "good.yaml"
    good.write_text(f"llm: null\nserver:\n  allowed_roots: [{tmp_path}]\n  watch:\n"
                    f"    - {{path: {tmp_path / 'docs'}, collection: notes}}\n")
    assert runner.invoke(main, ["--config", str(good), "config", "check"]).exit_code == 0
