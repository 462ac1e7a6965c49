"""The built-in crawler against real HTTP servers on 127.0.0.1 (and "localhost" as a second host)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

from deepsearcher import registry
from deepsearcher.cli import main
from deepsearcher.errors import IngestError
from deepsearcher.ingest.crawler import BuiltinCrawler
from deepsearcher.ingest.loaders import SkipSource
from deepsearcher.ingest.web import FetchedPage, normalize_url, page_documents, url_key
from deepsearcher.ingest.options import BuiltinCrawlerOptions, LoaderOptions
from tests.conftest import DATA
from tests.integration.http_site import Route, Site, html

pytestmark = pytest.mark.integration

PDF = (DATA / "pdf" / "WhatisMilvus.pdf").read_bytes()
DUCKS = "<p>" + "Mallard ducks dabble in shallow ponds and eat seeds, insects and water plants. " * 4 + "</p>"
HERONS = "<p>" + "Grey herons stand still in the reeds before spearing fish with their long bills. " * 4 + "</p>"


def flat(text: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(text.split())


def links(*paths: str) -> str:
    return " ".join(f'<a href="{p}">link {i}</a>' for i, p in enumerate(paths))


@pytest.fixture
def servers() -> Iterator[list[Site]]:
    started: list[Site] = []
    yield started
    for site in started:
        site.close()


@pytest.fixture
def serve(servers: list[Site]):
    def start(routes: dict[str, Route], host: str = "127.0.0.1") -> Site:
        site = Site(routes, host)
        servers.append(site)
        return site

    return start


def crawl(start: str, **options) -> list[FetchedPage]:
    events: list = []
    crawler = BuiltinCrawler(BuiltinCrawlerOptions(**options))
    pages = [p for p in crawler.crawl([start], events.append) if not p.duplicate]
    assert events[-1].kind == "crawl.fetched" and events[-1].data["fetched"] == len(pages)
    return pages


def outcome(page: FetchedPage) -> str:
    try:
        docs = page_documents(page, LoaderOptions())
    except SkipSource as exc:
        return f"skipped: {exc}"
    return "\n".join(d.text for d in docs)


def tree_site() -> dict[str, Route]:
    return {
        "/": html("Home", DUCKS + links("/a", "/b", "/c")),
        "/a": html("A", DUCKS + links("/a/deep")),
        "/b": html("B", HERONS),
        "/c": html("C", HERONS),
        "/a/deep": html("Deep", DUCKS + links("/a/deeper")),
        "/a/deeper": html("Deeper", DUCKS),
    }


# --- limits --------------------------------------------------------------------------------------------------------
def test_max_depth_is_honoured(serve):
    site = serve(tree_site())
    assert {p.url for p in crawl(site.url("/"), max_depth=0)} == {site.url("/")}
    site.requests.clear()
    pages = crawl(site.url("/"), max_depth=1)
    assert sorted(site.paths()) == ["/", "/a", "/b", "/c"]
    assert {p.url for p in pages} == {site.url(x) for x in ("/", "/a", "/b", "/c")}
    site.requests.clear()
    crawl(site.url("/"), max_depth=3)
    assert sorted(site.paths()) == ["/", "/a", "/a/deep", "/a/deeper", "/b", "/c"]


def test_max_pages_is_honoured_breadth_first(serve):
    site = serve(tree_site())
    pages = crawl(site.url("/"), max_depth=5, max_pages=3, concurrency=1)
    assert site.paths() == ["/", "/a", "/b"]  # breadth-first: the start page, then its links in order
    assert len(pages) == 3


def test_include_and_exclude_patterns(serve):
    site = serve(tree_site())
    crawl(site.url("/"), max_depth=3, include=[r"/a"], exclude=[r"/deeper$"])
    assert sorted(site.paths()) == ["/", "/a", "/a/deep"]  # the start URL is always fetched


# --- robots.txt ----------------------------------------------------------------------------------------------------
def test_robots_disallow_private_is_obeyed_and_reported(serve):
    routes = {"/": html("Home", DUCKS + links("/private/notes", "/public")),
              "/private/notes": html("Secret", HERONS), "/public": html("Public", HERONS),
              "/robots.txt": Route(b"User-agent: *\nDisallow: /private\n", headers={"Content-Type": "text/plain"})}
    site = serve(routes)
    pages = {p.url: p for p in crawl(site.url("/"))}
    assert "/private/notes" not in site.paths()
    assert pages[site.url("/private/notes")].error == "blocked by robots.txt"
    assert "Grey herons" in outcome(pages[site.url("/public")])


def test_robots_empty_disallow_allows_everything(serve):
    routes = {"/": html("Home", DUCKS + links("/private/notes")), "/private/notes": html("Notes", HERONS),
              "/robots.txt": Route(b"User-agent: *\nDisallow:\n", headers={"Content-Type": "text/plain"})}
    site = serve(routes)
    pages = {p.url: p for p in crawl(site.url("/"))}
    assert "/private/notes" in site.paths()
    assert "Grey herons" in outcome(pages[site.url("/private/notes")])


def test_robots_can_be_ignored(serve):
    routes = {"/": html("Home", DUCKS),
              "/robots.txt": Route(b"User-agent: *\nDisallow: /\n", headers={"Content-Type": "text/plain"})}
    site = serve(routes)
    assert crawl(site.url("/"))[0].error == "blocked by robots.txt"
    assert not site.paths()
    assert "Mallard" in outcome(crawl(site.url("/"), respect_robots=False)[0])


# --- charsets ------------------------------------------------------------------------------------------------------
TEXT = "Estação café 日本"


@pytest.mark.parametrize("body, ctype", [
    (f"<html><body><p>{TEXT}. {'Palavras ' * 30}</p></body></html>".encode(), "text/html"),  # no charset at all
    (f"<html><head><meta charset='utf-8'></head><body><p>{TEXT}. {'Palavras ' * 30}</p></body></html>".encode(),
     "text/html; charset=utf-8"),
])
def test_utf8_page_without_charset_header_comes_back_intact(serve, body: bytes, ctype: str):
    site = serve({"/": Route(body, headers={"Content-Type": ctype})})
    assert TEXT in outcome(crawl(site.url("/"))[0])


def test_header_charset_then_meta_charset(serve):
    latin = "Estação café à la crème brûlée. " * 10
    cyrillic = "Привет, мир. Утки плавают в пруду. " * 10
    site = serve({
        "/latin": Route(f"<html><body><p>{latin}</p></body></html>".encode("latin-1"),
                        headers={"Content-Type": "text/html; charset=ISO-8859-1"}),
        "/meta": Route(f"<html><head><meta charset='windows-1251'></head><body><p>{cyrillic}</p></body></html>"
                       .encode("cp1251"), headers={"Content-Type": "text/html"}),
    })
    assert "crème brûlée" in outcome(crawl(site.url("/latin"))[0])
    assert "Утки плавают" in outcome(crawl(site.url("/meta"))[0])


# --- content types -------------------------------------------------------------------------------------------------
def test_pdf_link_loaded_as_pdf_and_binary_skipped(serve):
    routes = {
        "/": html("Home", DUCKS + links("/guide.pdf", "/report.html", "/logo.png", "/blob")),
        "/guide.pdf": Route(PDF, headers={"Content-Type": "application/pdf"}),
        "/report.html": Route(PDF, headers={"Content-Type": "text/html; charset=utf-8"}),  # a PDF in disguise
        "/logo.png": Route(b"\x89PNG\r\n\x1a\n" + bytes(200), headers={"Content-Type": "image/png"}),
        "/blob": Route(bytes(range(256)) * 8, headers={"Content-Type": "application/octet-stream"}),
    }
    site = serve(routes)
    pages = {p.url: p for p in crawl(site.url("/"))}
    for path in ("/guide.pdf", "/report.html"):
        docs = page_documents(pages[site.url(path)], LoaderOptions())
        assert [d.page for d in docs] == [1, 2, 3, 4]
        assert "Milvus" in docs[0].text and not docs[0].text.startswith("%PDF")
    assert outcome(pages[site.url("/logo.png")]) == "skipped: binary content (image/png) is not indexed"
    assert outcome(pages[site.url("/blob")]) == "skipped: binary content (application/octet-stream) is not indexed"


def test_http_errors_are_skipped_with_reason(serve):
    site = serve({"/": html("Home", DUCKS + links("/gone"))})
    pages = {p.url: p for p in crawl(site.url("/"))}
    assert outcome(pages[site.url("/gone")]) == "skipped: HTTP 404 Not Found"


# --- redirects and URL identity ------------------------------------------------------------------------------------
def test_redirect_to_another_host_is_not_followed(serve):
    other = serve({"/landing": html("Elsewhere", HERONS)}, host="localhost")
    site = serve({"/": html("Home", DUCKS + links("/moved", "/old")),
                  "/moved": Route(status=301, headers={"Location": other.url("/landing")}),
                  "/old": Route(status=308, headers={"Location": "/new"}),
                  "/new": html("New", HERONS)})
    pages = {p.url: p for p in crawl(site.url("/"))}
    assert other.requests == []
    assert "another site" in pages[site.url("/moved")].error
    assert site.url("/new") in pages and site.url("/old") not in pages  # same-site redirect: final URL kept

    followed = {p.url: p for p in crawl(site.url("/"), same_site=False)}
    assert other.paths() == ["/landing"]
    assert "Grey herons" in outcome(followed[other.url("/landing")])


def test_fragments_and_duplicate_urls_are_fetched_once(serve):
    site = serve({"/": html("Home", DUCKS + links("/a#intro", "/a", "/a/", "/a#x", "HTTP://127.0.0.1:{port}/a",
                                                  "/a?utm_source=feed", "/./a", "/b", "/alias")),
                  "/a": html("A", HERONS), "/b": html("B", HERONS + links("/", "/#top", "/a")),
                  "/alias": Route(status=302, headers={"Location": "/a"})})
    home = site.routes["/"]
    home.body = home.body.replace(b"{port}", str(site.port).encode())
    pages = crawl(site.url("/"), max_depth=3)
    assert sorted(site.paths()) == ["/", "/a", "/alias", "/b"]
    assert sorted(p.url for p in pages) == sorted(site.url(x) for x in ("/", "/a", "/b"))


def test_url_normalisation_rules():
    assert normalize_url("HTTP://Example.COM:80/docs/#part") == "http://example.com/docs/"
    assert normalize_url("https://example.com:443") == "https://example.com/"
    assert normalize_url("https://example.com/p?b=2&a=1&utm_source=x") == "https://example.com/p?a=1&b=2"
    assert url_key("https://example.com/docs/") == url_key("https://example.com/docs")
    with pytest.raises(ValueError):
        normalize_url("mailto:someone@example.com")


def test_unreachable_and_timeout_are_reasons(serve):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    page = crawl(f"http://127.0.0.1:{port}/")[0]
    assert page.error.startswith("fetch failed") and "refused" in page.error.lower()

    import threading

    answer = threading.Event()

    def slow(_req):
        answer.wait(60)  # no reply until the crawler has given up (the test sets it); 60 s only if it never does
        return html("Slow", DUCKS)

    site = serve({"/": Route(handler=slow)})
    try:
        assert crawl(site.url("/"), timeout_s=0.5)[0].error == "timed out after 0.5 s"
    finally:
        answer.set()


# --- through the load pipeline and the CLI -------------------------------------------------------------------------
@pytest.fixture
def cli_env(tmp_path: Path, bundled_embedder, monkeypatch: pytest.MonkeyPatch):
    """A config.yaml in tmp_path and the session's bundled embedder behind the registry (no reload per command)."""
    with registry.registry.temporarily("embedding", "sentence_transformers", lambda _opts: bundled_embedder):
        yield from _cli_env(tmp_path)


def _cli_env(tmp_path: Path):

    def write(crawler: str = "") -> None:
        (tmp_path / "config.yaml").write_text(
            f"vector_db:\n  uri: {tmp_path / 'milvus.db'}\nllm: null\ncrawler:\n  provider: builtin\n{crawler}",
            encoding="utf-8")

    write()
    yield write


def site_for_cli(serve) -> Site:
    return serve({
        "/": html("Birds of the pond", DUCKS + links("/herons", "/guide.pdf", "/logo.png", "/private/x")),
        "/herons": html("Herons", HERONS),
        "/guide.pdf": Route(PDF, headers={"Content-Type": "application/pdf"}),
        "/logo.png": Route(b"\x89PNG\r\n\x1a\n" + bytes(64), headers={"Content-Type": "image/png"}),
        "/private/x": html("Private", HERONS),
        "/robots.txt": Route(b"User-agent: *\nDisallow: /private\n", headers={"Content-Type": "text/plain"}),
    })


def test_cli_load_site_then_retrieve_cites_urls_and_reload_upserts(serve, cli_env):
    site = site_for_cli(serve)
    runner = CliRunner()
    result = runner.invoke(main, ["load", site.url("/"), "-c", "birds", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    status = {f["source"]: (f["status"], f["reason"]) for f in summary["files"]}
    assert status[site.url("/")][0] == status[site.url("/herons")][0] == status[site.url("/guide.pdf")][0] == "loaded"
    assert status[site.url("/logo.png")] == ("skipped", "binary content (image/png) is not indexed")
    assert status[site.url("/private/x")] == ("skipped", "blocked by robots.txt")

    result = runner.invoke(main, ["retrieve", "herons spearing fish in the reeds", "--json", "-k", "3"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits[0]["source"] == site.url("/herons") and hits[0]["title"] == "Herons"
    result = runner.invoke(main, ["retrieve", "What is Milvus?", "--json", "-k", "1"], catch_exceptions=False)
    hit = json.loads(result.stdout)[0]
    assert hit["source"] == site.url("/guide.pdf") and hit["page"] is not None

    again = runner.invoke(main, ["load", site.url("/"), "-c", "birds", "--json"], catch_exceptions=False)
    assert again.exit_code == 0
    second = json.loads(again.stdout)
    assert second["chunks_written"] == 0
    assert {f["status"] for f in second["files"] if f["source"] in {site.url("/"), site.url("/herons")}} == {
        "unchanged"}


def test_cli_load_url_with_zero_documents_fails_and_leaves_no_collection(serve, cli_env):
    blocked = serve({"/": html("Home", DUCKS),
                     "/robots.txt": Route(b"User-agent: *\nDisallow: /\n", headers={"Content-Type": "text/plain"})})
    runner = CliRunner()
    result = runner.invoke(main, ["load", blocked.url("/"), "-c", "web"], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"0 documents fetched from URL {blocked.url('/')}: blocked by robots.txt" in flat(result.output)
    assert "Traceback" not in result.output

    empty = serve({"/": html("Nothing", ""), "/x": html("Nothing either", "")})
    result = runner.invoke(main, ["load", empty.url("/"), "-c", "web"], catch_exceptions=False)
    assert result.exit_code == 1 and f"0 documents fetched from URL {empty.url('/')}" in flat(result.output)

    result = runner.invoke(main, ["collections", "--json"], catch_exceptions=False)
    assert json.loads(result.stdout) == []


def test_load_unreachable_url_raises_ingest_error(make_app):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = make_app({"crawler": {"provider": "builtin"}})
    with pytest.raises(IngestError, match=rf"0 documents fetched from URL http://127.0.0.1:{port}/x: fetch failed"):
        app.load([f"http://127.0.0.1:{port}/x"], "web")
    assert app.store.list_collections() == []


def test_cli_rejects_a_malformed_url(cli_env):
    result = CliRunner().invoke(main, ["load", "http://", "-c", "web"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "not a valid http(s) URL: http://" in flat(result.output) and "Traceback" not in result.output


def test_progress_events_through_app_load(serve, make_app):
    site = serve(tree_site())
    events: list = []
    # the same start URL spelt twice is crawled once, and is not "0 documents" the second time
    summary = make_app().load([site.url("/"), site.url("/#top")], "tree", on_event=events.append)
    fetched = [e.data for e in events if e.kind == "crawl.fetched"]
    assert fetched[-1] == {"fetched": 4, "queued": 4} and len(summary.loaded) == 4
    assert [e.data["fetched"] for e in events if e.kind == "crawl.fetched"] == [1, 2, 3, 4]


def test_one_failing_url_among_several_is_reported_after_the_others_are_written(serve, make_app):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    site = serve({"/": html("Ducks", DUCKS)})
    app = make_app()
    with pytest.raises(IngestError) as err:
        app.load([f"http://127.0.0.1:{port}/", site.url("/")], "mixed")
    assert str(err.value).startswith(f"0 documents fetched from URL http://127.0.0.1:{port}/: fetch failed")
    assert site.url("/") not in str(err.value).splitlines()[0]
    assert "the other inputs were loaded (1 loaded" in str(err.value)
    assert app.store.count("mixed") > 0
