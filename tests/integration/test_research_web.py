"""DeepResearch with web search at query time (issue #12), against real things: a fake search service on 127.0.0.1
answering in each provider's documented format, result pages served by a local HTTP site (read through the real
crawler, with its robots.txt), Milvus Lite and the bundled embedder. The model is scripted; the scripts read item
numbers from the prompts, so they answer whatever order retrieval gives.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.integration.http_site import Request, Route, Site, html, json_route

pytestmark = pytest.mark.integration

Q = "Where do mallard ducks live and what do they eat?"
CHECKS = json.dumps({"definitive": True, "freshness": False, "plurality": False, "completeness": False,
                     "attribution": True})
PASS = json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
MALLARD = ("Mallards live on ponds, lakes and rivers across the northern hemisphere. They dabble for water plants, "
           "seeds and insects, and they often visit city parks in winter.")
NOTES = ("Milvus Lite keeps a whole vector database in one local file.\n\n"
         "Dabbling ducks feed at the water surface; the notes do not say which ducks live where.")

#: provider -> (base_url path, request path, method, the documented reply for these results, key variable)
FORMATS: dict[str, tuple[str, str, str, Callable[[list[dict[str, str]]], Any], str | None]] = {
    "searxng": ("", "/search", "GET", lambda rs: {"query": "q", "results": [
        {"url": r["url"], "title": r["title"], "content": r["snippet"], "engine": "wikipedia"} for r in rs]}, None),
    "brave": ("/res/v1", "/web/search", "GET", lambda rs: {"type": "search", "web": {"type": "search", "results": [
        {"url": r["url"], "title": r["title"], "description": r["snippet"]} for r in rs]}}, "BRAVE_SEARCH_API_KEY"),
    "tavily": ("", "/search", "POST", lambda rs: {"query": "q", "results": [
        {"url": r["url"], "title": r["title"], "content": r["snippet"], "score": 0.9} for r in rs]},
               "TAVILY_API_KEY"),
    "jina": ("", "/", "GET", lambda rs: {"code": 200, "status": 20000, "data": [
        {"url": r["url"], "title": r["title"], "description": r["snippet"]} for r in rs]}, "JINA_API_KEY"),
}


@pytest.fixture(scope="module")
def pages() -> Iterator[Site]:
    site = Site({
        "/robots.txt": Route(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}),
        "/mallard": html("Mallard", f"<article><h1>Mallard</h1><p>{MALLARD}</p></article>"),
        "/private/ducks": html("Private", "<p>Secret duck facts that robots.txt keeps out.</p>"),
    })
    yield site
    site.close()


def results_for(pages: Site) -> list[dict[str, str]]:
    return [{"url": pages.url("/mallard"), "title": "Mallard - Wikipedia", "snippet": "The mallard is a dabbling duck."},
            {"url": pages.url("/private/ducks"), "title": "Duck secrets", "snippet": "Private facts about ducks."}]


class SearchService:
    """A Site answering on one provider's route; ``reply`` builds each response."""

    def __init__(self, provider: str, reply: Callable[[Request], Route]) -> None:
        prefix, path, _, _, _ = FORMATS[provider]
        self.site = Site({prefix + path: Route(handler=reply)})
        self.base_url = self.site.url(prefix).rstrip("/")

    def queries(self) -> list[str]:
        out = []
        for req in self.site.requests:
            if req.method == "POST":
                out.append(req.json()["query"])
            else:
                out.append(re.search(r"[?&]q=([^&]*)", req.path).group(1).replace("+", " "))  # type: ignore[union-attr]
        return out


@pytest.fixture
def service_for(pages: Site, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., SearchService]]:
    made: list[SearchService] = []

    def make(provider: str, reply: Callable[[Request], Route] | None = None) -> SearchService:
        env = FORMATS[provider][4]
        if env:
            monkeypatch.setenv(env, "test-key")
        body = FORMATS[provider][3](results_for(pages))
        made.append(SearchService(provider, reply or (lambda req: json_route(body))))
        return made[-1]

    yield make
    for service in made:
        service.site.close()


def number_for(prompt: str, needle: str) -> int:
    """The ``[n]`` of the first knowledge item whose heading line contains ``needle``."""
    for line in prompt.splitlines():
        match = re.match(r"\[(\d+)\] ", line)
        if match and needle in line:
            return int(match.group(1))
    raise AssertionError(f"no item for {needle!r} in:\n{prompt}")


def research_app(make_app: Callable[..., Any], tmp_path: Path, provider: str, base_url: str, llm: Any,
                 **web: Any) -> Any:
    """A DeepSearcher on Milvus Lite with a "notes" collection, ``web_search`` at ``base_url`` and ``llm``."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    loader = make_app()
    loader.load([str(notes)], "notes", "Field notes about ducks and databases")
    options = {"provider": provider, "base_url": base_url, "retry_backoff_s": 0.01, "timeout_s": 2, **web}
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
                                    "web_search": options,
                                    # the result pages are on 127.0.0.1: reading them needs the operator's opt-in
                                    "query": {"top_k": 2, "read_private_result_urls": True}})
    return DeepSearcher(settings, embedder=loader.embedder, store=loader.store, llm=llm)


def read_then_answer(pages: Site) -> list[Any]:
    """search the web and the notes, read the mallard page, answer citing a passage of it."""
    mallard = pages.url("/mallard")

    def read(messages: Any) -> str:
        return json.dumps({"action": "read", "items": [number_for(messages[-1]["content"], f"({mallard})")]})

    def answer(messages: Any) -> str:
        prompt = messages[-1]["content"]
        # a passage of the page: "[n] title (url)" or, with its heading path, "[n] title (url › Habitat)"
        passage = next(line for line in prompt.splitlines() if line.startswith("[") and f"({mallard}" in line
                       and "Mallard - Wikipedia" not in line)
        n = passage[1:].split("]")[0]
        return json.dumps({"action": "answer", "answer": f"Mallards live on ponds and lakes and eat plants [{n}]."})

    return [json.dumps({"action": "search", "queries": ["mallard duck habitat"]}), read, answer, CHECKS, PASS]


@pytest.mark.parametrize("provider", list(FORMATS))
def test_web_results_are_read_through_the_crawler_and_cited_by_url(provider: str, pages: Site, service_for: Any,
                                                                   make_app: Any, tmp_path: Path) -> None:
    service = service_for(provider)
    before = pages.paths().count("/mallard")
    llm = ScriptedChatModel(read_then_answer(pages))
    app = research_app(make_app, tmp_path, provider, service.base_url, llm)
    events: list[Event] = []
    report = app.query(Q, agent="deep_research", on_event=events.append)

    assert service.queries() == ["mallard duck habitat"]  # only the search expression went to the provider
    assert events[0].data["web"] == provider
    web = [e.data for e in events if e.kind == "query.web_search"]
    assert web == [{"query": "mallard duck habitat", "provider": provider, "results": 2,
                    "urls": [pages.url("/mallard"), pages.url("/private/ducks")], "new": 2, "error": "",
                    "outcome": "ok", "degraded": []}]
    assert [(w.query, w.outcome, w.results) for w in report.web_searches] == [("mallard duck habitat", "ok", 2)]
    assert "**Web search.**" not in report_markdown(report)  # clean: no note
    assert "Mallard - Wikipedia" in llm.prompts[1] and "The mallard is a dabbling duck." in llm.prompts[1]
    read = next(e.data for e in events if e.kind == "query.read")
    assert read["opened"] == [pages.url("/mallard")] and read["added"] >= 1 and read["failed"] == []
    cited = report.sources[0]
    assert cited.collection == "web" and cited.chunk.source == pages.url("/mallard")
    assert "dabble for water plants" in cited.chunk.text and cited.chunk.title == "Mallard"
    assert report.answer.startswith("Mallards live on ponds and lakes and eat plants [1].")
    assert f"## Sources\n\n- {pages.url('/mallard')} — Mallard: [1]" in report_markdown(report)
    assert pages.paths().count("/mallard") == before + 1


def test_robots_txt_of_a_result_page_is_obeyed(pages: Site, service_for: Any, make_app: Any, tmp_path: Path) -> None:
    service = service_for("searxng")
    private = pages.url("/private/ducks")
    llm = ScriptedChatModel([
        json.dumps({"action": "search", "queries": ["duck secrets"]}),
        lambda m: json.dumps({"action": "read", "items": [number_for(m[-1]["content"], f"({private})")]}),
        lambda m: json.dumps({"action": "answer", "answer": f"Ducks dabble [{number_for(m[-1]['content'], 'notes')}]."}),
        CHECKS, PASS,
    ])
    events: list[Event] = []
    app = research_app(make_app, tmp_path, "searxng", service.base_url, llm)
    report = app.query(Q, agent="deep_research", on_event=events.append)
    read = next(e.data for e in events if e.kind == "query.read")
    assert read["failed"] == [f"{private}: blocked by robots.txt"] and read["added"] == 0
    assert "/private/ducks" not in pages.paths()
    assert "but found nothing new (" in llm.prompts[2] and "blocked by robots.txt" in llm.prompts[2]
    assert report.sources[0].collection == "notes"


#: never set: a slow reply comes only after the caller's timeout has ended its wait (60 s only if it never does)
_NO_ANSWER_YET = threading.Event()


def _slow(body: Any) -> Callable[[Request], Route]:
    def reply(req: Request) -> Route:
        _NO_ANSWER_YET.wait(60)
        return json_route(body)

    return reply


ERRORS = {
    "401": ("brave", lambda pages: (lambda req: json_route({"type": "ErrorResponse", "error": {
        "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid."
    }}, 401)), "refused the API key from $BRAVE_SEARCH_API_KEY (HTTP 401)"),
    "429": ("tavily", lambda pages: (lambda req: Route(b'{"detail": {"error": "Too many requests"}}', 429, {
        "Content-Type": "application/json", "Retry-After": "3600"})), "rate-limited the search (HTTP 429)"),
    "timeout": ("jina", lambda pages: _slow({"code": 200, "status": 20000, "data": []}),
                "did not answer within timeout_s = 0.5 s"),
    "malformed JSON": ("searxng", lambda pages: (lambda req: Route(b"<html>Search</html>", 200, {
        "Content-Type": "text/html"})), "answered with something that is not JSON"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_a_provider_error_is_a_clear_message_and_the_run_continues_on_the_collections(
        case: str, pages: Site, service_for: Any, make_app: Any, tmp_path: Path) -> None:
    provider, reply, expected = ERRORS[case]
    service = service_for(provider, reply(pages))
    llm = ScriptedChatModel([
        json.dumps({"action": "search", "queries": ["mallard duck habitat"]}),
        json.dumps({"action": "search", "queries": ["dabbling ducks feeding"]}),
        lambda m: json.dumps({"action": "answer", "answer": f"Ducks dabble [{number_for(m[-1]['content'], 'notes')}]."}),
        CHECKS, PASS,
    ])
    events: list[Event] = []
    app = research_app(make_app, tmp_path, provider, service.base_url, llm, timeout_s=0.5, max_retries=1,
                       max_retry_wait_s=5)
    report = app.query(Q, agent="deep_research", on_event=events.append)

    web = [e.data for e in events if e.kind == "query.web_search"]
    assert len(web) == 2 and expected in web[0]["error"] and "hint:" in web[0]["error"]
    assert web[1]["outcome"] == "not_sent" and web[1]["error"] == ""  # the second query: web search was off
    fallback = next(e.data for e in events if e.kind == "query.fallback")
    assert fallback["step"] == "web_search" and fallback["fallback"] == \
        "searching the collections only for the rest of this query"
    assert len(service.queries()) <= 2 and set(service.queries()) == {"mallard duck habitat"}  # web off afterwards
    assert report.sources and report.sources[0].collection == "notes"
    assert "Ducks dabble [1]." in report.answer
    outcomes = [(w.query, w.outcome) for w in report.web_searches]  # the saved report and --json say it too
    assert outcomes == [("mallard duck habitat", "failed"), ("dabbling ducks feeding", "not_sent")]
    assert expected in report.web_searches[0].detail
    note = report_markdown(report).split("**Web search.** Not every web search went through:\n", 1)[1]
    assert note.startswith(f"- mallard duck habitat ({provider}): failed: ")
    assert f"- dabbling ducks feeding ({provider}): not sent: web search was off after an earlier failure" in note


def test_searxng_engines_that_did_not_answer_and_zero_results_are_reported(
        pages: Site, service_for: Any, make_app: Any, tmp_path: Path) -> None:
    def reply(req: Request) -> Route:
        if "ducks" in req.path:
            return json_route({"query": "q", "results": [], "unresponsive_engines": []})
        return json_route({"query": "q", "results": results_for(pages)[:1],
                           "unresponsive_engines": [["google", "CAPTCHA"], ["duckduckgo", "timeout"]]})

    service = service_for("searxng", reply)
    llm = ScriptedChatModel([
        json.dumps({"action": "search", "queries": ["mallard habitat"]}),
        json.dumps({"action": "search", "queries": ["ducks feeding at night"]}),
        lambda m: json.dumps({"action": "answer", "answer": f"Ducks dabble [{number_for(m[-1]['content'], 'notes')}]."}),
        CHECKS, PASS,
    ])
    events: list[Event] = []
    app = research_app(make_app, tmp_path, "searxng", service.base_url, llm)
    report = app.query(Q, agent="deep_research", on_event=events.append)
    web = [e for e in events if e.kind == "query.web_search"]
    assert [(e.data["outcome"], e.data["degraded"]) for e in web] == [
        ("degraded", ["google: CAPTCHA", "duckduckgo: timeout"]), ("no_results", [])]
    assert "degraded, no answer from: google: CAPTCHA, duckduckgo: timeout" in web[0].describe()[0]
    data = report.to_dict()["web_searches"]
    assert data == [
        {"query": "mallard habitat", "provider": "searxng", "outcome": "degraded", "results": 1,
         "detail": "google: CAPTCHA; duckduckgo: timeout"},
        {"query": "ducks feeding at night", "provider": "searxng", "outcome": "no_results", "results": 0,
         "detail": ""}]
    text = report_markdown(report)
    assert ("**Web search.** Not every web search went through:\n- mallard habitat (searxng): degraded: google: "
            "CAPTCHA; duckduckgo: timeout\n- ducks feeding at night (searxng): 0 results") in text


def test_save_to_stores_the_pages_read_without_fetching_them_again(pages: Site, service_for: Any, make_app: Any,
                                                                   tmp_path: Path) -> None:
    service = service_for("searxng")
    before = pages.paths().count("/mallard")
    llm = ScriptedChatModel(read_then_answer(pages))
    app = research_app(make_app, tmp_path, "searxng", service.base_url, llm)
    events: list[Event] = []
    app.query(Q, agent="deep_research", on_event=events.append, save_to="web_pages")
    saved = next(e.data for e in events if e.kind == "query.saved")
    assert saved["collection"] == "web_pages" and saved["pages"] == 1 and saved["chunks"] >= 1 and not saved["error"]
    assert pages.paths().count("/mallard") == before + 1  # read once, stored from the same fetch
    hits = app.retrieve("where do mallards live", collections=["web_pages"])
    assert hits[0].chunk.source == pages.url("/mallard") and "ponds, lakes and rivers" in hits[0].chunk.text


def test_nothing_is_sent_with_no_web(pages: Site, service_for: Any, make_app: Any, tmp_path: Path) -> None:
    service = service_for("searxng")
    llm = ScriptedChatModel([
        json.dumps({"action": "search", "queries": ["mallard duck habitat"]}),
        lambda m: json.dumps({"action": "answer", "answer": f"Ducks dabble [{number_for(m[-1]['content'], 'notes')}]."}),
        CHECKS, PASS,
    ])
    events: list[Event] = []
    app = research_app(make_app, tmp_path, "searxng", service.base_url, llm)
    app.query(Q, agent="deep_research", web=False, on_event=events.append)
    assert service.site.requests == [] and events[0].data["web"] is None
    assert "the web (" not in llm.prompts[0]


def test_cli_says_when_a_query_goes_to_the_web(pages: Site, service_for: Any, make_app: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    service = service_for("searxng")
    app = research_app(make_app, tmp_path, "searxng", service.base_url, ScriptedChatModel(read_then_answer(pages)))
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    result = CliRunner().invoke(cli.main, ["query", "--agent", "deep_research", Q], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    err, out = result.stderr, result.stdout
    assert "; web search: searxng" in err
    assert "Step 1: search" in err and "↗ web (searxng): mallard duck habitat → 2 results (2 new)" in err
    assert f"✓ read 1 item(s)" in err and "evaluator (definitive ✓, attribution ✓): accepted" in err
    assert f"- {pages.url('/mallard')} — Mallard: [1]" in out
    assert "*Evaluator checks: definitive passed, attribution passed.*" in out
    assert "Usage: 5 LLM calls" in err and "Traceback" not in result.output
