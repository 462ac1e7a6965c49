"""robots.txt for the built-in crawler: fetched once per origin, through the guarded client, size- and time-capped.

Rules (RFC 9309): 401/403 = all disallowed, other 4xx = all allowed, 5xx = all disallowed; redirects are followed,
across hosts too, at most ``MAX_REDIRECTS`` hops (2.3.1.2), each hop through the same client, so the address policy
applies to every hop; more hops = "unavailable" (allowed). Only the first ``MAX_BYTES`` (500 KiB) of the decoded
file are parsed (2.5: "crawlers SHOULD impose a parsing limit ... MUST be at least 500 kibibytes"; Google reads
exactly that much). One deadline (``timeout_s``) covers all hops of one robots.txt. If robots.txt cannot be fetched
(refused address, timeout, network error) the origin has no rules and the page fetch reports its own failure.

Concurrency: one lock per origin, so a slow robots.txt only holds up fetches of its own origin, and no longer than
its deadline.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from deepsearcher.ingest.decoding import BodyTooLarge, DecodingError, decoded_reader, read_capped
from deepsearcher.net.http import request_deadline
from deepsearcher.net.policy import AddressRefused

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
MAX_BYTES = 500 * 1024


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL (robots.txt is per origin)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def read_robots(client: httpx.Client, origin: str, timeout_s: float, wire_limit: int) -> RobotFileParser | None:
    """robots.txt of an origin; None = no rules (missing, unavailable or unreachable).

    Args:
        client: a guarded client (``guarded_http.guarded_client``): the address policy applies to every hop.
        origin: ``scheme://host[:port]``.
        timeout_s: one wall-clock deadline for all hops and the body.
        wire_limit: bytes on the wire at most (the page limit; the decoded text is cut at ``MAX_BYTES``).
    """
    parser = RobotFileParser(origin + "/robots.txt")
    url = origin + "/robots.txt"
    try:
        with request_deadline(timeout_s):
            for _ in range(MAX_REDIRECTS + 1):
                with client.stream("GET", url) as resp:
                    if resp.is_redirect and "location" in resp.headers:
                        url = urljoin(url, resp.headers["location"])
                        if urlsplit(url).scheme not in {"http", "https"}:
                            return None
                        continue
                    if resp.status_code in {401, 403} or resp.status_code >= 500:
                        parser.disallow_all = True  # type: ignore[attr-defined]  # read by can_fetch
                        return parser
                    if resp.status_code >= 400 or not resp.is_success:
                        return None
                    reader = decoded_reader(resp.iter_raw(), resp.headers.get("content-encoding"), wire_limit)
                    body = read_capped(reader, MAX_BYTES, truncate=True)
                    parser.parse(body.decode("utf-8", errors="replace").splitlines())
                    return parser
            log.debug("robots.txt of %s: more than %d redirects, treated as unavailable", origin, MAX_REDIRECTS)
            return None
    except (AddressRefused, httpx.HTTPError, httpx.InvalidURL, DecodingError, BodyTooLarge) as exc:
        log.debug("robots.txt of %s not read: %s", origin, exc)
        return None


class RobotsCache:
    """robots.txt rules per origin, each fetched once; ``load`` blocks only callers of the same origin.

    Args:
        fetch: ``fetch(origin) -> parser or None`` (``read_robots`` bound to a client and limits).
        user_agent: the name matched against robots.txt groups.
    """

    def __init__(self, fetch: Callable[[str], RobotFileParser | None], user_agent: str) -> None:
        self._fetch = fetch
        self._user_agent = user_agent
        self._rules: dict[str, RobotFileParser | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def known(self, url: str) -> bool:
        """True when the rules of the URL's origin are already loaded (``allowed`` will not fetch)."""
        return origin_of(url) in self._rules

    def load(self, url: str) -> None:
        """Fetch the rules of the URL's origin unless loaded; concurrent callers for one origin wait for one fetch."""
        origin = origin_of(url)
        with self._guard:
            lock = self._locks.setdefault(origin, threading.Lock())
        with lock:
            if origin not in self._rules:
                self._rules[origin] = self._fetch(origin)

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets us fetch the URL (loading its origin's rules first if needed)."""
        self.load(url)
        parser = self._rules[origin_of(url)]
        return parser is None or parser.can_fetch(self._user_agent, url)
