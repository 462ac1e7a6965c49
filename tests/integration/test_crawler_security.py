"""The built-in crawler against hostile servers on 127.0.0.x: address policy on every hop, bombs, trickles.

The address policy is exercised without a network namespace by declaring 127.0.0.2 "public" (a test classifier)
and resolving test host names with a resolver under the test's control; 127.0.0.1 stays internal. The same probes
with real public-looking addresses run in tests/integration/test_ssrf_netns.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from deepsearcher.ingest.crawler import BuiltinCrawler
from deepsearcher.ingest.firecrawl import FirecrawlCrawler
from deepsearcher.ingest.web import normalize_url
from deepsearcher.types import FetchedPage
from deepsearcher.net.policy import AddressPolicy, IPAddress, classify
from deepsearcher.ingest.options import BuiltinCrawlerOptions, FirecrawlCrawlerOptions
from tests.integration.hostile_http import HOLD_LIMIT_S, HostileServer

pytestmark = pytest.mark.integration

PUBLIC = "127.0.0.2"  # stands in for an internet host in these tests
MAX_PAGE_MB = 20  # the default crawler.max_page_mb
ROOT = Path(__file__).resolve().parents[2]
RSS_CAP_MB = 2 * MAX_PAGE_MB + 40  # peak RSS growth allowed while crawling a bomb: the capped body, one copy, slack


def stand_in_classify(address: IPAddress) -> str | None:
    """``classify``, except that 127.0.0.2 counts as public."""
    return None if str(address) == PUBLIC else classify(address)


class Resolver:
    """Host name -> addresses, recording every lookup; a list of answers is served one per lookup (rebinding)."""

    def __init__(self, table: dict[str, list[str] | list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        answer = self.table[host]
        if answer and isinstance(answer[0], list):  # successive answers
            return answer.pop(0) if len(answer) > 1 else answer[0]  # type: ignore[return-value]
        return answer  # type: ignore[return-value]


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileServer]]:
    started: list[HostileServer] = []

    def start(host: str = "127.0.0.1", robots: str = "none", port: int = 0) -> HostileServer:
        server = HostileServer(host, robots, port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def strict_crawl(start: str, resolver: Resolver | None = None, **options) -> dict[str, FetchedPage]:
    """Crawl with private URLs refused (``allow_private_urls: false``), 127.0.0.2 counting as public."""
    settings = BuiltinCrawlerOptions(**{"allow_private_urls": False, "timeout_s": 5, **options})
    policy = AddressPolicy(allow_private=False, resolver=resolver, classifier=stand_in_classify)
    return {p.url: p for p in BuiltinCrawler(settings, policy=policy).crawl([start], lambda _e: None)}


def secret_requests(server: HostileServer) -> list[str]:
    return [path for path, _ in server.requests]


# --- address policy on every hop -----------------------------------------------------------------------------------
def test_start_url_on_an_internal_address_is_refused_before_any_request(hostile):
    internal = hostile()
    pages = strict_crawl(internal.url("/secret"))
    assert internal.requests == []
    assert "refused: 127.0.0.1 (loopback)" in pages[internal.url("/secret")].error
    assert "allow_private_urls" in pages[internal.url("/secret")].error


@pytest.mark.parametrize("same_site", [False, True])
def test_redirect_to_an_internal_address_is_refused_at_connect(hostile, same_site):
    internal, public = hostile(), hostile(PUBLIC)
    # same_site on: the www. rule (same registrable domain) lets the hop through, the address policy stops it
    resolver = Resolver({"attacker.com": [PUBLIC], "www.attacker.com": ["127.0.0.1"]})
    target = internal.url("/secret", "www.attacker.com" if same_site else None)
    pages = strict_crawl(public.url("/redirect?to=" + target, "attacker.com"), resolver, same_site=same_site)
    assert internal.requests == []
    [page] = pages.values()
    assert page.url == target and "refused" in page.error and not page.content
    assert ("www.attacker.com resolves to 127.0.0.1" if same_site else "127.0.0.1 (loopback)") in page.error


@pytest.mark.parametrize("same_site", [False, True])
def test_link_to_an_internal_address_is_refused_and_reported(hostile, same_site):
    internal, public = hostile(), hostile(PUBLIC)
    resolver = Resolver({"attacker.com": [PUBLIC], "www.attacker.com": ["127.0.0.1"]})
    target = internal.url("/secret", "www.attacker.com" if same_site else None)
    pages = strict_crawl(public.url("/links?u=" + target, "attacker.com"), resolver, same_site=same_site)
    assert internal.requests == []
    assert "refused" in pages[target].error
    assert "probe page" not in pages[target].error and len(pages) == 2


def test_link_to_the_metadata_address_in_ipv6_forms_is_refused(hostile):
    public = hostile(PUBLIC)
    for host in ("[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "169.254.169.254"):
        target = f"http://{host}:{public.port}/latest/meta-data/"
        pages = strict_crawl(public.url("/links?u=" + target), same_site=False, max_depth=1)
        assert "link-local, cloud metadata" in pages[target].error, host


def test_robots_txt_redirect_to_an_internal_address_is_refused(hostile):
    internal = hostile()
    public = hostile(PUBLIC, robots=f"redirect:{internal.url('/robots-probe')}")
    pages = strict_crawl(public.url("/page"))
    assert internal.requests == []  # no blind request
    assert public.paths() == ["/robots.txt", "/page"] and not pages[public.url("/page")].error


def test_robots_txt_redirects_stop_after_five_hops(hostile):
    public = hostile(PUBLIC, robots="chain")
    pages = strict_crawl(public.url("/page"))
    assert public.paths()[:-1] == ["/robots.txt"] + [f"/robots-{n}" for n in range(5)]  # 1 + 5 redirects
    assert not pages[public.url("/page")].error  # too many redirects = robots.txt unavailable = allowed


def test_dns_rebinding_cannot_swap_the_address_between_check_and_connect(hostile):
    """Each connection resolves once, and connects to the address it checked: a rebinding answer is refused."""
    public = hostile(PUBLIC)
    internal = hostile("127.0.0.1", port=public.port)  # what a second lookup would reach
    resolver = Resolver({"rebind.test": [[PUBLIC], ["127.0.0.1"]]})  # first answer public, later ones internal
    start = f"http://rebind.test:{public.port}/links?u=/page"
    pages = strict_crawl(start, resolver, respect_robots=False)
    assert resolver.calls == ["rebind.test", "rebind.test"]  # one lookup per connection (HTTP/1.0 server)
    assert not pages[normalize_url(start)].error
    assert "rebind.test resolves to 127.0.0.1" in pages[f"http://rebind.test:{public.port}/page"].error
    assert public.paths() == ["/links"] and internal.requests == []


def test_connects_to_the_resolved_address_but_keeps_the_host_name(hostile):
    site = hostile(PUBLIC)
    resolver = Resolver({"docs.example.com": [PUBLIC]})
    pages = strict_crawl(site.url("/page", "docs.example.com"), resolver, respect_robots=False)
    assert not pages[site.url("/page", "docs.example.com")].error
    assert site.requests == [("/page", f"docs.example.com:{site.port}")]


def test_private_urls_are_allowed_by_default_for_the_cli(hostile):
    internal = hostile()
    pages = list(BuiltinCrawler(BuiltinCrawlerOptions()).crawl([internal.url("/page")], lambda _e: None))
    assert not pages[0].error and internal.paths() == ["/robots.txt", "/page"]


def test_firecrawl_pages_on_internal_addresses_are_dropped_before_they_are_stored():
    from tests.integration.test_firecrawl import FakeFirecrawl

    fake = FakeFirecrawl()  # its crawl returns https://birds.example/ pages
    try:
        settings = FirecrawlCrawlerOptions(api_url=fake.url(), api_key_env=None, poll_interval_s=0.1,
                                           allow_private_urls=False)
        internal = AddressPolicy(resolver=Resolver({"birds.example": ["10.0.0.7"]}))
        pages = list(FirecrawlCrawler(settings, policy=internal).crawl(["https://birds.example/"], lambda _e: None))
        assert pages and all("birds.example resolves to 10.0.0.7 (private)" in p.error and not p.content
                             for p in pages)
        public = AddressPolicy(resolver=Resolver({"birds.example": ["93.184.215.14"]}))
        fake.polls = 0
        pages = list(FirecrawlCrawler(settings, policy=public).crawl(["https://birds.example/"], lambda _e: None))
        assert any(p.content and not p.error for p in pages)
        before = len(fake.site.requests)
        pages = list(FirecrawlCrawler(settings).crawl(["http://169.254.169.254/latest/"], lambda _e: None))
        assert len(fake.site.requests) == before  # a refused start URL is never sent to Firecrawl
        assert "cloud metadata" in pages[0].error
    finally:
        fake.site.close()


# --- bombs ---------------------------------------------------------------------------------------------------------
def peak_rss(codings: str, mb: int, where: str = "page") -> dict:
    """Crawl a bomb in a fresh process (tests/integration/rss_probe.py); its peak RSS growth and page errors."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    out = subprocess.run([sys.executable, "-m", "tests.integration.rss_probe", codings, str(mb), where,
                          str(MAX_PAGE_MB)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.splitlines()[-1])
    print(f"{codings} {where} inflating to {mb} MB: baseline {result['baseline_mb']:.0f} MB, peak "
          f"{result['peak_mb']:.0f} MB, growth {result['growth_mb']:.1f} MB (cap {RSS_CAP_MB} MB)")
    return result


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="peak RSS is read from /proc")


@needs_proc
@pytest.mark.parametrize("codings, mb", [("zstd", 200), ("gzip", 200), ("br", 200), ("deflate", 200),
                                         ("gzip, zstd", 200)])
def test_compressed_page_bombs_stop_at_max_page_mb_with_bounded_memory(codings, mb):
    result = peak_rss(codings, mb)
    assert result["errors"] == [f"larger than {MAX_PAGE_MB} MB (crawler.max_page_mb)"]
    assert result["growth_mb"] < RSS_CAP_MB


@needs_proc
def test_gzip_robots_txt_bomb_is_cut_at_500_kib_with_bounded_memory():
    from tests.integration.hostile_http import bomb

    assert len(bomb("gzip", 200, robots=True)) < 200_000  # ~194 KB on the wire, 200 MB inflated
    result = peak_rss("gzip", 200, "robots")
    assert result["errors"] == [""] and result["paths"] == ["/robots.txt", "/page"]
    assert result["growth_mb"] < RSS_CAP_MB


# --- one deadline per request --------------------------------------------------------------------------------------
# A trickle keeps every read alive for TRICKLE_S: per-read timeouts never fire, only the one deadline can end the
# request, and without it the page would arrive whole (no error; robots.txt: "Disallow: /") after TRICKLE_S.
TRICKLE_S = 600


@pytest.mark.parametrize("path", ["/slowhead", "/slowbody"])
def test_trickled_headers_and_bodies_end_at_the_deadline(hostile, path):
    site = hostile()
    pages = list(BuiltinCrawler(BuiltinCrawlerOptions(timeout_s=1.5)).crawl(
        [site.url(f"{path}?every=0.2&for={TRICKLE_S}")], lambda _e: None))
    assert pages[0].error == "timed out after 1.5 s"


def test_trickling_robots_txt_ends_at_its_deadline_and_blocks_no_other_origin(hostile):
    # blocks no other origin: the slow origin's robots.txt is held until the other origin's page is in
    slow, fast = hostile(robots="hold"), hostile("127.0.0.3")
    crawler = BuiltinCrawler(BuiltinCrawlerOptions(timeout_s=HOLD_LIMIT_S * 2, concurrency=2))
    order = []
    for page in crawler.crawl([slow.url("/page"), fast.url("/page"), slow.url("/secret")], lambda _e: None):
        assert not page.error, page
        order.append(page.url)
        if page.url == fast.url("/page"):
            slow.release.set()  # the slow origin's pages could not have come before this
    assert order[0] == fast.url("/page")  # not held up by the other origin's robots.txt
    assert sorted(order[1:]) == sorted([slow.url("/page"), slow.url("/secret")])
    assert slow.paths().count("/robots.txt") == 1  # one fetch per origin, both pages waited for it
    # ends at its deadline: a robots.txt trickled for TRICKLE_S would say "Disallow: /" at its end
    trickling = hostile(robots=f"slow:0.2:{TRICKLE_S}")
    crawler = BuiltinCrawler(BuiltinCrawlerOptions(timeout_s=2, concurrency=2))
    pages = list(crawler.crawl([trickling.url("/page"), trickling.url("/secret")], lambda _e: None))
    assert [p.error for p in pages] == ["", ""]
    assert trickling.paths()[0] == "/robots.txt" and trickling.paths().count("/robots.txt") == 1


# --- the caller's rule reaches the crawler (what the HTTP server passes) -----------------------------------------------
def test_load_with_the_servers_rule_refuses_what_the_cli_default_allows(hostile, tmp_path):
    """``load(..., allow_private_urls=False)`` (the server off loopback) reaches every connection of the crawler,
    though ``crawler.allow_private_urls`` is unset (allowed for the CLI)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.errors import IngestError
    from deepsearcher.settings import load_settings
    from deepsearcher.testing import HashEmbedder

    site = hostile()
    settings = load_settings(None, {"llm": None, "vector_db": {"uri": str(tmp_path / "milvus.db")}})
    assert settings.crawler.allow_private_urls is None
    with DeepSearcher(settings, embedder=HashEmbedder(256)) as app:
        with pytest.raises(IngestError, match=r"refused: 127\.0\.0\.1 \(loopback\)"):
            app.load([site.url("/secret")], "strict", allow_private_urls=False)
        assert site.paths() == []
        assert [f.status for f in app.load([site.url("/secret")], "cli").files] == ["loaded"]
