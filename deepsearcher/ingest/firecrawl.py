"""Firecrawl (hosted or self-hosted) as a crawler provider, through firecrawl-py's v2 client (extra ``crawl``).

``max_depth: 0`` scrapes the start URL (``POST /v2/scrape``); otherwise a crawl job is started (``POST /v2/crawl``)
and polled (``GET /v2/crawl/{id}``, following ``next`` pages) by the SDK. Pages come back as Markdown and go through
the text loader. ``crawler.options`` is validated with the rest of the config (``FirecrawlOptions`` in
``ingest/options.py``: ``config check`` names an unknown or mistyped option) and mapped to the SDK's keyword names
when the provider is built.

Address policy (``allow_private_urls``, docs/security.md): Firecrawl fetches the pages itself, so we cannot check
the address it connects to; we check what we can: a start URL whose host resolves (here) to a refused address is
not sent, and every page Firecrawl returns is dropped, with the reason, when its final URL's host resolves to a
refused address or does not resolve here. The Firecrawl API URL itself is the operator's choice and is not checked.

The v2 client does not read ``FIRECRAWL_API_URL``; the API URL comes from ``crawler.api_url`` (None = the hosted
service), the key from the variable named by ``crawler.api_key_env``. Only a local server speaking the SDK's
endpoints was exercised here, not the live service.
"""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any, Iterator, Sequence

from pydantic import ValidationError

from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.types import FetchedPage
from deepsearcher.net.policy import AddressPolicy, AddressRefused
from deepsearcher.ingest.options import FirecrawlCrawlerOptions, FirecrawlOptions
from deepsearcher.events import CrawlFetched, CrawlQueued, EventCallback

__all__ = ["FirecrawlCrawler", "FirecrawlOptions", "map_options"]

log = logging.getLogger(__name__)

HOSTED_API = "https://api.firecrawl.dev"


# our option name -> firecrawl-py keyword, for scrape() (and crawl()'s scrape options) and for crawl() only
SCRAPE_NAMES = {"only_main_content": "only_main_content", "include_tags": "include_tags",
                "exclude_tags": "exclude_tags", "wait_for_ms": "wait_for", "headers": "headers", "mobile": "mobile",
                "block_ads": "block_ads", "proxy": "proxy", "max_age_ms": "max_age"}
CRAWL_NAMES = {"sitemap": "sitemap", "allow_subdomains": "allow_subdomains",
               "crawl_entire_domain": "crawl_entire_domain", "ignore_query_parameters": "ignore_query_parameters",
               "max_concurrency": "max_concurrency", "delay_s": "delay"}


def map_options(settings: FirecrawlCrawlerOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """Map ``crawler`` settings (already validated: ``FirecrawlOptions``) to firecrawl-py keywords.

    Returns:
        (scrape keywords, crawl keywords); the crawl ones include the scrape ones.

    Raises:
        ConfigError: ``settings`` built without validation (``model_construct``, ``model_copy(update=…)``) hold
            options that are not valid.
    """
    options = settings.options
    if not isinstance(options, FirecrawlOptions):  # built without validation: validate now
        try:
            options = FirecrawlOptions.model_validate(options)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid Firecrawl option in crawler.options: {problems}",
                              hint=f"accepted: {', '.join(FirecrawlOptions.model_fields)}") from None
    chosen = options.model_dump(exclude_none=True)
    scrape = {"formats": ["markdown"], **{SCRAPE_NAMES[k]: v for k, v in chosen.items() if k in SCRAPE_NAMES}}
    crawl = {
        **scrape, **{CRAWL_NAMES[k]: v for k, v in chosen.items() if k in CRAWL_NAMES},
        "limit": settings.max_pages, "max_discovery_depth": settings.max_depth,
        "allow_external_links": not settings.same_site, "ignore_robots_txt": not settings.respect_robots,
        "timeout": max(1, round(settings.timeout_s)), "poll_interval": settings.poll_interval_s,
    }
    if not settings.same_site:
        crawl.setdefault("allow_subdomains", True)
    if settings.include or settings.exclude:
        crawl.update(include_paths=settings.include or None, exclude_paths=settings.exclude or None,
                     regex_on_full_url=True)  # our patterns are searched in the whole URL, as in the builtin
    return scrape, {k: v for k, v in crawl.items() if v is not None}


class FirecrawlCrawler:
    """Crawler provider backed by a Firecrawl server.

    Args:
        settings: the ``crawler`` settings (provider ``firecrawl``).
        policy: the address policy; None = from ``allow_private_urls`` (None there = allowed).

    Raises:
        ProviderError: firecrawl-py is not installed, or the installed one does not take a mapped keyword.
    """

    def __init__(self, settings: FirecrawlCrawlerOptions, *, policy: AddressPolicy | None = None) -> None:
        self.settings = settings
        if policy is None:
            policy = AddressPolicy.from_setting(settings.allow_private_urls, default=True)
        self.policy = policy
        self.scrape_kwargs, self.crawl_kwargs = map_options(settings)
        try:
            from firecrawl import Firecrawl
        except ModuleNotFoundError:
            raise ProviderError("crawler.provider firecrawl needs the firecrawl-py package",
                                hint="pip install 'deepsearcher[crawl]'") from None
        self.api_url = settings.api_url or HOSTED_API
        api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        self.client = Firecrawl(api_key=api_key, api_url=self.api_url, timeout=max(settings.timeout_s, 30))
        for method, kwargs in (("scrape", self.scrape_kwargs), ("crawl", self.crawl_kwargs)):
            params = inspect.signature(getattr(self.client, method)).parameters
            missing = [k for k in kwargs if k not in params]
            if missing:  # the SDK renamed something: fail before any write rather than send a wrong request
                raise ProviderError(f"the installed firecrawl-py does not accept {', '.join(missing)} in {method}()",
                                    hint="install a firecrawl-py v2 client: pip install 'deepsearcher[crawl]'")

    def crawl(self, start_urls: Sequence[str], on_event: EventCallback) -> Iterator[FetchedPage]:
        """Scrape (max_depth 0) or crawl each start URL; yield its pages.

        Raises:
            ProviderError: Firecrawl is unreachable, refuses the key, wants payment or rate-limits us.
        """
        done = 0
        for start in start_urls:
            on_event(CrawlQueued(fetched=done, queued=done + self.settings.max_pages))
            try:
                refused = self._refusal(start)
                if refused:
                    raise _PageError(refused)
                documents = self._fetch(start)
            except _PageError as exc:
                documents = []
                done += 1
                yield FetchedPage(start, start, error=str(exc))
            for doc in documents:
                done += 1
                on_event(CrawlFetched(fetched=done, queued=done))
                page = _page(start, doc)
                refused = self._refusal(page.url)
                yield FetchedPage(start, page.url, error=refused) if refused else page

    def _refusal(self, url: str) -> str:
        """Why the address policy refuses a URL ("" when it passes or private URLs are allowed)."""
        if self.policy.allow_private:
            return ""
        try:
            self.policy.check_url(url)
        except AddressRefused as exc:
            return str(exc)
        except (OSError, UnicodeError, ValueError) as exc:
            return f"refused: the address of {url} could not be checked ({exc})"
        return ""

    def _fetch(self, start: str) -> list[Any]:
        import requests
        from firecrawl.v2.utils.error_handler import (
            FirecrawlError, PaymentRequiredError, RateLimitError, UnauthorizedError)

        try:
            if self.settings.max_depth == 0:
                return [self.client.scrape(start, **self.scrape_kwargs)]
            job = self.client.crawl(start, **self.crawl_kwargs)
        except UnauthorizedError as exc:
            raise ProviderError(f"Firecrawl at {self.api_url} refused the API key: {exc}",
                                hint=f"set ${self.settings.api_key_env or 'FIRECRAWL_API_KEY'} "
                                     "(crawler.api_key_env names the variable)") from None
        except (PaymentRequiredError, RateLimitError) as exc:
            raise ProviderError(f"Firecrawl at {self.api_url}: {exc}",
                                hint="check the plan and credits of the Firecrawl account") from None
        except requests.RequestException as exc:
            raise ProviderError(f"cannot reach Firecrawl at {self.api_url}: {exc}",
                                hint="check crawler.api_url (for a self-hosted Firecrawl) and the network") from None
        except TimeoutError as exc:  # CrawlJobTimeoutError: stop the job so it does not keep using credits
            self._cancel(getattr(exc, "job_id", None))
            raise _PageError(f"Firecrawl crawl did not finish within {self.settings.timeout_s:g} s "
                             "(crawler.timeout_s)") from None
        except (FirecrawlError, ValueError) as exc:
            raise _PageError(f"Firecrawl: {exc}") from None
        if not job.data and job.status != "completed":
            raise _PageError(f"Firecrawl crawl job {job.status}")
        return list(job.data)

    def _cancel(self, job_id: str | None) -> None:
        if not job_id:
            return
        try:
            self.client.cancel_crawl(job_id)
        except Exception:  # best effort: the timeout is what gets reported
            log.debug("could not cancel Firecrawl job %s", job_id, exc_info=True)


class _PageError(Exception):
    """One start URL failed at Firecrawl; the message is the reason shown to the user."""


def _page(start: str, doc: Any) -> FetchedPage:
    """A FetchedPage from a firecrawl-py Document (Markdown body, metadata with final URL and status)."""
    meta = doc.metadata_typed
    url = meta.url or meta.source_url or start
    status = meta.status_code
    error = ""
    if meta.error or (status is not None and status >= 400):
        error = " ".join(x for x in (f"HTTP {status}" if status else "", meta.error or "") if x)
    return FetchedPage(start, url, (doc.markdown or "").encode("utf-8"), "text/markdown; charset=utf-8", "utf-8",
                       title=meta.title or "", error=error)
