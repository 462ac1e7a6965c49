"""Web search providers against a real HTTP server on 127.0.0.1 that answers in each provider's documented format.

The fake service (``tests/integration/http_site.py``) records every request, so the tests assert on what was sent
(method, path, query parameters or JSON body, the key header) as well as on the parsed results. Sample replies live in
``tests/fixtures/websearch/<provider>.json``, modelled on each provider's documentation (cited in the file and in the
provider module's docstring), together with the results we must get from them (the right values, written by hand).
The live services are not contacted.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from deepsearcher.errors import ProviderError
from deepsearcher.registry import registry
from deepsearcher.websearch import PROVIDERS, WebResult, WebSearch
from deepsearcher.websearch.http_provider import HttpWebSearch
from tests.integration.http_site import Request, Route, Site, json_route

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "websearch"
KEY = "test-key-1234"


@dataclass(frozen=True)
class Case:
    """How one provider is called and how its service answers (paths, key placement, error bodies)."""

    provider: str
    prefix: str  # base_url path on the fake service
    path: str  # request path below base_url
    method: str
    env: str | None  # the default api_key_env (None: no key)
    error_body: Callable[[int, str], Any]  # the documented error body for a status and message
    wrong_shape: Any  # valid JSON, not the documented shape
    shape_problem: str  # what the error message must name about wrong_shape

    @property
    def route(self) -> str:
        return self.prefix + self.path

    def fixture(self) -> dict[str, Any]:
        return json.loads((FIXTURES / f"{self.provider}.json").read_text(encoding="utf-8"))


CASES = [
    Case("searxng", "", "/search", "GET", None,
         lambda status, msg: msg, {"results": {"title": "not a list"}}, "results"),
    Case("brave", "/res/v1", "/web/search", "GET", "BRAVE_SEARCH_API_KEY",
         lambda status, msg: {"type": "ErrorResponse", "error": {"id": "e1", "status": status, "code": "ERROR",
                                                                 "detail": msg, "meta": {}}, "time": 1754364294},
         {"type": "search", "web": {"results": "none"}}, "web.results"),
    Case("tavily", "", "/search", "POST", "TAVILY_API_KEY",
         lambda status, msg: {"detail": {"error": msg}}, {"query": "q", "results": None}, "results"),
    Case("jina", "", "/", "GET", "JINA_API_KEY",
         lambda status, msg: {"data": None, "code": status, "name": "Error", "status": status * 100,
                              "message": msg, "readableMessage": msg},
         {"code": 200, "status": 20000, "data": {"title": "one object, not a list"}}, "data"),
]
IDS = [c.provider for c in CASES]


class FakeService:
    """A Site whose one search route plays ``script`` (one Route per request; the last one repeats).

    One per provider and test module (stopping a server takes up to half a second); ``reset`` clears it per test.
    """

    def __init__(self, case: Case) -> None:
        self.case = case
        self.script: list[Route] = []
        self.providers: list[HttpWebSearch] = []
        self.site = Site({case.route: Route(handler=self._answer)})

    def _answer(self, req: Request) -> Route:
        index = min(len(self.site.requests), len(self.script)) - 1
        route = self.script[index]
        return route.handler(req) if route.handler else route

    def play(self, *routes: Route) -> None:
        self.script = list(routes)

    @property
    def base_url(self) -> str:
        return self.site.url(self.case.prefix)

    def requests(self) -> list[Request]:
        return list(self.site.requests)

    def build(self, base_url: str | None = None, **options: Any) -> HttpWebSearch:
        provider = build(self.case, base_url or self.base_url, **options)
        self.providers.append(provider)
        return provider

    def reset(self) -> None:
        for provider in self.providers:
            provider.close()
        self.providers.clear()
        self.site.requests.clear()
        self.script = []


@pytest.fixture(scope="module")
def services() -> Iterator[dict[str, FakeService]]:
    fakes = {c.provider: FakeService(c) for c in CASES}
    yield fakes
    for fake in fakes.values():
        fake.site.close()


@pytest.fixture(params=CASES, ids=IDS)
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


@pytest.fixture
def service(case: Case, services: dict[str, FakeService], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeService]:
    for other in CASES:
        if other.env:
            monkeypatch.delenv(other.env, raising=False)
    if case.env:
        monkeypatch.setenv(case.env, KEY)
    fake = services[case.provider]
    yield fake
    fake.reset()


def build(case: Case, base_url: str, **options: Any) -> HttpWebSearch:
    """The provider named by ``case``, built by the registry from its options model, with fast retries."""
    entry = registry.get("web_search", case.provider)
    options_model = entry.options_model()
    assert options_model is PROVIDERS[case.provider][1]
    settings = {"base_url": base_url, "retry_backoff_s": 0.01, "timeout_s": 2, **options}
    provider = entry.create(options_model(**settings))
    assert isinstance(provider, WebSearch) and isinstance(provider, HttpWebSearch)
    return provider


def ok(case: Case) -> Route:
    return json_route(case.fixture()["response"])


def error(case: Case, status: int, msg: str, headers: dict[str, str] | None = None) -> Route:
    body = case.error_body(status, msg)
    if isinstance(body, str):
        route = Route(body.encode(), status, {"Content-Type": "text/plain"})
    else:
        route = json_route(body, status)
    route.headers.update(headers or {})
    return route


def headers_of(req: Request) -> dict[str, str]:
    return {k.lower(): v for k, v in req.headers.items()}


def sent_params(req: Request) -> dict[str, Any]:
    """What the provider sent besides headers: the query string (GET) or the JSON body (POST)."""
    if req.method == "POST":
        return req.json()
    return {k: v[0] if len(v) == 1 else v for k, v in parse_qs(urlsplit(req.path).query).items()}


def as_rows(results: list[WebResult]) -> list[list[Any]]:
    return [[r.title, r.url, r.snippet, r.published] for r in results]


# --- the documented request and reply -------------------------------------------------------------------------------
EXPECTED_REQUEST = {
    "searxng": {"q": "mallard duck", "format": "json"},
    "brave": {"q": "mallard duck", "count": "10"},
    "tavily": {"query": "mallard duck", "max_results": 10, "search_depth": "basic", "topic": "general",
               "include_answer": False, "include_raw_content": False, "include_images": False},
    "jina": {"q": "mallard duck", "num": "10"},
}


def test_sends_the_documented_request_and_parses_the_reply(case: Case, service: FakeService) -> None:
    fixture = case.fixture()
    service.play(ok(case))
    results = service.build().search("  mallard \n duck ")

    [req] = service.requests()
    assert req.method == case.method
    assert urlsplit(req.path).path == case.route
    assert sent_params(req) == EXPECTED_REQUEST[case.provider]
    headers = headers_of(req)
    assert headers["accept"] == "application/json"
    if case.provider == "brave":
        assert headers["x-subscription-token"] == KEY
        assert "authorization" not in headers
    elif case.provider in ("tavily", "jina"):
        assert headers["authorization"] == f"Bearer {KEY}"
        assert KEY not in req.body.decode()
    else:
        assert "authorization" not in headers and KEY not in req.path
    if case.provider == "jina":
        assert headers["x-respond-with"] == "no-content"

    assert as_rows(results) == fixture["expected"]
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
    assert {r.provider for r in results} == {case.provider}


PROVIDER_OPTIONS = {
    "searxng": ({"categories": ["general", "news"], "engines": ["wikipedia"], "language": "de", "time_range": "year",
                 "safesearch": 2},
                {"categories": "general,news", "engines": "wikipedia", "language": "de", "time_range": "year",
                 "safesearch": "2"}),
    "brave": ({"country": "DE", "search_lang": "de", "safesearch": "strict", "freshness": "pw"},
              {"country": "DE", "search_lang": "de", "safesearch": "strict", "freshness": "pw"}),
    "tavily": ({"search_depth": "advanced", "topic": "news", "time_range": "week", "include_domains": ["a.org"],
                "exclude_domains": ["b.org"]},
               {"search_depth": "advanced", "topic": "news", "time_range": "week", "include_domains": ["a.org"],
                "exclude_domains": ["b.org"]}),
    "jina": ({"gl": "de", "hl": "de"}, {"gl": "de", "hl": "de"}),
}


def test_provider_options_reach_the_request(case: Case, service: FakeService) -> None:
    options, expected = PROVIDER_OPTIONS[case.provider]
    service.play(ok(case))
    service.build(**options).search("mallard duck")
    sent = sent_params(service.requests()[0])
    assert {k: sent.get(k) for k in expected} == expected


def test_results_are_capped_at_max_results(case: Case, service: FakeService) -> None:
    service.play(ok(case))
    results = service.build().search("mallard duck", max_results=1)
    assert as_rows(results) == case.fixture()["expected"][:1]
    sent = sent_params(service.requests()[0])
    count_param = {"brave": "count", "tavily": "max_results", "jina": "num"}.get(case.provider)
    if count_param:
        assert str(sent[count_param]) == "1"


def test_blank_query_sends_nothing(case: Case, service: FakeService) -> None:
    assert service.build().search(" \n ") == []
    assert service.requests() == []


# --- keys ----------------------------------------------------------------------------------------------------------
def test_missing_key_fails_before_anything_is_sent(case: Case, service: FakeService,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    env = case.env or "SEARXNG_TOKEN"
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(ProviderError) as info:
        service.build(api_key_env=env).search("mallard duck")
    assert env in str(info.value) and "not set" in str(info.value)
    assert service.requests() == []


def test_refused_key_names_the_variable_and_is_not_retried(case: Case, service: FakeService,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    env = case.env or "SEARXNG_TOKEN"
    monkeypatch.setenv(env, KEY)
    service.play(error(case, 401, "Unauthorized: missing or invalid API key"))
    with pytest.raises(ProviderError) as info:
        service.build(api_key_env=env).search("mallard duck")
    message = str(info.value)
    assert "HTTP 401" in message and f"${env}" in message and f"set {env}" in message
    assert len(service.requests()) == 1


# --- retries -------------------------------------------------------------------------------------------------------
@pytest.fixture
def naps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries on this thread, recorded instead of slept (tenacity sleeps with time.sleep);
    other threads (the fake services) sleep as usual."""
    real_sleep, caller, waits = time.sleep, threading.get_ident(), []

    def sleep(seconds: float) -> None:
        if threading.get_ident() == caller:
            waits.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return waits


def test_rate_limit_then_success_honours_retry_after(case: Case, service: FakeService, naps: list[float]) -> None:
    service.play(error(case, 429, "Too many requests", {"Retry-After": "1"}), ok(case))
    results = service.build(max_retries=2).search("mallard duck")
    assert naps == [1]  # the service asked for 1 s; backoff alone would wait ~0.01 s
    assert as_rows(results) == case.fixture()["expected"]
    assert len(service.requests()) == 2


def test_rate_limit_forever_says_rate_limited(case: Case, service: FakeService) -> None:
    service.play(error(case, 429, "Your request has been blocked due to excessive requests.", {"Retry-After": "0"}))
    with pytest.raises(ProviderError) as info:
        service.build(max_retries=2).search("mallard duck")
    message = str(info.value)
    assert "rate-limited" in message and "3 attempts" in message and "excessive requests" in message
    assert "hint:" in message
    assert len(service.requests()) == 3


def test_retry_after_beyond_the_cap_stops_at_once(case: Case, service: FakeService, naps: list[float]) -> None:
    service.play(error(case, 429, "slow down", {"Retry-After": "600"}))
    with pytest.raises(ProviderError) as info:
        service.build(max_retries=3, max_retry_wait_s=5).search("mallard duck")
    assert naps == []  # no wait at all, not even the 5 s cap
    assert "asks to wait about 10 minutes" in str(info.value) and "max_retry_wait_s" in str(info.value)
    assert len(service.requests()) == 1


def test_server_error_is_retried(case: Case, service: FakeService) -> None:
    service.play(error(case, 503, "upstream unavailable"), ok(case))
    results = service.build(max_retries=1).search("mallard duck")
    assert len(results) == len(case.fixture()["expected"])
    assert len(service.requests()) == 2


def test_server_error_after_retries(case: Case, service: FakeService) -> None:
    service.play(error(case, 500, "internal error"))
    with pytest.raises(ProviderError) as info:
        service.build(max_retries=1).search("mallard duck")
    assert "HTTP 500 (2 attempts)" in str(info.value) and "internal error" in str(info.value)


def test_timeout_names_timeout_s(case: Case, service: FakeService) -> None:
    answer = threading.Event()

    def slow(req: Request) -> Route:
        answer.wait(60)  # no reply until the provider has given up: it can only end by its timeout
        return ok(case)

    service.play(Route(handler=slow))
    try:
        with pytest.raises(ProviderError) as info:
            service.build(timeout_s=0.25, max_retries=1).search("mallard duck")
    finally:
        answer.set()
    message = str(info.value)
    assert "did not answer within timeout_s = 0.25 s (2 attempts)" in message and "web_search.timeout_s" in message
    assert len(service.requests()) == 2


# --- replies that are not the documented JSON ------------------------------------------------------------------------
def test_malformed_json_names_the_provider(case: Case, service: FakeService) -> None:
    service.play(Route(b'{"results": [{"title": "cut', 200, {"Content-Type": "application/json"}))
    provider = service.build()
    with pytest.raises(ProviderError) as info:
        provider.search("mallard duck")
    message = str(info.value)
    assert provider.label in message and "not JSON" in message and "base_url" in message


def test_html_page_instead_of_json(case: Case, service: FakeService) -> None:
    service.play(Route(b"<!doctype html><html><body>Login</body></html>", 200, {"Content-Type": "text/html"}))
    with pytest.raises(ProviderError) as info:
        service.build().search("mallard duck")
    assert "not JSON (text/html" in str(info.value)


def test_wrong_shape_names_what_was_wrong(case: Case, service: FakeService) -> None:
    service.play(json_route(case.wrong_shape))
    provider = service.build()
    with pytest.raises(ProviderError) as info:
        provider.search("mallard duck")
    message = str(info.value)
    assert provider.label in message and "unexpected shape" in message and case.shape_problem in message


def test_connection_refused_names_the_base_url(case: Case, service: FakeService) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}{case.prefix}"
    with pytest.raises(ProviderError) as info:
        service.build(base_url, max_retries=3).search("mallard duck")
    message = str(info.value)
    assert "cannot connect to" in message and base_url in message and "hint:" in message


# --- statuses and headers only one provider documents ---------------------------------------------------------------
def case_of(provider: str) -> Case:
    return next(c for c in CASES if c.provider == provider)


@pytest.fixture
def searxng(services: dict[str, FakeService], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeService]:
    fake = services["searxng"]
    yield fake
    fake.reset()


@pytest.fixture
def brave(services: dict[str, FakeService], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeService]:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", KEY)
    fake = services["brave"]
    yield fake
    fake.reset()


@pytest.fixture
def tavily(services: dict[str, FakeService], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeService]:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    fake = services["tavily"]
    yield fake
    fake.reset()


@pytest.fixture
def jina(services: dict[str, FakeService], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeService]:
    monkeypatch.setenv("JINA_API_KEY", KEY)
    fake = services["jina"]
    yield fake
    fake.reset()


def test_searxng_403_says_to_enable_json(searxng: FakeService) -> None:
    searxng.play(Route(b"<html><body>403 Forbidden</body></html>", 403, {"Content-Type": "text/html"}))
    with pytest.raises(ProviderError) as info:
        searxng.build().search("mallard duck")
    message = str(info.value)
    assert "refused format=json (HTTP 403)" in message and "search.formats" in message and "settings.yml" in message


def test_searxng_not_running_points_at_the_setup(searxng: FakeService) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError) as info:
        searxng.build(f"http://127.0.0.1:{port}").search("mallard duck")
    assert f"SearXNG at http://127.0.0.1:{port}" in str(info.value) and "docker" in str(info.value)


def test_brave_invalid_token_is_a_key_error(brave: FakeService) -> None:
    body = {"type": "ErrorResponse", "error": {"id": "e2", "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID",
                                               "detail": "The provided subscription token is invalid.", "meta": {}},
            "time": 1754364294}
    brave.play(json_route(body, 422))
    with pytest.raises(ProviderError) as info:
        brave.build().search("mallard duck")
    message = str(info.value)
    assert "$BRAVE_SEARCH_API_KEY (HTTP 422)" in message and "subscription token is invalid" in message
    assert len(brave.requests()) == 1


def test_brave_other_422_is_a_request_error(brave: FakeService) -> None:
    body = {"type": "ErrorResponse", "error": {"id": "e3", "status": 422, "code": "VALIDATION",
                                               "detail": "Unable to validate request parameter(s)", "meta": {}}}
    brave.play(json_route(body, 422))
    with pytest.raises(ProviderError) as info:
        brave.build(country="ZZ").search("mallard duck")  # rejected with the country, and again without it
    assert "rejected the search request (HTTP 422): Unable to validate" in str(info.value)
    assert ["country=ZZ" in r.path for r in brave.requests()] == [True, False]


def test_a_rejected_optional_parameter_is_dropped_once_and_the_search_goes_on(brave: FakeService) -> None:
    body = {"type": "ErrorResponse", "error": {"id": "e4", "status": 422, "code": "VALIDATION",
                                               "detail": "Unable to validate request parameter(s)", "meta": {}}}
    brave.play(json_route(body, 422), ok(brave.case))
    # a value the documentation lists (config check passes it) that the service rejects anyway: lists change
    provider = brave.build(search_lang="th", country="DE")
    results = provider.search("mallard duck")
    assert len(results) == 2
    assert provider.degraded == ["searched without web_search.country='DE', web_search.search_lang='th' (the "
                                 "service rejected the request: Brave Search at " + brave.base_url +
                                 " rejected the search request (HTTP 422): Unable to validate request "
                                 "parameter(s))"]
    first, second = brave.requests()
    assert "search_lang=th" in first.path and "country=DE" in first.path
    assert "search_lang" not in second.path and "country" not in second.path
    provider.search("mallard duck")  # later searches go without them, no second rejection
    assert len(brave.requests()) == 3 and provider.degraded == []


def test_a_rejected_request_without_optional_parameters_is_not_retried(brave: FakeService) -> None:
    brave.play(json_route({"type": "ErrorResponse", "error": {"status": 422, "detail": "bad query"}}, 422))
    with pytest.raises(ProviderError):
        brave.build().search("mallard duck")
    assert len(brave.requests()) == 1


def test_brave_waits_for_the_exhausted_rate_limit_window(brave: FakeService, naps: list[float]) -> None:
    limited = error(brave.case, 429, "Request rate limit exceeded",
                    {"X-RateLimit-Limit": "1, 15000", "X-RateLimit-Remaining": "0, 1000",
                     "X-RateLimit-Reset": "1, 1419704"})
    brave.play(limited, ok(brave.case))
    results = brave.build().search("mallard duck")
    assert naps == [1] and len(results) == 2  # the window resets in 1 s


def test_brave_monthly_quota_used_up_stops_at_once(brave: FakeService) -> None:
    brave.play(error(brave.case, 429, "Request rate limit exceeded",
                     {"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704"}))
    with pytest.raises(ProviderError) as info:
        brave.build(max_retries=3).search("mallard duck")
    message = str(info.value)  # a wait of weeks is a quota, in days, with no hint to raise a wait setting
    assert "says the search quota is used up (HTTP 429); it resets in about 16.4 days" in message
    assert "max_retry_wait_s" not in message
    assert len(brave.requests()) == 1


def test_brave_reply_without_web_results_is_empty(brave: FakeService) -> None:
    brave.play(json_route({"type": "search", "query": {"original": "zzqx", "more_results_available": False}}))
    assert brave.build().search("zzqx") == []


def test_brave_refuses_a_query_over_its_documented_limit_before_sending(brave: FakeService) -> None:
    with pytest.raises(ProviderError) as info:
        brave.build().search(" ".join(["duck"] * 51))
    assert "51 words" in str(info.value) and "50 words" in str(info.value)
    assert brave.requests() == []


def test_tavily_plan_limit_is_not_retried(tavily: FakeService) -> None:
    tavily.play(error(tavily.case, 432, "This request exceeds your plan's set usage limit."))
    with pytest.raises(ProviderError) as info:
        tavily.build(max_retries=3).search("mallard duck")
    message = str(info.value)
    assert "usage limit is used up (HTTP 432)" in message and "Tavily dashboard" in message
    assert len(tavily.requests()) == 1


def test_jina_balance_used_up(jina: FakeService) -> None:
    jina.play(error(jina.case, 402, "Account balance not enough to run this query, please recharge."))
    with pytest.raises(ProviderError) as info:
        jina.build().search("mallard duck")
    assert "balance is used up (HTTP 402)" in str(info.value) and "$JINA_API_KEY" in str(info.value)


def test_jina_no_results_error_means_no_results(jina: FakeService) -> None:
    jina.play(error(jina.case, 422, "No search results available for query zzqx"))
    assert jina.build().search("zzqx") == []


def test_jina_with_content_asks_for_pages_and_keeps_the_description(jina: FakeService) -> None:
    reply = {"code": 200, "status": 20000, "data": [
        {"title": "Mallard", "url": "https://en.wikipedia.org/wiki/Mallard", "description": "",
         "content": "# Mallard\n\nThe mallard is a dabbling duck. " * 40},
        {"title": "Audubon", "url": "https://www.audubon.org/field-guide/bird/mallard",
         "description": "Field guide entry.", "content": "Long page text."}]}
    jina.play(json_route(reply))
    results = jina.build(with_content=True).search("mallard duck")
    assert "x-respond-with" not in headers_of(jina.requests()[0])
    assert results[0].snippet.startswith("# Mallard The mallard is a dabbling duck.") and len(results[0].snippet) <= 500
    assert results[1].snippet == "Field guide entry."


def test_a_reply_over_max_reply_mb_is_refused_not_read_whole(case: Case, service: FakeService) -> None:
    """Issue #21 (low): a service that sends megabytes (broken or hostile) ends the search with an error naming the
    setting; the reply is read only up to the cap."""
    huge = json.dumps({"padding": "x" * 2_100_000}).encode()
    service.play(Route(huge, 200, {"Content-Type": "application/json"}))
    with pytest.raises(ProviderError) as info:
        service.build(max_reply_mb=2, max_retries=0).search("mallard duck")
    assert "sent a reply larger than 2 MB" in str(info.value) and "web_search.max_reply_mb" in str(info.value)
