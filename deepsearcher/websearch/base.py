"""Web search at query time: the result type, the provider protocol and each provider's options model.

Every provider sends only the search query text to the search service, never a document or a chunk. The options
models are import-light (pydantic only) so config validation never imports httpx or a provider module; the
``provider:`` value selects the model, as for every other kind in the registry. Secrets never live in the config
file: ``api_key_env`` names the environment variable that holds the key (as ``llm.api_key_env`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator


@dataclass(frozen=True)
class WebResult:
    """One web search hit, cleaned and deduplicated.

    Attributes:
        title: page title as the provider reports it, HTML tags and entities resolved ("" when absent).
        url: normalised http(s) URL (lower-case scheme and host, tracking parameters and fragment removed); the
            identity of the result within one search, and what a citation shows.
        snippet: the provider's text excerpt as plain text (tags stripped, white space collapsed).
        provider: the ``provider:`` name that found it ("searxng", "brave", "tavily", "jina").
        rank: 1-based position in the cleaned list (the provider's order, after duplicates were dropped).
        published: publication date as the provider gives it (ISO 8601 text where documented), or None.
    """

    title: str
    url: str
    snippet: str
    provider: str
    rank: int
    published: str | None = None


@runtime_checkable
class WebSearch(Protocol):
    """A web search provider: one query in, at most ``max_results`` cleaned results out.

    ``search`` raises ``deepsearcher.errors.ProviderError`` (with a hint saying what to do) for every failure of the
    service: missing or refused key, rate limit after retries, timeout, unreachable host, a reply that is not the
    documented JSON. It returns ``[]`` when the service found nothing.
    """

    name: str

    def search(self, query: str, *, max_results: int = 10) -> list[WebResult]: ...


class WebSearchOptionsBase(BaseModel):
    """What every web search provider accepts: where, which key, and how long to wait and retry (plugins may
    subclass it too)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    base_url: str = Field(..., description="API base URL (override it for a proxy, a self-hosted service or tests).")
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    api_key: str | None = Field(None, description="Refused: keys are never read from the file; use api_key_env.")
    timeout_s: float = Field(15, gt=0, description="Per-request timeout in seconds (connect to last byte).")
    max_retries: int = Field(2, ge=0, le=10, description="Retries on HTTP 429, 5xx and timeouts.")
    retry_backoff_s: float = Field(1.0, ge=0, description="First wait between retries in seconds; doubled each "
                                                           "retry (with jitter) unless the service sends Retry-After.")
    max_retry_wait_s: float = Field(30, ge=0, description="Longest wait honoured between retries, in seconds; a "
                                                           "longer Retry-After ends the search with a rate-limit "
                                                           "error.")

    @field_validator("api_key")
    @classmethod
    def _no_literal_key(cls, value: str | None) -> str | None:
        if value:
            raise ValueError("secrets are not read from the file: put the key in an environment variable and name "
                             "it in web_search.api_key_env")
        return value

    @field_validator("base_url")
    @classmethod
    def _http_base_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")


class SearxngOptions(WebSearchOptionsBase):
    """A self-hosted SearXNG instance through its JSON search API (``GET /search?format=json``).

    The instance must allow the JSON format (``search.formats`` in its settings.yml); see docs/web-search.md.
    """

    provider: Literal["searxng"] = "searxng"
    base_url: str = Field("http://127.0.0.1:8888", description="URL of the SearXNG instance (no /search suffix).")
    api_key_env: str | None = Field(None, description="Optional: variable whose value is sent as a Bearer token, for "
                                                      "an instance behind an authenticating proxy.")
    categories: list[str] = Field(default_factory=list, description="SearXNG categories (e.g. general, news); "
                                                                    "empty = the instance's default.")
    engines: list[str] = Field(default_factory=list, description="SearXNG engines to ask; empty = the instance's "
                                                                 "default.")
    language: str | None = Field(None, description="Language code (e.g. en, de); None = the instance's default.")
    time_range: Literal["day", "month", "year"] | None = Field(None, description="Only results from the last day, "
                                                                                 "month or year.")
    safesearch: Literal[0, 1, 2] | None = Field(None, description="0 off, 1 moderate, 2 strict; None = default.")


class BraveOptions(WebSearchOptionsBase):
    """The Brave Search API web endpoint (``GET /res/v1/web/search``, key in ``X-Subscription-Token``)."""

    provider: Literal["brave"] = "brave"
    base_url: str = Field("https://api.search.brave.com/res/v1", description="Brave Search API base URL.")
    api_key_env: str | None = Field("BRAVE_SEARCH_API_KEY", description="Environment variable holding the Brave "
                                                                        "Search API subscription token.")
    country: str | None = Field(None, description="2-letter country code the results come from; None = Brave's "
                                                  "default (US).")
    search_lang: str | None = Field(None, description="Language code of the results; None = Brave's default (en).")
    safesearch: Literal["off", "moderate", "strict"] | None = Field(None, description="Adult-content filter; None = "
                                                                                      "Brave's default (moderate).")
    freshness: str | None = Field(None, description="pd, pw, pm, py (past day/week/month/year) or "
                                                    "YYYY-MM-DDtoYYYY-MM-DD; None = any time.")


class TavilyOptions(WebSearchOptionsBase):
    """Tavily's search API (``POST /search``, key as ``Authorization: Bearer``)."""

    provider: Literal["tavily"] = "tavily"
    base_url: str = Field("https://api.tavily.com", description="Tavily API base URL.")
    api_key_env: str | None = Field("TAVILY_API_KEY", description="Environment variable holding the Tavily API key "
                                                                  "(tvly-...).")
    search_depth: Literal["basic", "advanced"] = Field("basic", description="basic costs 1 API credit per search, "
                                                                           "advanced 2.")
    topic: Literal["general", "news", "finance"] = Field("general", description="Search category.")
    time_range: Literal["day", "week", "month", "year"] | None = Field(None, description="Only results published or "
                                                                                         "updated in this range.")
    include_domains: list[str] = Field(default_factory=list, description="Only results from these domains.")
    exclude_domains: list[str] = Field(default_factory=list, description="Never results from these domains.")


class JinaOptions(WebSearchOptionsBase):
    """Jina's search API (``GET https://s.jina.ai/?q=...``, ``Accept: application/json``, Bearer key)."""

    provider: Literal["jina"] = "jina"
    base_url: str = Field("https://s.jina.ai", description="Jina Search base URL (https://eu.s.jina.ai keeps "
                                                           "processing in the EU).")
    api_key_env: str | None = Field("JINA_API_KEY", description="Environment variable holding the Jina API key.")
    with_content: bool = Field(False, description="Ask Jina to fetch each result page too (costs more tokens and "
                                                  "time); off = titles, URLs and descriptions only, pages are read "
                                                  "through the crawler.")
    gl: str | None = Field(None, description="2-letter country code to search from; None = Jina's default.")
    hl: str | None = Field(None, description="2-letter interface language code; None = Jina's default.")


WebSearchOptions = SearxngOptions | BraveOptions | TavilyOptions | JinaOptions
