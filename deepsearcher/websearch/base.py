"""Web search at query time: each provider's options model (the result type ``WebResult`` lives in
``deepsearcher.types`` and the ``WebSearch`` protocol in ``deepsearcher.protocols``; both are re-exported here).

Every provider sends only the search query text to the search service, never a document or a chunk. The options
models subclass ``deepsearcher.settings.ProviderOptions`` and are import-light (no httpx, no provider module), so
config validation never loads the HTTP stack; the
``provider:`` value selects the model, as for every other kind in the registry. Secrets never live in the config
file: ``api_key_env`` names the environment variable that holds the key (as ``llm.api_key_env`` does).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from deepsearcher.protocols import WebSearch
from deepsearcher.settings import ProviderOptions
from deepsearcher.types import WebResult

__all__ = ["BraveOptions", "JinaOptions", "SearxngOptions", "TavilyOptions", "WebResult", "WebSearch",
           "WebSearchOptions", "WebSearchOptionsBase"]


class WebSearchOptionsBase(ProviderOptions):
    """What every web search provider accepts: where, which key, and how long to wait and retry (plugins may
    subclass it too)."""

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
    max_reply_mb: float = Field(4.0, gt=0, le=100, description="Largest reply read from the service, in MB; a "
                                                               "larger one ends the search with an error (a result "
                                                               "page is a few KB; the reply is never read whole).")

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

    @field_validator("language")
    @classmethod
    def _language(cls, value: str | None) -> str | None:
        if value is not None and not SEARXNG_LANGUAGE.fullmatch(value):
            raise ValueError(f"language must be all, auto or a locale such as en, de-CH or zh-Hant-TW, got {value!r}")
        return value


#: the ``search_lang`` values of Brave's web search API documentation; anything else is answered HTTP 422
BRAVE_SEARCH_LANGS = ("ar", "eu", "bn", "bg", "ca", "zh-hans", "zh-hant", "hr", "cs", "da", "nl", "en", "en-gb", "et",
                      "fi", "fr", "gl", "de", "gu", "he", "hi", "hu", "is", "it", "jp", "kn", "ko", "lv", "lt", "ms",
                      "ml", "mr", "nb", "pl", "pt-br", "pt-pt", "pa", "ro", "ru", "sr", "sk", "sl", "es", "sv", "ta",
                      "te", "th", "tr", "uk", "vi")
#: the usual codes Brave spells otherwise
BRAVE_LANG_HINTS = {"ja": "jp (Brave's code for Japanese)", "zh": "zh-hans or zh-hant", "zh-cn": "zh-hans",
                    "zh-tw": "zh-hant", "pt": "pt-br or pt-pt", "no": "nb", "nn": "nb", "en-us": "en",
                    "iw": "he"}
#: a SearXNG ``language``: all, auto, or a locale (en, de-CH, zh-Hant-TW)
SEARXNG_LANGUAGE = re.compile(r"all|auto|[a-z]{2,3}(-[A-Za-z]{4})?(-[A-Za-z]{2}|-\d{3})?", re.IGNORECASE)


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

    @field_validator("country")
    @classmethod
    def _country_code(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z]{2}|ALL", value):
            raise ValueError(f"country must be a 2-letter country code (US, DE) or ALL, got {value!r}")
        return value

    @field_validator("search_lang")
    @classmethod
    def _search_lang(cls, value: str | None) -> str | None:
        if value is None or value.lower() in BRAVE_SEARCH_LANGS:
            return value.lower() if value else value
        near = BRAVE_LANG_HINTS.get(value.lower())
        raise ValueError(f"search_lang {value!r} is not a language Brave accepts (it answers 422)"
                         + (f"; write {near}" if near else "") + f"; accepted: {', '.join(BRAVE_SEARCH_LANGS)}")

    @field_validator("freshness")
    @classmethod
    def _freshness(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"p[dwmy]|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2}", value):
            raise ValueError(f"freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD, got {value!r}")
        return value


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

    @field_validator("gl", "hl")
    @classmethod
    def _two_letters(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z]{2}", value):
            raise ValueError(f"must be a 2-letter code (us, de), got {value!r}")
        return value


WebSearchOptions = SearxngOptions | BraveOptions | TavilyOptions | JinaOptions
