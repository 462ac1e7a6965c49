"""Server pieces without a server: the access policy (hosts, tokens, paths, URLs) and report rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server needs the extra `server` (pip install -e '.[server]')")

from deepsearcher.errors import ConfigError  # noqa: E402
from deepsearcher.agents.report_markdown import report_markdown  # noqa: E402
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
    for bad in (outside / "b.md", root / "link" / "b.md", root / "link", root / "link" / "nothing-there.md",
                root / "link" / "*.md", Path("/etc/passwd"), Path("/etc/no-such-file"), tmp_path):
        with pytest.raises(Refused) as refused:
            p.check_path(str(bad))
        assert refused.value.status == 403, bad
    for dotdot in (root / ".." / "outside" / "b.md", root / "sub" / ".." / "sub" / "a.md", root / "s*" / ".." / "x"):
        with pytest.raises(Refused) as refused:
            p.check_path(str(dotdot))
        assert refused.value.status == 422 and "'..'" in refused.value.message, dotdot
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


# --- request guard, work queues, redaction ------------------------------------------------------------------------
def guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object):
    from deepsearcher.server.guard import RequestGuard

    async def app(scope: object, receive: object, send: object) -> None:  # never reached by a refused request
        raise AssertionError("the app was called")

    return RequestGuard(app, policy=policy(tmp_path, monkeypatch, **kwargs), max_body_bytes=1000)


@pytest.mark.parametrize("method, path, headers, status", [
    ("POST", "/api/load", {"host": "127.0.0.1:8000", "content-type": "text/plain"}, 401),  # the token comes first
    ("POST", "/api/load", {"host": "evil.example", "authorization": "Bearer t0k3n"}, 403),  # DNS rebinding
    ("POST", "/api/load", {"authorization": "Bearer t0k3n"}, 415),  # no Content-Type: a "simple" cross-site POST
    ("POST", "/api/load", {"authorization": "Bearer t0k3n", "content-type": "multipart/form-data; b=x"}, 415),
    ("POST", "/api/query", {"authorization": "Bearer t0k3n", "content-type": "application/json",
                            "sec-fetch-site": "cross-site"}, 403),
    ("POST", "/api/load", {"authorization": "Bearer t0k3n", "content-type": "application/json",
                           "content-length": "1001"}, 413),
    ("POST", "/api/load", {"authorization": "Bearer t0k3n", "content-type": "application/json",
                           "content-length": "-5"}, 400),
    ("GET", "/api/collections", {}, 401),
])
def test_guard_refuses_by_headers_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str, path: str,
                                        headers: dict[str, str], status: int) -> None:
    with pytest.raises(Refused) as refused:
        guard(tmp_path, monkeypatch, token="t0k3n").check(method, path, headers)
    assert refused.value.status == status


@pytest.mark.parametrize("method, path, headers", [
    ("GET", "/api/health", {}),
    ("GET", "/", {}),
    ("GET", "/docs", {}),
    ("POST", "/api/retrieve", {"authorization": "Bearer t0k3n", "content-type": "application/json; charset=utf-8",
                               "sec-fetch-site": "same-origin", "content-length": "1000"}),
])
def test_guard_lets_through_what_it_should(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str, path: str,
                                           headers: dict[str, str]) -> None:
    guard(tmp_path, monkeypatch, token="t0k3n").check(method, path, headers)


def test_work_queue_admits_workers_plus_waiting_then_refuses() -> None:
    import threading

    from deepsearcher.server.workers import Busy, WorkQueue

    queue = WorkQueue(1, 1, "loads")
    gate = threading.Event()
    running = queue.submit(gate.wait, 10)
    waiting = queue.submit(gate.wait, 10)
    with pytest.raises(Busy, match="too many loads in progress"):
        queue.submit(gate.wait, 10)
    # done-callbacks run in the order added, just after result() returns: these run after the queue's release
    released = [threading.Event(), threading.Event()]
    for job, event in zip((running, waiting), released):
        job.add_done_callback(lambda _, event=event: event.set())
    gate.set()
    assert all(event.wait(60) for event in released)  # the bound only ends a failure
    assert queue.admitted == 0 and queue.submit(lambda: 7).result(5) == 7
    queue.shutdown()


def test_a_watch_load_is_admitted_when_api_loads_fill_the_queue_and_runs_in_turn() -> None:
    import threading

    from deepsearcher.server.workers import Busy, WorkQueue

    queue = WorkQueue(1, 0, "loads")
    gate, order = threading.Event(), []
    running = queue.submit(lambda: (gate.wait(60), order.append("api")))
    with pytest.raises(Busy):
        queue.submit(order.append, "refused")
    own = queue.submit_own(order.append, "watch")  # waits for its turn on the one worker
    gate.set()
    own.result(60)  # the bound only ends a failure
    assert running.done() and order == ["api", "watch"]
    queue.shutdown()


def test_redact_hides_every_configured_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DS_UNIT_TOKEN", raising=False)
    settings = load_settings(None, {
        "llm": {"provider": "openai_compatible", "base_url": "http://10.0.0.5:8080/v1/"},
        "embedding": {"provider": "openai_compatible", "base_url": "https://emb.internal.example/v1"},
        "vector_db": {"uri": "http://milvus.internal:19530"}, "server": {"token_env": "DS_UNIT_TOKEN"}})
    p = AccessPolicy.from_settings(settings)
    text = ("cannot reach the LLM server at http://10.0.0.5:8080/v1: refused (10.0.0.5:8080); embeddings at "
            "https://emb.internal.example/v1/embeddings failed; store http://milvus.internal:19530 down")
    assert p.redact(text) == ("cannot reach the LLM server at <llm.base_url>: refused (<llm.base_url>); embeddings "
                              "at <embedding.base_url>/embeddings failed; store <vector_db.uri> down")


def test_redact_hides_a_lite_file_by_its_resolved_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors name the store by the path it opened ("no collections yet in /srv/x/milvus.db"), not as written."""
    monkeypatch.delenv("DS_UNIT_TOKEN", raising=False)
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm: null\nvector_db: {uri: ./store/milvus.db}\nserver: {token_env: DS_UNIT_TOKEN}\n")
    p = AccessPolicy.from_settings(load_settings(cfg))
    assert p.redact(f"there are no collections yet in {tmp_path / 'store' / 'milvus.db'}") == (
        "there are no collections yet in <vector_db.uri>")


def test_stream_error_events_are_redacted_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.errors import ProviderError
    from deepsearcher.server.streaming import error_payload

    monkeypatch.delenv("DS_UNIT_TOKEN", raising=False)
    p = AccessPolicy.from_settings(load_settings(None, {
        "llm": {"provider": "openai_compatible", "base_url": "http://10.0.0.5:8080/v1"},
        "server": {"token_env": "DS_UNIT_TOKEN"}}))
    exc = ProviderError("the LLM server at http://10.0.0.5:8080/v1 timed out after 120 s",
                        hint="is http://10.0.0.5:8080/v1 up?")
    assert error_payload(exc, p.redact) == {"detail": "the LLM server at <llm.base_url> timed out after 120 s",
                                            "hint": "is <llm.base_url> up?", "type": "ProviderError"}


def test_a_reserved_place_counts_from_arrival_and_is_freed_by_cancel_or_by_its_job() -> None:
    import threading

    from deepsearcher.server.workers import Busy, WorkQueue

    queue = WorkQueue(1, 1, "queries")
    first, second = queue.reserve(), queue.reserve()  # two requests in their checks: nothing submitted yet
    with pytest.raises(Busy, match="too many queries in progress"):
        queue.reserve()
    second.cancel()  # its checks failed
    second.cancel()  # twice is harmless
    assert queue.admitted == 1
    done = threading.Event()
    job = first.submit(lambda: 5)
    job.add_done_callback(lambda _: done.set())
    assert job.result(60) == 5 and done.wait(60)  # the bounds only end a failure
    first.cancel()  # after its job: nothing more to give back
    with pytest.raises(RuntimeError, match="one job"):
        first.submit(lambda: 6)
    assert queue.admitted == 0
    queue.shutdown()


def test_the_page_gets_the_reports_notes_as_safe_html() -> None:
    from dataclasses import replace

    from deepsearcher.server.app import finish_report
    from deepsearcher.types import UnsupportedCitation

    report = replace(_report(REPORT), unsupported_citations=[UnsupportedCitation(
        sentence="Milvus was built on the Moon <script>alert(1)</script> [2].", cited=[2], share=0.2)])
    data = finish_report(report)
    html = data["notes_html"]
    assert "<strong>Citations.</strong> 1 sentence of the answer cites sources" in html
    assert "Milvus was built on the Moon" in html and "<script>" not in html  # model text stays text
    assert 'data-source' not in html  # "(2)" in the quote: no citation link
    assert "**Citations.**" in data["markdown"]  # the same note the Markdown has
    assert finish_report(_report(REPORT))["notes_html"] == ""


def test_model_text_in_the_notes_makes_no_link_or_image() -> None:
    from dataclasses import replace

    from deepsearcher.server.app import finish_report
    from deepsearcher.types import Evaluation, QuestionStatus, WebSearchOutcome

    evil = "see [the official fix](https://evil.example/fix) ![t](https://evil.example/t.png)"
    report = replace(_report(REPORT), questions=[QuestionStatus(question=evil, status="nothing_found", detail=evil)],
                     evaluations=[Evaluation(step=1, question=evil, passed=False, checks={}, critique=evil)],
                     web_searches=[WebSearchOutcome(query=evil, provider="searxng", outcome="failed", detail=evil)])
    data = finish_report(report)
    assert "see \\[the official fix\\]" in data["markdown"]  # literal text in report.md
    assert "<a " not in data["notes_html"] and "<img" not in data["notes_html"]
    assert "the official fix" in data["notes_html"]
