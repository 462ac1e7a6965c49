"""The HTTP server against hostile callers (../shared/cases/security/server_*.sh, csrf_fastapi_pre_0132.sh and the
small ones as tests): authentication and size before the body, cross-site writes, path rules, bounded load queue,
redacted errors, the /docs page.

The server runs in uvicorn on 127.0.0.1 (real sockets, real flow control); the memory test runs it as
``deepsearcher serve`` in a fresh process and reads its peak RSS from /proc.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi", reason="the server tests need the extra `server` (pip install -e '.[server]')")

import httpx  # noqa: E402

from deepsearcher.settings import load_settings  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.integration.hostile_http import HOLD_LIMIT_S, HostileServer  # noqa: E402
from tests.integration.server_support import HashEmbedder, LiveServer, write_corpus  # noqa: E402

pytestmark = pytest.mark.integration

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BODY_CAP_MB = 1.0  # server.max_body_mb in these tests (the default)
RSS_CAP_MB = 25  # peak RSS growth allowed while a 200 MB body is refused: the cap, buffers, slack


class Site:
    def __init__(self, url: str, allowed: Path, outside: Path, searcher: Any) -> None:
        self.url, self.allowed, self.outside, self.searcher = url, allowed, outside, searcher

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, **kwargs)


def serve(tmp: Path, monkeypatch: pytest.MonkeyPatch, crawler_timeout_s: float = 3, **server: Any) -> Iterator[Site]:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    allowed, outside = write_corpus(tmp)
    settings = load_settings(None, {
        "vector_db": {"uri": str(tmp / "milvus.db")}, "llm": None,
        "crawler": {"timeout_s": crawler_timeout_s, "respect_robots": False},
        "server": {"allowed_roots": [str(allowed)], "token_env": "DS_SECURITY_TOKEN", **server},
    })
    monkeypatch.setenv("DS_SECURITY_TOKEN", TOKEN)
    searcher = DeepSearcher(settings, embedder=HashEmbedder(64, "test-hash-64"))
    with LiveServer(create_app(settings, searcher=searcher)) as live:
        yield Site(live.url, allowed, outside, searcher)
    searcher.close()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    yield from serve(tmp_path, monkeypatch, max_queued_loads=1)


# --- authentication and size before the body (server_preauth_body.sh) ---------------------------------------------
def test_no_token_is_401_before_the_body_is_parsed(site: Site) -> None:
    with site.client() as client:
        malformed = client.post("/api/load", content=b"{bad", headers={"content-type": "application/json"})
        wrong_type = client.post("/api/load", content=b"x=1", headers={"content-type": "text/plain"})
        health = client.get("/api/health")
    assert malformed.status_code == 401 and malformed.json()["detail"] == "missing bearer token"
    assert wrong_type.status_code == 401
    assert health.status_code == 200


def test_a_body_over_the_cap_is_413_declared_or_chunked(site: Site) -> None:
    big = b'{"inputs": ["' + b"A" * int(BODY_CAP_MB * 1_000_000 + 10) + b'"]}'

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 65536):
            yield big[i:i + 65536]

    with site.client(headers=AUTH) as client:
        declared = client.post("/api/load", content=big, headers={"content-type": "application/json"})
        streamed = client.post("/api/load", content=chunks(), headers={"content-type": "application/json"})
        small = client.post("/api/load", json={"inputs": [str(site.allowed / "docs")], "collection": "small"})
    for reply in (declared, streamed):
        assert reply.status_code == 413, reply.text
        assert "server.max_body_mb" in reply.json()["detail"]
    assert small.status_code == 200


def _hwm_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _raw_post(port: int, body_mb: int, headers: str) -> str:
    """POST a body of ``body_mb`` MB over a raw socket, as fast as the server takes it; the status line."""
    block = b"A" * 1_000_000
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        head = (f"POST /api/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {body_mb * 1_000_000 + 2}\r\n{headers}\r\n").encode()
        try:
            sock.sendall(head + b'["')
            for _ in range(body_mb):
                sock.sendall(block)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed without reading the rest: the point
        return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak RSS is read from /proc")
def test_a_200_mb_body_is_refused_with_bounded_server_memory(tmp_path: Path) -> None:
    """``deepsearcher serve`` in a fresh process: a 200 MB body without a token (401) and with one (413)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm: null\nvector_db:\n  uri: {tmp_path / 'milvus.db'}\n")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1",
           "DEEPSEARCHER_API_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "deepsearcher.cli", "--config", str(cfg), "serve", "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # readiness; the bound only ends a failed start
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail(f"server did not start: {proc.stderr.read(3000) if proc.stderr else ''}")
        before = _hwm_kb(proc.pid)
        no_token = _raw_post(port, 200, "")
        with_token = _raw_post(port, 200, f"Authorization: Bearer {TOKEN}\r\n")
        growth_mb = (_hwm_kb(proc.pid) - before) / 1024
    finally:
        proc.terminate()
        proc.wait(15)
    print(f"200 MB bodies: peak RSS growth {growth_mb:.1f} MB (cap {RSS_CAP_MB} MB); {no_token}; {with_token}")
    assert no_token.endswith("401 Unauthorized") and with_token.endswith("413 Request Entity Too Large")
    assert growth_mb < RSS_CAP_MB


# --- cross-site writes (csrf_fastapi_pre_0132.sh) -------------------------------------------------------------------
def test_cross_site_and_non_json_writes_are_refused_before_parsing(site: Site) -> None:
    body = b'{"inputs": ["http://127.0.0.1:9/page"], "collection": "victim", "force_new": true}'
    with site.client(headers=AUTH) as client:
        no_type = client.post("/api/load", content=body, headers={"content-type": ""})
        form = client.post("/api/load", content=body, headers={"content-type": "application/x-www-form-urlencoded"})
        text = client.post("/api/query", content=body, headers={"content-type": "text/plain;charset=UTF-8"})
        cross = client.post("/api/load", content=body, headers={"content-type": "application/json",
                                                                 "sec-fetch-site": "cross-site"})
        same_site = client.post("/api/retrieve", json={"query": "x"}, headers={"sec-fetch-site": "same-site"})
        same_origin = client.post("/api/retrieve", json={"query": "milvus"},
                                  headers={"sec-fetch-site": "same-origin"})
        names = [c["name"] for c in client.get("/api/collections").json()]
    assert [r.status_code for r in (no_type, form, text)] == [415, 415, 415]
    assert cross.status_code == 403 and "cross-site" in cross.json()["detail"]
    assert same_site.status_code == 403
    assert same_origin.status_code == 400  # the page itself: through to the endpoint (no collection yet)
    assert "victim" not in names


def test_refusals_of_small_bodies_always_reach_the_client(site: Site) -> None:
    """A refusal answered while the client's small body was still arriving once reached CI as "connection reset by
    peer" instead of the 415/401: small declared bodies are read and dropped before the answer, so the connection
    stays usable."""
    with site.client() as client:
        replies = []
        for i in range(40):
            headers = {"content-type": "text/plain", **(AUTH if i % 2 else {})}
            replies.append(client.post("/api/query", content=b"question=hi" * (1 + i * 50), headers=headers))
        after = client.get("/api/health")
    assert [r.status_code for r in replies] == [401, 415] * 20
    assert "application/json" in replies[1].json()["detail"]
    assert after.status_code == 200


# --- path rules (server_glob_escape.sh) -----------------------------------------------------------------------------
def test_dotdot_is_refused_the_same_way_whether_the_outside_file_exists(site: Site) -> None:
    up = "../" * len(site.allowed.parts)
    inputs = [f"{site.allowed}/d*/{up}etc/passwd", f"{site.allowed}/d*/{up}etc/no-such-file",
              f"{site.allowed}/docs/../../outside/secret.txt"]
    with site.client(headers=AUTH) as client:
        replies = [client.post("/api/load", json={"inputs": [path], "collection": "g"}) for path in inputs]
        mixed = client.post("/api/load", json={"inputs": [str(site.allowed / "docs" / "milvus.md"),
                                                           f"{site.allowed}/d*/{up}etc/*"], "collection": "g"})
    assert {r.status_code for r in replies} == {422} and mixed.status_code == 422
    details = {r.json()["detail"].replace("no-such-file", "passwd") for r in replies[:2]}
    assert len(details) == 1  # the same answer: nothing tells the two apart
    for reply in [*replies, mixed]:
        assert "/etc/pam.d" not in reply.text and "secret" not in reply.text.replace("secret.txt'", "")


def test_files_outside_the_roots_are_never_listed_and_look_absent(site: Site) -> None:
    (site.allowed / "link").symlink_to(site.outside, target_is_directory=True)
    with site.client(headers=AUTH) as client:
        exists = client.post("/api/load", json={"inputs": [f"{site.allowed}/l*/secret.txt"], "collection": "o"})
        missing = client.post("/api/load", json={"inputs": [f"{site.allowed}/l*/nothing.txt"], "collection": "o"})
        star = client.post("/api/load", json={"inputs": [f"{site.allowed}/*/*"], "collection": "o"})
    assert exists.status_code == missing.status_code == 400
    assert exists.json()["detail"].replace("secret.txt", "X") == missing.json()["detail"].replace("nothing.txt", "X")
    assert star.status_code == 200
    sources = [f["source"] for f in star.json()["files"]]
    assert sources and all("link" not in s and "secret" not in s for s in sources)


def test_nul_bytes_in_a_load_path_are_422_not_500(site: Site) -> None:
    with site.client(headers=AUTH) as client:
        reply = client.post("/api/load", json={"inputs": [f"{site.allowed}/docs/milvus.md\x00.txt"]})
    assert reply.status_code == 422 and "control characters" in reply.json()["detail"]


def test_a_glob_over_symlink_loops_loads_each_file_once(site: Site) -> None:
    loops = site.allowed / "loops"
    loops.mkdir()
    (loops / "a.md").write_text("Milvus Lite loop probe file with enough words to be a chunk.")
    (loops / "s1").symlink_to(".")
    (loops / "s2").symlink_to(".")
    with site.client(headers=AUTH) as client:
        reply = client.post("/api/load", json={"inputs": [f"{loops}/**/*.md"], "collection": "loops"})
    assert reply.status_code == 200
    assert [Path(f["source"]).name for f in reply.json()["files"]] == ["a.md"]


# --- loads on a bounded queue (server_threadpool_dos.sh) ------------------------------------------------------------
@pytest.fixture
def patient_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """``site`` whose crawler outwaits any held page (the test decides when a page ends, not a clock)."""
    yield from serve(tmp_path, monkeypatch, crawler_timeout_s=HOLD_LIMIT_S * 2, max_queued_loads=1)


def test_waiting_loads_never_block_health_collections_or_the_page(patient_site: Site) -> None:
    site, slow = patient_site, HostileServer()
    url = slow.url("/hold")  # each page waits until the test releases it, then gives nothing (404)
    try:
        with site.client(headers=AUTH) as client, ThreadPoolExecutor(8) as pool:
            loads = [pool.submit(client.post, "/api/load", json={"inputs": [f"{url}?n={i}"], "collection": "slow"})
                     for i in range(8)]
            refused = _first_done(loads, 6)  # one load runs (held), one waits: the other six are refused
            assert slow.held.wait(HOLD_LIMIT_S), "the running load never reached the page"
            quick = [client.get(p) for p in ("/api/health", "/api/collections", "/", "/api/info")]
            assert not all(f.done() for f in loads), "the held loads should still be running or waiting"
            slow.release.set()
            answers = [f.result(timeout=HOLD_LIMIT_S) for f in loads]
    finally:
        slow.close()
    assert [r.status_code for r in quick] == [200] * 4
    assert sorted(f.result().status_code for f in refused) == [429] * 6
    codes = sorted(r.status_code for r in answers)
    assert codes == [400] * 2 + [429] * 6  # 1 running + 1 waiting (max_queued_loads: 1); the slow URL gives nothing
    busy = next(r for r in answers if r.status_code == 429)
    assert busy.headers["retry-after"].isdigit() and busy.json()["type"] == "Busy"


def _first_done(futures: list[Future], count: int) -> set[Future]:
    """Wait until ``count`` of ``futures`` are done (failing after HOLD_LIMIT_S); those done."""
    done: set[Future] = set()
    while len(done) < count:
        finished, _ = wait([f for f in futures if f not in done], timeout=HOLD_LIMIT_S, return_when=FIRST_COMPLETED)
        assert finished, f"only {len(done)} of {count} answers came"
        done |= finished
    return done


# --- what leaves the machine ----------------------------------------------------------------------------------------
def test_error_answers_never_show_the_llm_base_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    port = _free_port()  # nothing listens there: the LLM server is "down"
    base_url = f"http://127.0.0.1:{port}/v1"
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")},
                                    "llm": {"provider": "openai_compatible", "model": "m", "base_url": base_url,
                                            "api_key_env": None, "timeout_s": 2, "max_retries": 0}})
    allowed, _ = write_corpus(tmp_path)
    with DeepSearcher(settings, embedder=HashEmbedder(64, "test-hash-64")) as searcher:
        searcher.load([str(allowed / "docs" / "rag.md")], "notes")
        with LiveServer(create_app(settings, searcher=searcher)) as live:
            reply = httpx.post(f"{live.url}/api/query", json={"question": "What is RAG?"}, timeout=30)
    assert reply.status_code == 502
    assert base_url not in reply.text and f"127.0.0.1:{port}" not in reply.text
    assert "<llm.base_url>" in reply.json()["detail"]


def test_docs_page_has_a_csp_no_framing_and_no_remote_host(site: Site) -> None:
    with site.client() as client:
        docs = client.get("/docs")
        icon = re.search(r'rel="shortcut icon" href="([^"]+)"', docs.text)
        assert icon is not None
        favicon = client.get(icon.group(1))
    csp = docs.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp and "script-src 'self' 'sha256-" in csp
    assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert not re.search(r'(src|href)="https?://', docs.text)
    assert favicon.status_code == 200 and favicon.headers["content-type"] == "image/png"


def test_a_full_query_queue_answers_429(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries wait on their own bounded queue too: one running, none waiting -> the next is 429 at once."""
    import threading

    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app
    from tests.integration.server_support import QUESTION, scripted_llm

    allowed, _ = write_corpus(tmp_path)
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
                                    "query": {"max_iter": 1, "agent": "deep_search"},
                                    "server": {"max_concurrent_queries": 1, "max_queued_queries": 0}})
    gate, arrived = threading.Event(), threading.Event()
    with DeepSearcher(settings, llm=scripted_llm(gate, arrived=arrived),
                      embedder=HashEmbedder(64, "test-hash-64")) as searcher:
        searcher.load([str(allowed / "docs")], "docs")
        with LiveServer(create_app(settings, searcher=searcher)) as live, \
                httpx.Client(base_url=live.url, timeout=60) as client, ThreadPoolExecutor(1) as pool:
            slow = pool.submit(client.post, "/api/query", json={"question": "Explain slowly: Milvus?",
                                                                 "stream": False})
            assert arrived.wait(HOLD_LIMIT_S), "the slow query never reached the model"  # it holds the one worker
            checked: list[object] = []  # the checks a query makes before its submit (collections, the LLM)
            resolve = searcher.resolve_collections
            monkeypatch.setattr(searcher, "resolve_collections", lambda *a, **k: checked.append(a) or resolve(*a, **k))
            busy = client.post("/api/query", json={"question": QUESTION})
            chat = client.post("/v1/chat/completions", json={"model": "deepsearcher",
                                                             "messages": [{"role": "user", "content": QUESTION}]})
            health = client.get("/api/health")
            gate.set()
            done = slow.result(timeout=60)
    assert busy.status_code == 429 and busy.headers["retry-after"] == "30" and "queries" in busy.json()["detail"]
    assert chat.status_code == 429, chat.text
    assert checked == []  # refused before any check: a burst under load is answered at once, not after the checks
    assert health.status_code == 200 and done.status_code == 200


def test_a_burst_of_queries_still_in_their_checks_gets_429_beyond_the_queue(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A place in the query queue is taken when the request arrives: with one worker and one waiting place, a third
    query that arrives while the first two are still in their checks (slow on a loaded machine) is refused at once."""
    import threading

    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app
    from tests.integration.server_support import QUESTION, scripted_llm

    allowed, _ = write_corpus(tmp_path)
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
                                    "query": {"max_iter": 1, "agent": "naive"},
                                    "server": {"max_concurrent_queries": 1, "max_queued_queries": 1}})
    checks_gate, inside = threading.Event(), threading.Semaphore(0)
    with DeepSearcher(settings, llm=scripted_llm(), embedder=HashEmbedder(64, "test-hash-64")) as searcher:
        searcher.load([str(allowed / "docs")], "docs")
        resolve = searcher.resolve_collections

        def slow_checks(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                inside.release()
                assert checks_gate.wait(HOLD_LIMIT_S), "the test never ended the checks"
            return resolve(*args, **kwargs)

        monkeypatch.setattr(searcher, "resolve_collections", slow_checks)
        with LiveServer(create_app(settings, searcher=searcher)) as live, \
                httpx.Client(base_url=live.url, timeout=120) as client, ThreadPoolExecutor(2) as pool:
            body = {"question": QUESTION, "stream": False}
            first = [pool.submit(client.post, "/api/query", json=body) for _ in range(2)]
            assert inside.acquire(timeout=HOLD_LIMIT_S) and inside.acquire(timeout=HOLD_LIMIT_S)  # both in checks
            third = client.post("/api/query", json=body)
            checks_gate.set()
            answers = [f.result(timeout=120) for f in first]
    assert third.status_code == 429 and "queries" in third.json()["detail"]
    assert [a.status_code for a in answers] == [200, 200]


def test_a_refused_url_never_tells_the_caller_what_an_internal_name_resolves_to(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #21 (low): the refusal of a load of ``localhost`` (or db.corp.internal) names the kind of address, never
    the address, so a remote caller cannot map the server's network through it (``search_ssrf_netns.sh`` oracle)."""
    for site in serve(tmp_path, monkeypatch, allow_private_urls=False):
        with site.client(headers=AUTH) as client:
            reply = client.post("/api/load", json={"inputs": ["http://localhost:5432/"], "collection": "o"})
    assert reply.status_code == 403
    detail = reply.json()["detail"]
    assert "points at a non-public address (loopback)" in detail and "127.0.0.1" not in detail and "::1" not in detail
