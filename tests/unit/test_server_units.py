"""Server pieces without a server: the access policy (hosts, tokens, paths, URLs) and report rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server needs the extra `server` (pip install -e '.[server]')")

from deepsearcher.errors import ConfigError  # noqa: E402
from deepsearcher.agents.citations import report_markdown  # noqa: E402
from deepsearcher.server.markdown import answer_html  # noqa: E402
from deepsearcher.types import Chunk, Report, Source, Usage  # noqa: E402
from deepsearcher.server.security import AccessPolicy, Refused, is_loopback_host  # noqa: E402
from deepsearcher.settings import load_settings  # noqa: E402


@pytest.mark.parametrize("host, expected", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.org", False), ("", False),
])
def test_loopback_hosts(host: str, expected: bool) -> None:
    assert is_loopback_host(host) is expected


def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str = "127.0.0.1", token: str | None = None,
           **server: object) -> AccessPolicy:
    if token is None:
        monkeypatch.delenv("DS_UNIT_TOKEN", raising=False)
    else:
        monkeypatch.setenv("DS_UNIT_TOKEN", token)
    return AccessPolicy.from_settings(load_settings(None, {"llm": None, "server": {
        "host": host, "token_env": "DS_UNIT_TOKEN", **server}}))


def test_public_host_needs_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as err:
        policy(tmp_path, monkeypatch, host="0.0.0.0")
    assert "DS_UNIT_TOKEN" in str(err.value) and "127.0.0.1" in str(err.value.hint)
    strict = policy(tmp_path, monkeypatch, host="0.0.0.0", token="abc")
    assert not strict.loopback and not strict.allow_private_urls
    strict.check_token("Bearer abc")
    strict.check_token("bearer  abc ")
    for header in (None, "", "Bearer", "Basic abc", "Bearer abd", "abc"):
        with pytest.raises(Refused) as refused:
            strict.check_token(header)
        assert refused.value.status == 401


def test_loopback_without_token_lets_everyone_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_policy = policy(tmp_path, monkeypatch)
    open_policy.check_token(None)
    assert open_policy.loopback and open_policy.allow_private_urls
    # a token that is set is required on loopback too
    with pytest.raises(Refused):
        policy(tmp_path, monkeypatch, token="abc").check_token(None)


def test_paths_resolve_symlinks_and_dotdot_before_the_root_check(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "a.md").write_text("a")
    (outside / "b.md").write_text("b")
    (root / "link").symlink_to(outside, target_is_directory=True)
    p = policy(tmp_path, monkeypatch, allowed_roots=[str(root)])
    assert p.check_path(str(root / "sub" / "a.md")) == (root / "sub" / "a.md").resolve()
    assert p.check_path(str(root)) == root.resolve()
    assert p.check_path(str(root / "sub" / "*.md")) == root.resolve() / "sub" / "*.md"
    for bad in (outside / "b.md", root / ".." / "outside" / "b.md", root / "link" / "b.md", root / "link",
                root / "link" / "*.md", Path("/etc/passwd"), tmp_path):
        with pytest.raises(Refused) as refused:
            p.check_path(str(bad))
        assert refused.value.status == 403, bad
    with pytest.raises(Refused) as relative:
        p.check_path("sub/a.md")
    assert relative.value.status == 422
    assert not p.inside_roots(root / "link" / "b.md")


def test_no_roots_means_no_server_side_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(Refused) as refused:
        policy(tmp_path, monkeypatch).check_path(str(tmp_path))
    assert refused.value.status == 403 and "allowed_roots" in str(refused.value.hint)


def test_urls_to_non_public_addresses_are_refused_off_loopback(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    strict = policy(tmp_path, monkeypatch, host="0.0.0.0", token="t")
    for url in ("http://127.0.0.1:8080/", "http://localhost/", "http://169.254.169.254/latest/meta-data/",
                "http://10.0.0.8/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "https://192.168.0.1/x"):
        with pytest.raises(Refused) as refused:
            strict.check_url(url)
        assert refused.value.status == 403, url
    assert strict.check_url("https://93.184.215.14/page") == "https://93.184.215.14/page"
    with pytest.raises(Refused):
        strict.check_url("http:///nohost")
    allowed = policy(tmp_path, monkeypatch, host="0.0.0.0", token="t", allow_private_urls=True)
    assert allowed.check_url("http://127.0.0.1:8080/")
    assert policy(tmp_path, monkeypatch).check_url("http://localhost:8080/")  # loopback server: local URLs are fine


REPORT = {
    "question": "What is Milvus?",
    "answer": "Milvus is a **vector database** [1][2]. See `code [1]` and [3].\n\n<script>alert(1)</script>",
    "sources": [
        {"number": 1, "collection": "docs", "chunk": {"source": "/data/milvus.pdf", "title": "Milvus", "page": 3,
                                                       "text": "…"}},
        {"number": 2, "collection": "web", "chunk": {"source": "https://milvus.io/docs", "title": "https://milvus.io/docs",
                                                      "page": None, "text": "…"}},
    ],
}


def test_answer_html_links_known_citations_and_escapes_raw_html() -> None:
    html = answer_html(REPORT["answer"], {1, 2})
    assert '<a class="cite" href="#source-1" data-source="1">1</a>' in html
    assert 'data-source="2"' in html
    assert "[3]" in html and 'data-source="3"' not in html  # unknown numbers stay plain text
    assert "<code>code [1]</code>" in html  # code is left alone
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<strong>vector database</strong>" in html


def _report(data: dict) -> Report:
    sources = [Source(s["number"], Chunk(id=str(s["number"]), text=s["chunk"]["text"], source=s["chunk"]["source"],
                                         title=s["chunk"]["title"], page=s["chunk"]["page"], chunk_index=0,
                                         doc_hash="h"), s["collection"]) for s in data["sources"]]
    return Report(question=data["question"], answer=data["answer"], sources=sources, sub_queries=[], iterations=1,
                  usage=Usage(), agent="deep_search")


def test_report_markdown_has_title_answer_and_sources() -> None:
    text = report_markdown(_report(REPORT), title=True)
    assert text.startswith("# What is Milvus?\n\nMilvus is a **vector database** [1][2].")
    # one Markdown for the page's download and `query --output` (issue #10), each file listed once (issue #11)
    assert "## Sources\n\n- /data/milvus.pdf — Milvus: [1] p. 3\n- https://milvus.io/docs: [2]\n" in text
