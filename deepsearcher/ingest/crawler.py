"""The built-in crawler: breadth-first over links with httpx, within depth, page, site and robots.txt limits.

Not trafilatura's own spider: measured here, it refuses localhost/IP hosts, skips PDF links and sleeps 5 s per page.
This one fetches with a thread pool (``concurrency`` requests in flight) and hands the raw bytes to the file loaders
(trafilatura for HTML, pypdf for PDF, ...) through ``web.page_documents``.

Rules, in the order they apply to a discovered link:

- only ``<a href>`` / ``<area href>`` links of HTML pages, resolved against ``<base href>`` and the final URL;
- URLs are normalised (courlan: scheme and host lower-cased, default port, tracking parameters and the fragment
  dropped, query sorted) and a page is fetched once per run, ``/docs`` and ``/docs/`` being one page;
- ``same_site``: the link's host must be the start URL's host, or differ from it only by a leading ``www.`` when
  both have the same registrable domain per the Public Suffix List (``example.com`` ~ ``www.example.com``, but not
  ``github.io`` ~ ``www.github.io`` or ``localhost`` ~ ``www.localhost``);
- ``include`` / ``exclude``: regexes searched in the normalised URL (the start URL itself is always fetched);
- ``max_depth`` links away from the start URL, ``max_pages`` fetches per start URL (robots-blocked ones not counted);
- ``respect_robots``: robots.txt of each origin (rules and limits in ``deepsearcher.ingest.robots``).

Redirects are followed by hand, one hop at a time, so that every hop is checked against ``same_site`` and robots.txt;
the page's source is its final URL.

Safety (docs/security.md): every connection (start URL, redirect hop, link, robots.txt) goes through
``guarded_http``, which resolves the host once and connects only to addresses ``netpolicy.AddressPolicy`` allows
(``allow_private_urls``; a refusal is the page's skip reason); each request has one wall-clock deadline
(``timeout_s``, connect to last byte); bodies are decoded with bounded output and capped at ``max_page_mb``.
robots.txt is fetched by a pool worker, never by the loop that hands out work, so a slow one delays only its origin.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Iterator, Sequence
from functools import lru_cache, partial
from urllib.parse import urljoin, urlsplit

import httpx

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.decoding import BodyTooLarge, DecodingError, accept_encoding, decoded_reader, read_capped
from deepsearcher.net.http import guarded_client, request_deadline
from deepsearcher.ingest.loaders import decode_html, sniff
from deepsearcher.ingest.robots import RobotsCache, origin_of, read_robots
from deepsearcher.ingest.web import normalize_url, url_key
from deepsearcher.types import FetchedPage
from deepsearcher.net.policy import AddressPolicy, AddressRefused
from deepsearcher.ingest.options import BuiltinCrawlerOptions
from deepsearcher.events import CrawlFetched, CrawlQueued, EventCallback

log = logging.getLogger(__name__)

MAX_REDIRECTS = 10
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5"
BINARY_MEDIA = ("image/", "audio/", "video/", "font/")


def site_of(url: str) -> str:
    """The host compared by ``same_site``: lower-cased."""
    return (urlsplit(url).hostname or "").lower()


def same_site(host: str, other: str) -> bool:
    """Whether ``same_site`` lets a crawl of ``host`` go to ``other``: the same host, or one is ``www.`` + the other
    and both have the same registrable domain (Public Suffix List, via ``tld``)."""
    if host == other:
        return True
    bare = host.removeprefix("www.") if host.startswith("www.") else other.removeprefix("www.")
    if {host, other} != {bare, "www." + bare}:
        return False
    return _registrable(bare) is not None and _registrable(bare) == _registrable("www." + bare)


@lru_cache(maxsize=1024)
def _registrable(host: str) -> str | None:
    """eTLD+1 of a host name (``docs.example.co.uk`` -> ``example.co.uk``); None for IPs and unlisted TLDs."""
    from tld import get_fld

    return get_fld(host, fix_protocol=True, fail_silently=True)


def extract_links(body: bytes, base_url: str, charset: str | None) -> list[str]:
    """Absolute ``<a href>`` / ``<area href>`` targets of an HTML page (lxml), in document order."""
    from lxml import etree
    from lxml import html as lxml_html

    try:
        text = decode_html(body, charset)
    except SkipSource:
        return []
    try:
        try:
            doc = lxml_html.document_fromstring(text)
        except ValueError:  # a str with an XML encoding declaration: let lxml decode the bytes
            doc = lxml_html.document_fromstring(body)
    except (ValueError, etree.ParserError) as exc:  # e.g. "Document is empty"
        log.debug("no links from %s: %s", base_url, exc)
        return []
    doc.make_links_absolute(base_url, resolve_base_href=True, handle_failures="discard")
    return [link for element, attribute, link, _ in doc.iterlinks()
            if attribute == "href" and element.tag in {"a", "area"}]


@dataclass(frozen=True)
class _Task:
    url: str
    depth: int
    start: str  # the start URL as given
    site: str  # site_of(the start URL)


class _Skip(Exception):
    """A fetch that ended without an indexable body; the message is the reason."""


class BuiltinCrawler:
    """Breadth-first crawler over one or more start URLs (see the module rules).

    Args:
        options: the ``crawler`` settings (provider ``builtin``).
        policy: the address policy; None = from ``allow_private_urls`` (None there = allowed).
    """

    def __init__(self, options: BuiltinCrawlerOptions, *, policy: AddressPolicy | None = None) -> None:
        self.options = options
        if policy is None:
            policy = AddressPolicy.from_setting(options.allow_private_urls, default=True)
        self.policy = policy
        self._include = [re.compile(p) for p in options.include]
        self._exclude = [re.compile(p) for p in options.exclude]
        self._limit = int(options.max_page_mb * 1_000_000)

    def crawl(self, start_urls: Sequence[str], on_event: EventCallback) -> Iterator[FetchedPage]:
        """Yield every page fetched, blocked or failed, breadth-first; emit "crawl.fetched" after each.

        Start URLs are all fetched first (depth 0); each keeps its own page budget, site and depth. A task whose
        origin's robots.txt is not loaded yet waits aside while a worker loads it, then returns to the queue's front.
        """
        run = _CrawlRun(self, start_urls, on_event)
        on_event(CrawlQueued(fetched=0, queued=len(run.queue)))
        with self._client() as client, ThreadPoolExecutor(self.options.concurrency,
                                                          thread_name_prefix="crawl") as pool:
            robots = self._robots(client)
            try:
                while run.queue or run.running:
                    yield from run.hand_out(pool, client, robots)
                    if run.running:
                        finished, _ = wait(run.running, return_when=FIRST_COMPLETED)
                        yield from run.collect(finished)
            finally:
                for future in run.running:
                    future.cancel()

    # --- one page ------------------------------------------------------------------------------------------------
    def _fetch(self, client: httpx.Client, robots: RobotsCache | None, task: _Task,
               seen: set[str]) -> tuple[FetchedPage, list[str]]:
        """Fetch one URL, following redirects hop by hop; never raises for network, policy or HTTP problems."""
        url = task.url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                with request_deadline(self.options.timeout_s), client.stream("GET", url) as resp:
                    if not resp.is_redirect:
                        return self._page(task, url, resp)
                    location = resp.headers["location"]
                # the hop is judged after its connection is released (robots.txt of the target may need one)
                url = self._redirect_target(robots, url, location, task)
                if url_key(url) in seen:
                    return FetchedPage(task.start, url, duplicate=True), []
            raise _Skip(f"more than {MAX_REDIRECTS} redirects")
        except (_Skip, AddressRefused) as exc:
            return FetchedPage(task.start, url, error=str(exc)), []
        except httpx.TimeoutException:
            return FetchedPage(task.start, url, error=f"timed out after {self.options.timeout_s:g} s"), []
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = str(exc) or type(exc).__name__
            return FetchedPage(task.start, url, error=f"fetch failed: {reason}"), []

    def _page(self, task: _Task, url: str, resp: httpx.Response) -> tuple[FetchedPage, list[str]]:
        """The page of a final (non-redirect) response and its links; raises _Skip when it is not indexable."""
        if not resp.is_success:
            raise _Skip(f"HTTP {resp.status_code} {resp.reason_phrase}".strip())
        ctype = resp.headers.get("content-type")
        media = (ctype or "").split(";")[0].strip().lower()
        if media.startswith(BINARY_MEDIA):
            raise _Skip(f"binary content ({media}) is not indexed")
        body = self._read(resp)
        page = FetchedPage(task.start, url, body, ctype, resp.charset_encoding)
        is_html = sniff(body, content_type=ctype) == "html"
        return page, extract_links(body, url, resp.charset_encoding) if is_html else []

    def _redirect_target(self, robots: RobotsCache | None, url: str, location: str, task: _Task) -> str:
        try:
            target = normalize_url(urljoin(url, location))
        except ValueError:
            raise _Skip(f"redirects to an unusable location {location!r}") from None
        if self.options.same_site and not same_site(task.site, site_of(target)):
            raise _Skip(f"redirects to another site ({target}); not followed because crawler.same_site is on")
        if robots is not None and not robots.allowed(target):
            raise _Skip(f"redirects to {target}, blocked by robots.txt")
        return target

    def _read(self, resp: httpx.Response) -> bytes:
        """The decoded body, at most ``max_page_mb`` on the wire and decoded (see ``decoding``)."""
        too_big = f"larger than {self.options.max_page_mb:g} MB (crawler.max_page_mb)"
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._limit:
            raise _Skip(too_big)
        try:
            reader = decoded_reader(resp.iter_raw(), resp.headers.get("content-encoding"), self._limit)
            return read_capped(reader, self._limit)
        except BodyTooLarge:
            raise _Skip(too_big) from None
        except DecodingError as exc:
            raise _Skip(str(exc)) from None

    def _follow(self, link: str, task: _Task, seen: set[str]) -> str | None:
        """The normalised link when the rules allow following it and it is new, else None."""
        try:
            url = normalize_url(link)
        except ValueError:  # mailto:, javascript:, malformed
            return None
        if url_key(url) in seen:
            return None
        if self.options.same_site and not same_site(task.site, site_of(url)):
            return None
        if self._include and not any(p.search(url) for p in self._include):
            return None
        if any(p.search(url) for p in self._exclude):
            return None
        return url

    def _robots(self, client: httpx.Client) -> RobotsCache | None:
        if not self.options.respect_robots:
            return None
        fetch = partial(read_robots, client, timeout_s=self.options.timeout_s, wire_limit=self._limit)
        return RobotsCache(fetch, self.options.user_agent)

    def _client(self) -> httpx.Client:
        opts = self.options
        headers = {"User-Agent": opts.user_agent, "Accept": ACCEPT, "Accept-Encoding": accept_encoding()}
        return guarded_client(self.policy, timeout_s=opts.timeout_s, max_connections=opts.concurrency,
                              headers=headers)


class _CrawlRun:
    """The state of one ``BuiltinCrawler.crawl``: the queue of tasks, the URLs seen, each start URL's page budget,
    the futures running (a page fetch, or the robots.txt load of an origin) and the tasks parked until their
    origin's robots.txt is loaded."""

    def __init__(self, crawler: BuiltinCrawler, start_urls: Sequence[str], on_event: EventCallback) -> None:
        self.crawler = crawler
        self.on_event = on_event
        self.queue: deque[_Task] = deque()
        self.seen: set[str] = set()
        self.budget: dict[str, int] = {}
        self.running: dict[Future[Any], _Task | str] = {}
        self.parked: dict[str, list[_Task]] = {}  # origin -> tasks waiting for its robots.txt
        self.done = 0
        for start in start_urls:
            url = normalize_url(start)
            if url_key(url) not in self.seen:
                self.seen.add(url_key(url))
                self.budget[start] = crawler.options.max_pages
                self.queue.append(_Task(url, 0, start, site_of(url)))

    def hand_out(self, pool: ThreadPoolExecutor, client: httpx.Client,
                 robots: RobotsCache | None) -> Iterator[FetchedPage]:
        """Start queued tasks until ``concurrency`` run; yield the ones robots.txt blocks (never fetched)."""
        while self.queue and len(self.running) < self.crawler.options.concurrency:
            task = self.queue.popleft()
            if self.budget[task.start] <= 0:
                continue
            if robots is not None and not robots.known(task.url):
                origin = origin_of(task.url)
                if origin not in self.parked:
                    self.parked[origin] = []
                    self.running[pool.submit(robots.load, task.url)] = origin
                self.parked[origin].append(task)
                continue
            if robots is not None and not robots.allowed(task.url):  # rules loaded: no fetch here
                yield self._counted(FetchedPage(task.start, task.url, error="blocked by robots.txt"))
                continue
            self.budget[task.start] -= 1
            self.running[pool.submit(self.crawler._fetch, client, robots, task, self.seen)] = task

    def collect(self, finished: set[Future[Any]]) -> Iterator[FetchedPage]:
        """Yield the pages of finished fetches and queue their links; a loaded robots.txt puts its origin's parked
        tasks back at the queue's front, in order."""
        for future in finished:
            item = self.running.pop(future)
            if isinstance(item, str):
                future.result()
                self.queue.extendleft(reversed(self.parked.pop(item)))
                continue
            page, links = future.result()
            if page.duplicate:  # redirected to a page this run fetches anyway
                yield page
                continue
            self.seen.add(url_key(page.url))
            if item.depth < self.crawler.options.max_depth:
                self._queue_links(item, links)
            yield self._counted(page)

    def _queue_links(self, task: _Task, links: list[str]) -> None:
        for link in links:
            follow = self.crawler._follow(link, task, self.seen)
            if follow is not None:
                self.seen.add(url_key(follow))
                self.queue.append(_Task(follow, task.depth + 1, task.start, task.site))

    def _counted(self, page: FetchedPage) -> FetchedPage:
        """``page``, after counting it done and emitting the progress event."""
        self.done += 1
        waiting = min(len(self.queue) + sum(map(len, self.parked.values())), sum(self.budget.values()))
        fetching = sum(isinstance(t, _Task) for t in self.running.values())
        self.on_event(CrawlFetched(fetched=self.done, queued=self.done + fetching + waiting))
        return page
