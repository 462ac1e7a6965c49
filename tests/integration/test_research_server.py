"""DeepResearch through the HTTP server obeys the server's address rule (issue #12 on #15): the pages a query reads
and the pages ``save_to`` stores go through a crawler built with ``server.allow_private_urls``, as the server's loads
do. Real things: uvicorn on 127.0.0.1, a fake SearXNG service, result pages on 127.0.0.1 (internal) and 127.0.0.2
(declared public by the address-policy test hook, as in test_crawler_security.py), Milvus Lite, the bundled
embedder; the model is scripted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi", reason="the server tests need the extra `server` (pip install -e '.[server]')")

import httpx  # noqa: E402

from deepsearcher.testing.scripted import ScriptedChatModel  # noqa: E402
from deepsearcher.net.policy import AddressPolicy, IPAddress, classify  # noqa: E402
from tests.integration.http_site import Route, Site, html, json_route  # noqa: E402
from tests.integration.server_support import LiveServer, sse_events  # noqa: E402

pytestmark = pytest.mark.integration

PUBLIC = "127.0.0.2"  # stands in for an internet host
TOKEN = "research-token-0123456789"
Q = "Where do mallard ducks live?"
MALLARD = "Mallards live on ponds, lakes and rivers across the northern hemisphere and dabble for plants."
CHECKS = json.dumps({"definitive": True, "attribution": True})
PASS = json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})


def stand_in_classify(address: IPAddress) -> str | None:
    """``classify``, except that 127.0.0.2 counts as public."""
    return None if str(address) == PUBLIC else classify(address)


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Site, Site]]:
    """(a public site on 127.0.0.2, an internal one on 127.0.0.1), each with a /mallard page; crawlers built from
    settings judge addresses with ``stand_in_classify``."""
    original = AddressPolicy.from_setting.__func__  # type: ignore[attr-defined]

    def from_setting(cls: type[AddressPolicy], allow_private_urls: bool | None, *, default: bool) -> AddressPolicy:
        policy = original(cls, allow_private_urls, default=default)
        return AddressPolicy(policy.allow_private, classifier=stand_in_classify)

    monkeypatch.setattr(AddressPolicy, "from_setting", classmethod(from_setting))
    page = html("Mallard", f"<article><h1>Mallard</h1><p>{MALLARD}</p></article>")
    public, internal = Site({"/mallard": page}, bind=PUBLIC), Site({"/mallard": page})
    yield public, internal
    public.close()
    internal.close()


def number_for(prompt: str, url: str, *, passage: bool) -> int:
    """The ``[n]`` of the item from ``url``: its search result, or (``passage``) a passage of the page read."""
    for line in prompt.splitlines():
        if line.startswith("[") and f"({url}" in line and ("Mallard - result" in line) != passage:
            return int(line[1:].split("]", 1)[0])
    raise AssertionError(f"no item from {url} in:\n{prompt}")


def scripted(public: Site, internal: Site) -> ScriptedChatModel:
    """search the web; read both results; answer citing the passage of the page that was read."""
    urls = [public.url("/mallard"), internal.url("/mallard")]

    def read(messages: Any) -> str:
        return json.dumps({"action": "read", "items": [number_for(messages[-1]["content"], u, passage=False)
                                                       for u in urls]})

    def answer(messages: Any) -> str:
        n = number_for(messages[-1]["content"], urls[0], passage=True)
        return json.dumps({"action": "answer", "answer": f"Mallards live on ponds and lakes [{n}]."})

    return ScriptedChatModel([json.dumps({"action": "search", "queries": ["mallard habitat"]}), read, answer,
                              CHECKS, PASS])


def test_a_query_through_the_server_reads_and_saves_pages_under_the_servers_address_rule(
        hosts: tuple[Site, Site], make_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app
    from deepsearcher.settings import load_settings

    public, internal = hosts
    results = [{"url": public.url("/mallard"), "title": "Mallard - result", "content": "A dabbling duck."},
               {"url": internal.url("/mallard"), "title": "Mallard - result", "content": "A dabbling duck."}]
    search = Site({"/search": Route(handler=lambda req: json_route({"query": "q", "results": results}))})
    notes = tmp_path / "notes.md"
    notes.write_text("Field notes: dabbling ducks feed at the water surface.", encoding="utf-8")
    loader = make_app()
    loader.load([str(notes)], "notes", "Field notes about ducks")
    monkeypatch.setenv("DS_RESEARCH_TOKEN", TOKEN)
    settings = load_settings(None, {
        "vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
        "web_search": {"provider": "searxng", "base_url": search.url("").rstrip("/"), "timeout_s": 5},
        "crawler": {"timeout_s": 5},  # allow_private_urls unset: the CLI may read internal pages, the server not
        "server": {"token_env": "DS_RESEARCH_TOKEN", "allow_private_urls": False},
        # the result pages are on loopback addresses here: search results may reach them only when opted in (#21),
        # and then only as far as the server's rule allows (what this test checks)
        "query": {"read_private_result_urls": True},
    })
    searcher = DeepSearcher(settings, embedder=loader.embedder, store=loader.store, llm=scripted(public, internal))
    try:
        with LiveServer(create_app(settings, searcher=searcher)) as live, \
                httpx.Client(base_url=live.url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            with client.stream("POST", "/api/query", json={"question": Q, "agent": "deep_research", "web": True,
                                                          "save_to": "web_pages"}) as response:
                assert response.status_code == 200, response.read()
                events = list(sse_events(response.iter_lines()))
    finally:
        search.close()
    kinds = [e["event"] for e in events]
    assert "error" not in kinds, events[-1]
    read = next(e["data"] for e in events if e["event"] == "query.read")
    assert read["opened"] == [public.url("/mallard"), internal.url("/mallard")] and read["added"] >= 1
    [refused] = read["failed"]
    assert refused.startswith(internal.url("/mallard")) and "refused: 127.0.0.1 (loopback)" in refused
    assert internal.requests == []  # never connected to
    assert public.paths() == ["/mallard"]  # read once; saved from that fetch
    saved = next(e["data"] for e in events if e["event"] == "query.saved")
    assert saved["collection"] == "web_pages" and saved["pages"] == 1 and not saved["error"]
    report = events[-1]["data"]
    assert report["sources"][0]["chunk"]["source"] == public.url("/mallard")
    stored = searcher.retrieve("mallard ponds", collections=["web_pages"])
    assert {h.chunk.source for h in stored} == {public.url("/mallard")}
    searcher.close()
