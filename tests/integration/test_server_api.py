"""The HTTP API against the real app: uvicorn on a free port, Milvus Lite in tmp, a scripted LLM, a hash embedder."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need the extra `server` (pip install -e '.[server]')")
pytest.importorskip("sse_starlette", reason="the server tests need the extra `server`")

import httpx  # noqa: E402

from deepsearcher.errors import ConfigError  # noqa: E402
from deepsearcher.settings import load_settings  # noqa: E402
from tests.integration.server_support import (  # noqa: E402
    DESCRIPTION, FAILURE_TIMEOUT_S, QUESTION, HashEmbedder, LiveServer, scripted_llm, sse_events,
    watch_query_streams, write_corpus,
)

pytestmark = pytest.mark.integration


class Live:
    """The running server and what the tests need to reach into."""

    def __init__(self, url: str, allowed: Path, outside: Path, gate: threading.Event, searcher: Any) -> None:
        self.url, self.allowed, self.outside, self.gate, self.searcher = url, allowed, outside, gate, searcher

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    root = tmp_path_factory.mktemp("server")
    allowed, outside = write_corpus(root)
    settings = load_settings(None, {
        "vector_db": {"uri": str(root / "milvus.db")},
        "llm": None,
        "query": {"max_iter": 1, "agent": "deep_search"},
        "server": {"allowed_roots": [str(allowed)], "max_concurrent_queries": 2},
    })
    gate, arrived = threading.Event(), threading.Event()
    searcher = DeepSearcher(settings, llm=scripted_llm(gate, arrived=arrived),
                            embedder=HashEmbedder(64, "test-hash-64"))
    with LiveServer(create_app(settings, searcher=searcher)) as server:
        live = Live(server.url, allowed, outside, gate, searcher)
        live.arrived = arrived  # set when a slow question is inside its model call, waiting for the gate
        with live.client() as client:
            reply = client.post("/api/load", json={"inputs": [str(allowed / "docs")], "collection": "docs",
                                                   "description": "Notes on Milvus and RAG"})
            assert reply.status_code == 200, reply.text
            live.load_summary = reply.json()
        yield live
        gate.set()
    searcher.close()


def stream_query(client: httpx.Client, body: dict[str, Any]) -> list[dict[str, Any]]:
    with client.stream("POST", "/api/query", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(sse_events(response.iter_lines()))


# --- load --------------------------------------------------------------------------------------------------------------
# first in the module: it needs the module's server with no run of an earlier test still queued
def test_a_stream_false_query_whose_client_leaves_stops_its_run(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #21 finding 4: a ``stream: false`` query is cancelled like a stream when its client disconnects (the
    run's next event ends it), so a caller cannot queue long runs and walk away."""
    import socket

    from deepsearcher.server import streaming

    seen, finished = threading.Event(), threading.Event()
    watch, query = streaming._disconnected, live.searcher.query

    async def watched(receive: Any) -> None:
        await watch(receive)
        seen.set()

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return query(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(streaming, "_disconnected", watched)
    monkeypatch.setattr(live.searcher, "query", run)
    question = "Explain slowly what the detached question was."
    body = json.dumps({"question": question, "stream": False}).encode()
    host, port = live.url.removeprefix("http://").split(":")
    live.gate.clear()
    live.arrived.clear()
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        # leave only once the run is inside its first model call: a client gone before the server read the body is
        # a different case (the request never starts), and closing at once made this test race the server
        assert live.arrived.wait(FAILURE_TIMEOUT_S), "the query never reached the model"
    assert seen.wait(FAILURE_TIMEOUT_S), "the server never saw the client leave"
    live.gate.set()  # the run gets its decomposition, emits its next event and stops there
    assert finished.wait(FAILURE_TIMEOUT_S)
    asked = [p for p in live.searcher.llm.prompts if question in p]
    assert len(asked) == 1 and asked[0].startswith("Break the question"), [a[:40] for a in asked]


def test_load_reports_each_file_and_treats_a_symlink_out_of_the_roots_as_absent(live: Live) -> None:
    files = {Path(f["source"]).name: f for f in live.load_summary["files"]}
    assert files["milvus.md"]["status"] == "loaded" and files["milvus.md"]["chunks"] >= 1
    assert files["rag.md"]["status"] == "loaded"
    assert set(files) == {"milvus.md", "rag.md"}  # escape.txt -> outside/secret.txt: not read, not named
    assert "outside" not in str(live.load_summary)
    assert live.load_summary["collection"] == "docs"
    with live.client() as client:
        collections = client.get("/api/collections").json()
        hits = client.post("/api/retrieve", json={"query": "launch code secret", "top_k": 10}).json()
    assert [c["name"] for c in collections] == ["docs"]
    assert collections[0]["description"] == "Notes on Milvus and RAG"
    assert all("SECRET" not in h["chunk"]["text"] for h in hits)


@pytest.mark.parametrize("path", ["outside/secret.txt", "outside", "outside/*.txt", "/etc/passwd"])
def test_load_refuses_paths_outside_the_allowed_roots(live: Live, path: str) -> None:
    target = path if path.startswith("/") else str(live.allowed.parent / path)
    with live.client() as client:
        reply = client.post("/api/load", json={"inputs": [target], "collection": "leak"})
        names = [c["name"] for c in client.get("/api/collections").json()]
    assert reply.status_code == 403, reply.text
    body = reply.json()
    assert "outside the folders this server may read" in body["detail"]
    assert str(live.allowed) in body["hint"]
    assert "leak" not in names


def test_load_refuses_relative_and_missing_paths(live: Live) -> None:
    with live.client() as client:
        relative = client.post("/api/load", json={"inputs": ["docs/milvus.md"]})
        missing = client.post("/api/load", json={"inputs": [str(live.allowed / "nope.md")]})
    assert relative.status_code == 422 and "not an absolute path" in relative.json()["detail"]
    assert missing.status_code == 400 and "nope.md" in missing.json()["detail"]


def test_load_fetches_urls_when_the_server_is_on_loopback(live: Live, tmp_path: Path) -> None:
    import http.server

    (tmp_path / "index.html").write_text("<html><head><title>Vector search notes</title></head><body><article>"
                                         "<p>Hybrid search fuses dense vectors and BM25 with reciprocal rank fusion."
                                         "</p></article></body></html>", encoding="utf-8")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/index.html"
    try:
        with live.client() as client:
            reply = client.post("/api/load", json={"inputs": [url], "collection": "web_notes"})
        assert reply.status_code == 200, reply.text
        files = reply.json()["files"]
        assert [f["status"] for f in files] == ["loaded"] and files[0]["source"].startswith(url.rsplit("/", 1)[0])
        # created without a description: the server's LLM wrote one (issue #13), listed as generated
        assert reply.json()["description"] == {"collection": "web_notes", "text": DESCRIPTION, "origin": "llm",
                                               "note": ""}
        with live.client() as client:
            listed = {c["name"]: c for c in client.get("/api/collections").json()}
        assert listed["web_notes"]["description"] == DESCRIPTION and listed["web_notes"]["description_generated"]
    finally:
        site.shutdown()
        live.searcher.drop_collection("web_notes")


def test_retrieve_keeps_to_the_filter(live: Live) -> None:
    with live.client() as client:
        everything = client.post("/api/retrieve", json={"query": "Milvus retrieval", "top_k": 10}).json()
        only_rag = client.post("/api/retrieve", json={"query": "Milvus retrieval", "top_k": 10,
                                                      "where": {"paths": ["**/rag.md"], "types": ["md"]}}).json()
    assert {Path(h["chunk"]["source"]).name for h in everything} == {"milvus.md", "rag.md"}
    assert {Path(h["chunk"]["source"]).name for h in only_rag} == {"rag.md"}


# --- validation ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path, body, expected", [
    ("/api/query", {}, "question: Field required"),
    ("/api/query", {"question": "   "}, "question: String should have at least 1 character"),
    ("/api/query", {"question": "x", "max_iter": 0}, "max_iter: Input should be greater than or equal to 1"),
    ("/api/query", {"question": "x", "agent": "magic"}, "agent: Input should be"),
    ("/api/query", {"question": "x", "llm": {"base_url": "http://evil"}}, "llm: Extra inputs are not permitted"),
    ("/api/retrieve", {"query": "x", "top_k": "many"}, "top_k: Input should be a valid integer"),
    # pydantic's lax mode read these as 1: one chunk, one round (a helper's break test)
    ("/api/retrieve", {"query": "x", "top_k": True}, "top_k: must be a number, got true"),
    ("/api/query", {"question": " ", "max_iter": True}, "max_iter: must be a number, got true"),
    ("/api/query", {"question": " ", "max_iter": True}, "question: String should have at least 1 character"),
    ("/api/retrieve", {"query": "x", "where": {"types": ["exe"]}}, "unknown file type 'exe'"),
    ("/api/retrieve", {"query": "x", "where": {"path": ["a"]}}, "where.path: Extra inputs are not permitted"),
    ("/api/load", {"inputs": []}, "inputs: List should have at least 1 item"),
])
def test_malformed_body_gets_422_with_a_message(live: Live, path: str, body: dict[str, Any], expected: str) -> None:
    with live.client() as client:
        reply = client.post(path, json=body)
    assert reply.status_code == 422
    data = reply.json()
    assert data["type"] == "RequestValidationError"
    assert expected in data["detail"], data["detail"]
    assert "Traceback" not in reply.text


def test_invalid_json_and_unknown_collection_are_4xx_not_500(live: Live) -> None:
    with live.client() as client:
        broken = client.post("/api/query", content=b'{"question": ', headers={"content-type": "application/json"})
        plain = client.post("/api/query", content=b"question=hi", headers={"content-type": "text/plain"})
        unknown = client.post("/api/query", json={"question": QUESTION, "collections": ["nope"]})
        retrieve_unknown = client.post("/api/retrieve", json={"query": "x", "collections": ["nope"]})
    assert broken.status_code == 422 and "JSON" in broken.json()["detail"]
    assert plain.status_code == 415 and "application/json" in plain.json()["detail"]
    assert unknown.status_code == 400 and "no collection named 'nope'" in unknown.json()["detail"]
    assert unknown.json()["hint"] == "collections here: docs"
    assert retrieve_unknown.status_code == 400


# --- query -----------------------------------------------------------------------------------------------------------
def test_query_streams_typed_events_in_order_then_the_report(live: Live) -> None:
    with live.client() as client:
        events = stream_query(client, {"question": QUESTION, "collections": ["docs"]})
    kinds = [e["event"] for e in events]
    assert kinds[0] == "query.start"
    assert kinds[-1] == "query.report" and kinds.count("query.report") == 1
    assert "error" not in kinds
    order = ["query.start", "query.sub_queries", "query.routed", "query.accepted", "query.gaps",
             "query.answer_token", "query.report"]
    firsts = [kinds.index(k) for k in order]
    assert firsts == sorted(firsts), kinds
    assert [int(e["id"]) for e in events] == list(range(1, len(events) + 1))
    by_kind = {e["event"]: e["data"] for e in events}
    assert by_kind["query.sub_queries"]["sub_queries"] == [QUESTION]
    assert by_kind["query.routed"]["collections"] == ["docs"]
    assert by_kind["query.accepted"]["accepted"] == 1
    tokens = "".join(e["data"]["text"] for e in events if e["event"] == "query.answer_token")
    assert "Milvus Lite is the embedded edition" in tokens
    report = by_kind["query.report"]
    assert report["question"] == QUESTION
    assert [s["number"] for s in report["sources"]] == [1]
    assert report["sources"][0]["chunk"]["source"].endswith("milvus.md")
    assert report["usage"]["llm_calls"] >= 3
    assert 'class="cite"' in report["answer_html"] and "<strong>no server</strong>" in report["answer_html"]
    assert report["markdown"].startswith(f"# {QUESTION}")
    assert "## Sources" in report["markdown"] and "milvus.md" in report["markdown"]


def test_asked_for_each_streamed_event_carries_its_words_as_the_cli_prints_them(live: Live) -> None:
    with live.client() as client:
        plain = stream_query(client, {"question": QUESTION, "collections": ["docs"]})
        worded = stream_query(client, {"question": QUESTION, "collections": ["docs"], "lines": True})
    assert all("lines" not in e["data"] for e in plain)
    assert [e["event"] for e in worded] == [e["event"] for e in plain]
    by_kind = {e["event"]: e["data"] for e in worded}
    assert by_kind["query.sub_queries"]["lines"] == ["Round 1: searching", f"• {QUESTION}"]
    assert by_kind["query.accepted"]["lines"] == [f"✓ kept 1 of {by_kind['query.accepted']['retrieved']} new "
                                                  f"chunks for: {QUESTION}"]
    assert by_kind["query.answer_token"]["lines"] == []
    assert by_kind["query.report"]["lines"][0].startswith("Report written with 1 source (")



def test_query_without_streaming_returns_the_report_json(live: Live) -> None:
    with live.client() as client:
        reply = client.post("/api/query", json={"question": QUESTION, "stream": False})
    assert reply.status_code == 200
    report = reply.json()
    assert report["answer"].startswith("Milvus Lite") and report["sources"] and report["answer_html"]


def test_query_with_deep_research_streams_steps_and_verdicts(live: Live) -> None:
    with live.client() as client:
        events = stream_query(client, {"question": QUESTION, "agent": "deep_research", "web": False})
    kinds = [e["event"] for e in events]
    assert kinds[:3] == ["query.start", "query.agent", "query.step"] and kinds[-1] == "query.report"
    assert "query.evaluation" in kinds and "error" not in kinds
    report = events[-1]["data"]
    assert report["agent"] == "deep_research" and report["checks"] == {"definitive": True, "attribution": True}
    assert report["beast_mode"] is False and "*Evaluator checks: definitive passed" in report["markdown"]


def test_query_long_report_with_an_outline_from_the_request(live: Live) -> None:
    outline = [{"title": "What it is", "question": "What is Milvus Lite?"},
               {"title": "Servers", "question": "Does Milvus Lite need a server?"}]
    with live.client() as client:
        events = stream_query(client, {"question": QUESTION, "agent": "deep_search", "report": "long",
                                       "outline": outline, "outline_title": "Milvus Lite notes"})
        bad = client.post("/api/query", json={"question": QUESTION, "report": "huge"})
    kinds = [e["event"] for e in events]
    assert "error" not in kinds, events[-1]
    outline_event = next(e["data"] for e in events if e["event"] == "query.outline")
    assert outline_event == {"title": "Milvus Lite notes", "sections": outline, "source": "file"}
    sections = [(e["data"]["index"], e["data"]["status"]) for e in events if e["event"] == "query.section"]
    assert sections == [(1, "research"), (1, "written"), (2, "research"), (2, "written"), (0, "editing")]
    report = events[-1]["data"]
    assert report["title"] == "Milvus Lite notes" and report["sections"] == ["What it is", "Servers"]
    assert report["markdown"].startswith("# Milvus Lite notes\n\n## Contents\n\n1. [Introduction](#introduction)")
    assert "## Contradictions and open questions" in report["markdown"] and "## Sources" in report["markdown"]
    assert bad.status_code == 422 and "report" in bad.json()["detail"]


def test_a_long_query_does_not_block_other_requests(live: Live) -> None:
    live.gate.clear()
    live.arrived.clear()
    with live.client() as client, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(stream_query, client, {"question": "Explain slowly what Milvus Lite is."})
        assert live.arrived.wait(FAILURE_TIMEOUT_S), "the slow query never reached the model"
        assert not slow.done()
        # the slow query holds a worker until the gate opens: everything below is answered while it waits
        assert client.get("/api/health").json()["status"] == "ok"
        assert client.get("/api/collections").status_code == 200
        fast = stream_query(client, {"question": QUESTION})
        assert not slow.done(), "the slow query should still be waiting"
        live.gate.set()
        events = slow.result(timeout=FAILURE_TIMEOUT_S)
    assert fast[-1]["event"] == "query.report"
    assert events[-1]["event"] == "query.report"


def test_a_client_that_disconnects_stops_its_run(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    question = "Explain slowly what the cancelled question was."
    live.gate.clear()
    live.arrived.clear()
    streams = watch_query_streams(monkeypatch)
    with live.client() as client:
        with client.stream("POST", "/api/query", json={"question": question}) as response:
            first = next(sse_events(response.iter_lines()))
            assert first["event"] == "query.start"
            # leave only once the run is inside its first model call: leaving at query.start raced the run's first
            # cancel check on a busy machine (no prompt asked at all; a fresh clone's full run, 2026-12-04)
            assert live.arrived.wait(FAILURE_TIMEOUT_S), "the query never reached the model"
    [stream] = streams
    assert stream.closed.wait(FAILURE_TIMEOUT_S), "the server never saw the client go"
    live.gate.set()  # the run now gets its decomposition, emits its next event, and stops there
    assert stream.finished.wait(FAILURE_TIMEOUT_S), "the run did not stop"
    llm = live.searcher.llm
    asked = [p for p in llm.prompts if question in p]
    assert len(asked) == 1 and asked[0].startswith("Break the question"), [a[:40] for a in asked]


def test_a_failing_run_ends_the_stream_with_an_error_event(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr(live.searcher, "query", broken)
    with live.client() as client:
        events = stream_query(client, {"question": QUESTION})
    assert [e["event"] for e in events] == ["error"]
    assert events[0]["data"]["type"] == "InternalError"
    assert "internal detail" not in events[0]["data"]["detail"]


def test_query_without_an_llm_is_503_before_any_stream(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    allowed, _ = write_corpus(tmp_path)
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None})
    with DeepSearcher(settings, embedder=HashEmbedder(64, "test-hash-64")) as searcher:
        searcher.load([str(allowed / "docs" / "rag.md")], "notes")
        client = TestClient(create_app(settings, searcher=searcher), base_url="http://127.0.0.1")
        reply = client.post("/api/query", json={"question": QUESTION})
        hits = client.post("/api/retrieve", json={"query": "retrieval"})
    assert reply.status_code == 503 and reply.headers["content-type"] == "application/json"
    assert reply.json()["type"] == "ConfigError" and reply.json()["hint"]
    assert hits.status_code == 200 and hits.json()[0]["collection"] == "notes"


# --- auth, hosts, page ---------------------------------------------------------------------------------------------
def test_off_loopback_requires_the_bearer_token(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from deepsearcher.server import create_app

    settings = load_settings(None, {"llm": None, "server": {"host": "0.0.0.0", "token_env": "DS_TEST_TOKEN"}})
    monkeypatch.delenv("DS_TEST_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="DS_TEST_TOKEN is not set"):
        create_app(settings, searcher=live.searcher)
    monkeypatch.setenv("DS_TEST_TOKEN", "s3cret-token-value")
    client = TestClient(create_app(settings, searcher=live.searcher), base_url="http://10.1.2.3:8000")
    missing = client.get("/api/collections")
    wrong = client.post("/api/query", json={"question": QUESTION}, headers={"Authorization": "Bearer nope"})
    right = client.get("/api/collections", headers={"Authorization": "Bearer s3cret-token-value"})
    health = client.get("/api/health")
    assert missing.status_code == 401 and missing.json()["detail"] == "missing bearer token"
    assert missing.headers["www-authenticate"] == "Bearer"
    assert wrong.status_code == 401 and wrong.json()["detail"] == "invalid bearer token"
    assert right.status_code == 200 and right.json()[0]["name"] == "docs"
    assert health.status_code == 200 and health.json()["auth_required"] is True
    token = {"Authorization": "Bearer s3cret-token-value"}
    metadata = client.post("/api/load", json={"inputs": ["http://169.254.169.254/latest/meta-data/"]}, headers=token)
    local = client.post("/api/load", json={"inputs": ["http://localhost:8080/admin"]}, headers=token)
    assert metadata.status_code == 403 and "non-public address" in metadata.json()["detail"]
    assert local.status_code == 403


def test_cli_serve_refuses_a_public_host_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from deepsearcher.cli import main

    monkeypatch.delenv("DEEPSEARCHER_API_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "9"])
    assert result.exit_code == 1
    assert "refusing to serve on 0.0.0.0" in result.output and "DEEPSEARCHER_API_TOKEN" in result.output


def test_cli_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    """The port is bound before the store opens: a second server on it is one line naming the fix, no uvicorn log."""
    import socket

    from click.testing import CliRunner

    from deepsearcher.cli import main

    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db: {{uri: {tmp_path / 'milvus.db'}}}\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["--config", str(cfg), "serve", "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert " ".join(result.output.split()) == (f"Error: port {port} on 127.0.0.1 is already in use (another server "
                                               "is running there): stop it, or pass --port with a free port")
    assert not (tmp_path / "milvus.db").exists()  # failed before the store was opened


def test_loopback_server_refuses_foreign_host_headers(live: Live) -> None:
    with live.client() as client:
        reply = client.get("/api/collections", headers={"Host": "attacker.example:8000"})
    assert reply.status_code == 403 and "not a loopback name" in reply.json()["detail"]


def test_web_page_docs_and_openapi_are_served_offline(live: Live) -> None:
    with live.client() as client:
        page = client.get("/")
        script = client.get("/static/app.js")
        docs = client.get("/docs")
        openapi = client.get("/openapi.json").json()
        asset = client.get("/docs-static/swagger-ui-bundle.js")
    assert page.status_code == 200 and "<title>deepsearcher</title>" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert script.status_code == 200 and "readEvents" in script.text
    assert docs.status_code == 200 and "/docs-static/swagger-ui-bundle.js" in docs.text
    assert asset.status_code == 200
    assert {"/api/query", "/api/load", "/api/retrieve", "/api/collections", "/api/health"} <= set(openapi["paths"])


def test_a_folder_reload_removes_files_gone_from_it_unless_keep_missing(live: Live) -> None:
    folder = live.allowed / "gone"
    folder.mkdir()
    (folder / "stays.md").write_text("# Stays\n\nThis note stays in the folder.")
    (folder / "goes.md").write_text("# Goes\n\nThis note is deleted after the first load.")
    body = {"inputs": [str(folder)], "collection": "gone", "description": "notes"}
    with live.client() as client:
        assert client.post("/api/load", json=body).status_code == 200
        (folder / "goes.md").unlink()
        kept = client.post("/api/load", json={**body, "keep_missing": True}).json()
        removed = client.post("/api/load", json=body).json()
    assert kept["removed"] == []
    assert [(Path(r["source"]).name, r["status"], r["reason"]) for r in removed["removed"]] == [
        ("goes.md", "removed", "no longer in the folder")]


def test_export_turns_the_report_markdown_into_docx_and_html(live: Live) -> None:
    """The page's download menu: the report's ``markdown`` field in, a file out."""
    import io

    from docx import Document

    markdown = f"# {QUESTION}\n\nMilvus Lite stores data in one file [1].\n\n## Sources\n\n- /d/milvus.md: [1]\n"
    with live.client() as client:
        docx = client.post("/api/export", json={"markdown": markdown, "format": "docx"})
        html = client.post("/api/export", json={"markdown": markdown, "format": "html"})
        bad = client.post("/api/export", json={"markdown": markdown, "format": "odt"})
    assert docx.status_code == 200 and docx.headers["content-disposition"] == 'attachment; filename="report.docx"'
    paragraphs = Document(io.BytesIO(docx.content)).paragraphs
    assert [p.text for p in paragraphs][:2] == [QUESTION, "Milvus Lite stores data in one file [1]."]
    assert [h.address for p in paragraphs for h in p.hyperlinks if h.address] == ["file:///d/milvus.md"]
    assert html.headers["content-type"] == "text/html; charset=utf-8" and '<a id="source-1">' in html.text
    assert bad.status_code == 422 and "format" in bad.json()["detail"]
