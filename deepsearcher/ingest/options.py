"""Options of the loaders and crawlers (the ``loader`` and ``crawler`` sections of config.yaml).

``LoaderOptions`` is both the built-in loaders' options and the base of every ``loader`` provider's (the file
selection and record keys apply to all of them); ``CrawlScope`` is the base of every ``crawler`` provider's (what it
is told to fetch). Kept apart from the providers so that validating a config imports neither httpx nor an extractor.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from deepsearcher.options import ProviderOptions, StrictModel


class LoaderOptions(ProviderOptions):
    """How files become Documents (the base of every ``loader`` provider's options: the file selection and record
    keys apply to all of them)."""

    provider: str = Field("builtin", description="builtin, unstructured (extra), or a plugin's loader.")
    include: list[str] = Field(default_factory=list, description="Glob patterns a file must match (folders).")
    exclude: list[str] = Field(
        default_factory=lambda: ["**/.git/**", "**/__pycache__/**", "**/.*"],
        description="Glob patterns of files to skip (folders).",
    )
    json_text_path: str = Field(
        "text", description="JSON/JSONL: path to each record's text: keys joined by dots, [] for each element of a "
                            "list, e.g. text, body.text or data[].body (records under data). A list of strings is "
                            "joined as paragraphs. Old name: json_text_key.")
    json_title_path: str | None = Field(
        "title", description="JSON/JSONL: path to the title inside a record (e.g. meta.title); null = none. Old "
                             "name: json_title_key.")
    docx_headers_footers: bool = Field(
        False, description="DOCX: also store page headers and footers (they repeat on every page, so off).")
    unstructured_strategy: Literal["fast", "auto"] = Field("fast", description="unstructured partition strategy.")

    @model_validator(mode="before")
    @classmethod
    def _old_key_names(cls, data: Any) -> Any:
        """Accept the old ``json_text_key`` / ``json_title_key`` (a key is a one-step path)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in (("json_text_key", "json_text_path"), ("json_title_key", "json_title_path")):
            if old in data:
                value = data.pop(old)
                if new in data and data[new] != value:
                    raise ValueError(f"{old} is the old name of {new}; give only {new}")
                data[new] = value
        return data


class CrawlScope(ProviderOptions):
    """What every crawler provider is told to fetch: depth, page limit, host, robots.txt and URL patterns."""

    max_depth: int = Field(1, ge=0, description="Link depth from the start URL (0 = only that page).")
    max_pages: int = Field(50, gt=0, description="Pages fetched per start URL at most.")
    same_site: bool = Field(True, description="Stay on the start URL's host (links and redirects).")
    respect_robots: bool = Field(True, description="Obey robots.txt.")
    include: list[str] = Field(default_factory=list, description="Regexes a URL must match to be fetched.")
    exclude: list[str] = Field(default_factory=list, description="Regexes of URLs never fetched.")
    allow_private_urls: bool | None = Field(
        None, description="Fetch URLs whose host resolves to a loopback, private, link-local (cloud metadata), CGNAT, "
                          "multicast, reserved or documentation address (see docs/security.md); checked on every "
                          "connection, redirect and link. None = allowed for the CLI and the Python API (you reach "
                          "your own network anyway); the HTTP server replaces it with its own rule "
                          "(server.allow_private_urls). false = refused everywhere.")

    @field_validator("include", "exclude")
    @classmethod
    def _valid_regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression {pattern!r}: {exc}") from None
        return patterns


class BuiltinCrawlerOptions(CrawlScope):
    """The built-in breadth-first crawler (httpx + trafilatura)."""

    provider: Literal["builtin"] = "builtin"
    concurrency: int = Field(4, gt=0, description="Requests in flight at once.")
    timeout_s: float = Field(20, gt=0, description="One wall-clock deadline per request in seconds, from connecting "
                                                   "to the last byte (robots.txt: all its redirects together).")
    max_page_mb: float = Field(20, gt=0, description="Responses larger than this many MB, on the wire or decoded "
                                                     "(gzip, deflate, br, zstd), are skipped.")
    user_agent: str = Field("deepsearcher-crawler (+https://github.com/deepsearcher)",
                            description="User-Agent header, also the name matched against robots.txt groups.")


class FirecrawlOptions(StrictModel):
    """``crawler.options`` for Firecrawl, by our names (each maps to one firecrawl-py v2 keyword); a boolean for a
    number is an error, as everywhere in the config."""

    only_main_content: bool | None = Field(None, description="Drop headers, navs and footers (Firecrawl default).")
    include_tags: list[str] | None = Field(None, description="HTML tags/selectors to keep.")
    exclude_tags: list[str] | None = Field(None, description="HTML tags/selectors to drop.")
    wait_for_ms: int | None = Field(None, ge=0, description="Wait before scraping a page (JavaScript sites).")
    headers: dict[str, str] | None = Field(None, description="HTTP headers sent to the site.")
    mobile: bool | None = Field(None, description="Emulate a mobile device.")
    block_ads: bool | None = Field(None, description="Block ads and cookie banners.")
    proxy: Literal["basic", "stealth", "auto"] | None = Field(None, description="Firecrawl proxy mode.")
    max_age_ms: int | None = Field(None, ge=0, description="Accept a cached page this recent.")
    sitemap: Literal["skip", "include", "only"] = Field(
        "skip", description="Crawl: use the site's sitemap (skip keeps max_depth meaning link depth).")
    allow_subdomains: bool | None = Field(None, description="Crawl: follow subdomains of the start host.")
    crawl_entire_domain: bool | None = Field(None, description="Crawl: follow links to parent paths too.")
    ignore_query_parameters: bool | None = Field(None, description="Crawl: treat ?a=1 and ?a=2 as one page.")
    max_concurrency: int | None = Field(None, gt=0, description="Crawl: pages scraped at once.")
    delay_s: int | None = Field(None, ge=0, description="Crawl: seconds between page scrapes.")



class FirecrawlCrawlerOptions(CrawlScope):
    """Firecrawl (hosted or self-hosted) through firecrawl-py (extra ``crawl``); max_pages is Firecrawl's limit and
    same_site keeps it off external links and subdomains."""

    provider: Literal["firecrawl"] = "firecrawl"
    api_url: str | None = Field(None, description="Self-hosted Firecrawl URL; None = the hosted service.")
    api_key_env: str | None = Field("FIRECRAWL_API_KEY", description="Environment variable holding the API key.")
    timeout_s: float = Field(600, gt=0, description="Wait this long for a crawl job, then cancel it.")
    poll_interval_s: float = Field(2, gt=0, description="Seconds between crawl status polls.")
    options: FirecrawlOptions = Field(default_factory=FirecrawlOptions,
                                      description="More Firecrawl options by our names (each maps to one firecrawl-py "
                                                  "keyword; see docs/crawling.md).")
