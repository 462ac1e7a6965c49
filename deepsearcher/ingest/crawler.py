"""The built-in crawler: breadth-first over links with httpx, within depth, page, site and robots.txt limits.

Not trafilatura's own spider: measured here, it refuses localhost/IP hosts, skips PDF links and sleeps 5 s per page.
This one fetches with a thread pool (``concurrency`` requests in flight) and hands the raw bytes to the file loaders
(trafilatura for HTML, pypdf for PDF, ...) through ``web.page_documents``.

Rules, in the order they apply to a discovered link:

- only ``<a href>`` / ``<area href>`` links of HTML pages, resolved against ``<base href>`` and the final URL;
- URLs are normalised (courlan: scheme and host lower-cased, default port, tracking parameters and the fragment
  dropped, query sorted) and a page is fetched once per run, ``/docs`` and ``/docs/`` being one page;
- ``same_site``: the link's host must be the start URL's host (a leading ``www.`` is ignored);
- ``include`` / ``exclude``: regexes searched in the normalised URL (the start URL itself is always fetched);
- ``max_depth`` links away from the start URL, ``max_pages`` fetches per start URL (robots-blocked ones not counted);
- ``respect_robots``: robots.txt of each origin, read with ``urllib.robotparser`` (401/403 = all disallowed, other
  4xx = all allowed, 5xx = all disallowed per RFC 9309, unreachable = allowed: the page fetch then reports why).

Redirects are followed by hand, one hop at a time, so that every hop is checked against ``same_site`` and robots.txt;
the page's source is its final URL.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Iterator, Sequence
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from deepsearcher.errors import SkipSource
from deepsearcher.ingest.loaders import decode_html, sniff
from deepsearcher.ingest.web import FetchedPage, normalize_url, url_key
from deepsearcher.settings import BuiltinCrawler as BuiltinCrawlerSettings
from deepsearcher.events import CrawlFetched, CrawlQueued, Event, EventCallback

log = logging.getLogger(__name__)

MAX_REDIRECTS = 10
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5"
BINARY_MEDIA = ("image/", "audio/", "video/", "font/")


def site_of(url: str) -> str:
    """The host compared by ``same_site``: lower-cased, without a leading ``www.``."""
    return (urlsplit(url).hostname or "").lower().removeprefix("www.")


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
    """

    def __init__(self, options: BuiltinCrawlerSettings) -> None:
        self.options = options
        self._include = [re.compile(p) for p in options.include]
        self._exclude = [re.compile(p) for p in options.exclude]
        self._robots: dict[str, RobotFileParser | None] = {}
        self._robots_lock = threading.Lock()

    def crawl(self, start_urls: Sequence[str], on_event: EventCallback) -> Iterator[FetchedPage]:
        """Yield every page fetched, blocked or failed, breadth-first; emit "crawl.fetched" after each.

        Start URLs are all fetched first (depth 0); each keeps its own page budget, site and depth.
        """
        opts = self.options
        queue: deque[_Task] = deque()
        seen: set[str] = set()
        budget: dict[str, int] = {}
        for start in start_urls:
            url = normalize_url(start)
            if url_key(url) not in seen:
                seen.add(url_key(url))
                budget[start] = opts.max_pages
                queue.append(_Task(url, 0, start, site_of(url)))
        done = 0
        running: dict[Future[tuple[FetchedPage, list[str]]], _Task] = {}

        def progress() -> Event:
            waiting = min(len(queue), sum(budget.values()))
            return CrawlFetched(fetched=done, queued=done + len(running) + waiting)

        on_event(CrawlQueued(fetched=0, queued=len(queue)))
        with self._client() as client, ThreadPoolExecutor(opts.concurrency, thread_name_prefix="crawl") as pool:
            try:
                while queue or running:
                    while queue and len(running) < opts.concurrency:
                        task = queue.popleft()
                        if budget[task.start] <= 0:
                            continue
                        if not self._allowed(client, task.url):
                            done += 1
                            on_event(progress())
                            yield FetchedPage(task.start, task.url, error="blocked by robots.txt")
                            continue
                        budget[task.start] -= 1
                        running[pool.submit(self._fetch, client, task, seen)] = task
                    if not running:
                        continue
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        task = running.pop(future)
                        page, links = future.result()
                        if page.duplicate:  # redirected to a page this run fetches anyway
                            yield page
                            continue
                        seen.add(url_key(page.url))
                        if task.depth < opts.max_depth:
                            for link in links:
                                follow = self._follow(link, task, seen)
                                if follow is not None:
                                    seen.add(url_key(follow))
                                    queue.append(_Task(follow, task.depth + 1, task.start, task.site))
                        done += 1
                        on_event(progress())
                        yield page
            finally:
                for future in running:
                    future.cancel()

    # --- one page ------------------------------------------------------------------------------------------------
    def _fetch(self, client: httpx.Client, task: _Task, seen: set[str]) -> tuple[FetchedPage, list[str]]:
        """Fetch one URL, following redirects hop by hop; never raises for network or HTTP problems."""
        url = task.url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                deadline = time.monotonic() + self.options.timeout_s
                with client.stream("GET", url) as resp:
                    if resp.is_redirect:
                        url = self._redirect_target(client, url, resp, task)
                        if url_key(url) in seen:
                            return FetchedPage(task.start, url, duplicate=True), []
                        continue
                    if not resp.is_success:
                        raise _Skip(f"HTTP {resp.status_code} {resp.reason_phrase}".strip())
                    ctype = resp.headers.get("content-type")
                    media = (ctype or "").split(";")[0].strip().lower()
                    if media.startswith(BINARY_MEDIA):
                        raise _Skip(f"binary content ({media}) is not indexed")
                    body = self._read(resp, deadline)
                    page = FetchedPage(task.start, url, body, ctype, resp.charset_encoding)
                    is_html = sniff(body, content_type=ctype) == "html"
                    return page, extract_links(body, url, resp.charset_encoding) if is_html else []
            raise _Skip(f"more than {MAX_REDIRECTS} redirects")
        except _Skip as exc:
            return FetchedPage(task.start, url, error=str(exc)), []
        except httpx.TimeoutException:
            return FetchedPage(task.start, url, error=f"timed out after {self.options.timeout_s:g} s"), []
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            return FetchedPage(task.start, url, error=f"fetch failed: {reason}"), []

    def _redirect_target(self, client: httpx.Client, url: str, resp: httpx.Response, task: _Task) -> str:
        try:
            target = normalize_url(urljoin(url, resp.headers["location"]))
        except ValueError:
            raise _Skip(f"redirects to an unusable location {resp.headers['location']!r}") from None
        if self.options.same_site and site_of(target) != task.site:
            raise _Skip(f"redirects to another site ({target}); not followed because crawler.same_site is on")
        if not self._allowed(client, target):
            raise _Skip(f"redirects to {target}, blocked by robots.txt")
        return target

    def _read(self, resp: httpx.Response, deadline: float) -> bytes:
        limit = int(self.options.max_page_mb * 1_000_000)
        too_big = f"larger than {self.options.max_page_mb:g} MB (crawler.max_page_mb)"
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _Skip(too_big)
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            size += len(chunk)
            if size > limit:
                raise _Skip(too_big)
            if time.monotonic() > deadline:
                raise _Skip(f"timed out after {self.options.timeout_s:g} s")
            chunks.append(chunk)
        return b"".join(chunks)

    def _follow(self, link: str, task: _Task, seen: set[str]) -> str | None:
        """The normalised link when the rules allow following it and it is new, else None."""
        try:
            url = normalize_url(link)
        except ValueError:  # mailto:, javascript:, malformed
            return None
        if url_key(url) in seen:
            return None
        if self.options.same_site and site_of(url) != task.site:
            return None
        if self._include and not any(p.search(url) for p in self._include):
            return None
        if any(p.search(url) for p in self._exclude):
            return None
        return url

    # --- robots.txt ----------------------------------------------------------------------------------------------
    def _allowed(self, client: httpx.Client, url: str) -> bool:
        if not self.options.respect_robots:
            return True
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        with self._robots_lock:
            if origin not in self._robots:
                self._robots[origin] = self._read_robots(client, origin)
            parser = self._robots[origin]
        return parser is None or parser.can_fetch(self.options.user_agent, url)

    def _read_robots(self, client: httpx.Client, origin: str) -> RobotFileParser | None:
        """robots.txt of an origin; None = no rules (missing, or unreachable: the page fetch will say why)."""
        parser = RobotFileParser(origin + "/robots.txt")
        try:
            resp = client.get(origin + "/robots.txt", follow_redirects=True)
        except httpx.HTTPError as exc:
            log.debug("robots.txt of %s unreachable: %s", origin, exc)
            return None
        if resp.status_code in {401, 403} or resp.status_code >= 500:
            parser.disallow_all = True  # type: ignore[attr-defined]  # robotparser's documented-in-code flag
        elif resp.status_code >= 400:
            return None
        else:
            parser.parse(resp.text.splitlines())
        return parser

    def _client(self) -> httpx.Client:
        opts = self.options
        return httpx.Client(
            headers={"User-Agent": opts.user_agent, "Accept": ACCEPT},
            timeout=httpx.Timeout(opts.timeout_s), follow_redirects=False,
            limits=httpx.Limits(max_connections=opts.concurrency, max_keepalive_connections=opts.concurrency),
        )
