"""Firecrawl provider contract: firecrawl-py's v2 client against a local server speaking the endpoints it calls.

Shapes follow the installed SDK (firecrawl/v2/methods/scrape.py and crawl.py): ``POST /v2/scrape`` -> {success, data:
Document}; ``POST /v2/crawl`` -> {success, id, url}; ``GET /v2/crawl/{id}`` -> {success, status, completed, total,
next, data: [Document]}, with ``next`` pages fetched until it is null. The live Firecrawl service is not exercised.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from deepsearcher.errors import ConfigError, IngestError
from tests.integration.http_site import Request, Route, Site, json_route

pytestmark = pytest.mark.integration

DUCKS = "Mallard ducks dabble in shallow ponds and eat seeds, insects and water plants. " * 3
HERONS = "Grey herons stand still in the reeds before spearing fish with their long bills. " * 3


def doc(url: str, title: str, markdown: str, status: int = 200, error: str | None = None) -> dict:
    meta = {"title": title, "sourceURL": url, "url": url, "statusCode": status, "contentType": "text/html"}
    if error:
        meta["error"] = error
    return {"markdown": markdown, "metadata": meta}


class FakeFirecrawl:
    """The v2 endpoints with canned pages; the first status poll says "scraping", results come in two pages."""

    def __init__(self) -> None:
        self.polls = 0
        self.site = Site({
            "/v2/scrape": Route(handler=self.scrape),
            "/v2/crawl": Route(handler=self.start),
            "/v2/crawl/job-1": Route(handler=self.status),
        })

    def url(self, path: str = "") -> str:
        return self.site.url(path).rstrip("/")

    def bodies(self, path: str) -> list[dict]:
        return [r.json() for r in self.site.requests if r.method == "POST" and r.path == path]

    def scrape(self, req: Request) -> Route:
        if req.headers.get("Authorization") == "Bearer wrong":
            return json_route({"success": False, "error": "Unauthorized: Invalid token"}, 401)
        url = req.json()["url"]
        if "missing" in url:
            return json_route({"success": True, "data": doc(url, "Not found", "", 404, "Not Found")})
        return json_route({"success": True, "data": doc(url + "/", "Ducks", f"# Ducks\n\n{DUCKS}")})

    def start(self, req: Request) -> Route:
        if req.headers.get("Authorization") == "Bearer wrong":
            return json_route({"success": False, "error": "Unauthorized: Invalid token"}, 401)
        if "unsupported" in req.json()["url"]:
            return json_route({"success": False, "error": "This website is no longer supported"}, 403)
        return json_route({"success": True, "id": "job-1", "url": self.url("/v2/crawl/job-1")})

    def status(self, req: Request) -> Route:
        site = "https://birds.example"
        if "skip=2" in req.path:
            return json_route({"success": True, "status": "completed", "completed": 3, "total": 3, "next": None,
                               "data": [doc(f"{site}/gone", "Gone", "", 404, "Not Found")]})
        self.polls += 1
        if self.polls == 1:
            return json_route({"success": True, "status": "scraping", "completed": 1, "total": 3, "data": []})
        return json_route({"success": True, "status": "completed", "completed": 3, "total": 3,
                           "next": self.url("/v2/crawl/job-1?skip=2"),
                           "data": [doc(f"{site}/", "Ducks", f"# Ducks\n\n{DUCKS}"),
                                    doc(f"{site}/herons", "Herons", f"# Herons\n\n{HERONS}")]})


@pytest.fixture
def firecrawl() -> Iterator[FakeFirecrawl]:
    fake = FakeFirecrawl()
    yield fake
    fake.site.close()


def settings(fake: FakeFirecrawl, **extra) -> dict:
    return {"crawler": {"provider": "firecrawl", "api_url": fake.url(), "api_key_env": "TEST_FIRECRAWL_KEY",
                        "poll_interval_s": 0.1, **extra}}


def test_crawl_maps_options_polls_paginates_and_loads(make_app, firecrawl, monkeypatch):
    monkeypatch.setenv("TEST_FIRECRAWL_KEY", "fc-test")
    app = make_app(settings(firecrawl, max_depth=2, max_pages=7, include=["/birds/"], exclude=[r"\?print"],
                            options={"only_main_content": True, "wait_for_ms": 500, "max_concurrency": 2}))
    summary = app.load(["https://birds.example/"], "birds")

    body, = firecrawl.bodies("/v2/crawl")
    assert body["url"] == "https://birds.example/"
    assert body["limit"] == 7 and body["maxDiscoveryDepth"] == 2 and body["maxConcurrency"] == 2
    assert body["includePaths"] == ["/birds/"] and body["excludePaths"] == [r"\?print"] and body["regexOnFullURL"]
    assert body["allowExternalLinks"] is False and body["ignoreRobotsTxt"] is False and body["sitemap"] == "skip"
    assert body["scrapeOptions"]["formats"] == ["markdown"]
    assert body["scrapeOptions"]["onlyMainContent"] is True and body["scrapeOptions"]["waitFor"] == 500
    assert all(r.headers.get("Authorization") == "Bearer fc-test" for r in firecrawl.site.requests)
    assert firecrawl.polls == 2  # polled while "scraping", then followed `next`

    status = {f.source: (f.status, f.reason) for f in summary.files}
    assert status["https://birds.example/"][0] == status["https://birds.example/herons"][0] == "loaded"
    assert status["https://birds.example/gone"] == ("skipped", "HTTP 404 Not Found")
    hits = app.retrieve("herons spearing fish", top_k=1)
    assert hits[0].chunk.source == "https://birds.example/herons" and hits[0].chunk.title == "Herons"


def test_depth_zero_scrapes_one_page(make_app, firecrawl):
    app = make_app(settings(firecrawl, max_depth=0, same_site=False, respect_robots=False,
                            options={"proxy": "basic", "sitemap": "only"}))
    summary = app.load(["https://birds.example"], "one")
    body, = firecrawl.bodies("/v2/scrape")
    assert body["url"] == "https://birds.example" and body["formats"] == ["markdown"] and body["proxy"] == "basic"
    assert firecrawl.bodies("/v2/crawl") == []
    assert [(f.source, f.status) for f in summary.files] == [("https://birds.example/", "loaded")]


def test_unknown_or_mistyped_option_is_a_config_error_before_any_request(make_app, firecrawl):
    with pytest.raises(ConfigError) as err:
        make_app(settings(firecrawl, options={"onlyMainContent": True, "max_concurrency": "many"}))
    message = str(err.value)
    assert "crawler.options.onlyMainContent: unknown key; did you mean 'only_main_content'?" in message
    assert "crawler.options.max_concurrency: " in message
    assert firecrawl.site.requests == []


def test_refused_key_and_failed_pages_end_in_clear_errors_without_collection(make_app, firecrawl, monkeypatch):
    monkeypatch.setenv("TEST_FIRECRAWL_KEY", "wrong")
    app = make_app(settings(firecrawl))
    with pytest.raises(IngestError) as err:
        app.load(["https://birds.example/"], "birds")
    assert "0 documents fetched from URL https://birds.example/: Firecrawl at" in str(err.value)
    assert "refused the API key" in str(err.value) and "TEST_FIRECRAWL_KEY" in str(err.value)

    monkeypatch.setenv("TEST_FIRECRAWL_KEY", "fc-test")
    with pytest.raises(IngestError, match="0 documents fetched from URL https://unsupported.example/: Firecrawl: "
                                          "Website Not Supported"):
        app.load(["https://unsupported.example/"], "birds")
    app = make_app(settings(firecrawl, max_depth=0), db="other.db")
    with pytest.raises(IngestError, match="0 documents fetched from URL https://missing.example/: HTTP 404 Not Found"):
        app.load(["https://missing.example/"], "birds")
    assert app.store.list_collections() == []


def test_unreachable_firecrawl_is_a_provider_error(make_app):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = make_app({"crawler": {"provider": "firecrawl", "api_url": f"http://127.0.0.1:{port}", "max_depth": 0}})
    with pytest.raises(IngestError, match=f"cannot reach Firecrawl at http://127.0.0.1:{port}"):
        app.load(["https://birds.example/"], "birds")
    assert app.store.list_collections() == []
