"""What a query's event stream tells an API caller about the operator's providers (issue #21, lows; the
``sse_leak`` check of ``../shared/cases/security3/server_api_probes.sh`` and ``search_key_echo_in_sse`` of
``secrets_probes.sh``): a web search provider behind ``user:password@`` in its base URL, and one whose 401 echoes the
key it was sent, never show the password or the key in the SSE events of a live server (DeepResearch, scripted
model, Milvus Lite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.http_site import Request, Route, Site
from tests.integration.server_support import HashEmbedder, LiveServer, QUESTION, scripted_llm, sse_events

pytestmark = pytest.mark.integration
KEY = "sx-SEARCH-KEY-9876543210"


def echo_401(req: Request) -> Route:
    """A search API that answers 401 quoting the credentials it got (as some proxies do)."""
    auth = {k.lower(): v for k, v in req.headers.items()}.get("authorization", "")
    return Route(f'{{"error": "invalid credentials: {auth} ({req.path})"}}'.encode(), 401,
                 {"Content-Type": "application/json"})


def events_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str) -> str:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app
    from deepsearcher.settings import load_settings

    monkeypatch.setenv("SX_TOKEN", KEY)
    notes = tmp_path / "notes.md"
    notes.write_text("Milvus Lite keeps a vector database in one local file.", encoding="utf-8")
    settings = load_settings(None, {
        "vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
        "web_search": {"provider": "searxng", "base_url": base_url, "api_key_env": "SX_TOKEN", "max_retries": 0,
                       "timeout_s": 3}})
    searcher = DeepSearcher(settings, llm=scripted_llm(), embedder=HashEmbedder(64, "test-hash-64"))
    searcher.load([str(notes)], "docs", "notes")
    try:
        with LiveServer(create_app(settings, searcher=searcher)) as live, httpx.Client(base_url=live.url,
                                                                                    timeout=60) as client:
            with client.stream("POST", "/api/query", json={"question": QUESTION, "collections": ["docs"],
                                                          "agent": "deep_research"}) as response:
                assert response.status_code == 200
                events: list[dict[str, Any]] = list(sse_events(response.iter_lines()))
    finally:
        searcher.close()
    web = [e["data"] for e in events if e["event"] == "query.web_search"]
    assert web and web[0]["error"], web  # the search failed, and the caller is told so
    return repr(events)


def test_a_search_base_url_password_never_reaches_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stream = events_for(tmp_path, monkeypatch, "http://searxuser:Sup3rS3cret@127.0.0.1:9")
    assert "Sup3rS3cret" not in stream and "searxuser" not in stream


def test_a_key_echoed_by_the_search_provider_never_reaches_the_caller(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    search = Site({"/search": Route(handler=echo_401)})
    try:
        stream = events_for(tmp_path, monkeypatch, search.url("").rstrip("/"))
    finally:
        search.close()
    echoed = [r for r in search.requests if KEY in repr(r.headers)]
    assert echoed, "the provider never got the key, so this test shows nothing"
    assert KEY not in stream and "$SX_TOKEN" in stream
