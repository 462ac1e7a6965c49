"""Brave Search API, web results.

Format (https://api-dashboard.search.brave.com/api-reference/web/search/get and
https://api.search.brave.com/app/documentation/web-search/responses): ``GET https://api.search.brave.com/res/v1/web/
search`` with the key in the ``X-Subscription-Token`` header, ``Accept: application/json``; query parameters ``q``
(required, at most 400 characters and 50 words), ``count`` (1-20), ``country``, ``search_lang``, ``safesearch`` (off,
moderate, strict), ``freshness`` (pd, pw, pm, py or a date range). The reply (``WebSearchApiResponse``, ``type:
"search"``) has ``web.results: [{title, url, description, page_age?, age?, ...}]``; ``web`` is absent when there are no
web results; descriptions mark query words with ``<strong>``. Errors are ``{"type": "ErrorResponse", "error": {"status",
"code", "detail"}}``; an invalid key is HTTP 422 with code ``SUBSCRIPTION_TOKEN_INVALID`` (seen in the field, e.g.
github.com/nearai/ironclaw/issues/2780). Rate limits come as ``X-RateLimit-Reset: 1, 1419704`` (seconds until each
window -- per second, per month -- resets) with ``X-RateLimit-Remaining`` per window
(https://api.search.brave.com/app/documentation/web-search/response-headers).
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from deepsearcher.errors import ProviderError
from deepsearcher.websearch.base import BraveOptions
from deepsearcher.websearch.http_provider import HttpWebSearch, Request, retry_after_seconds
from deepsearcher.websearch.results import Hit

MAX_COUNT = 20
MAX_QUERY_CHARS = 400
MAX_QUERY_WORDS = 50


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str | None = None
    description: str | None = None
    page_age: str | None = None


class _Web(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[_Item]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    web: _Web | None = None


class BraveSearch(HttpWebSearch):
    """Web search through the Brave Search API (provider ``brave``)."""

    label = "Brave Search"
    OPTIONAL = ("country", "search_lang", "safesearch", "freshness")
    options: BraveOptions

    def _request(self, query: str, max_results: int, api_key: str | None) -> Request:
        words = len(query.split())
        if len(query) > MAX_QUERY_CHARS or words > MAX_QUERY_WORDS:
            raise ProviderError(f"the query is too long for Brave Search ({len(query)} characters, {words} words; "
                                f"the API takes at most {MAX_QUERY_CHARS} characters and {MAX_QUERY_WORDS} words)",
                                hint="search with a shorter query (keywords rather than the whole question)")
        opts = self.options
        params: dict[str, Any] = {"q": query, "count": min(max_results, MAX_COUNT)}
        for name in ("country", "search_lang", "safesearch", "freshness"):
            value = getattr(opts, name)
            if value is not None:
                params[name] = value
        headers = {"Accept": "application/json", "X-Subscription-Token": api_key or ""}
        return Request("GET", "/web/search", params=params, headers=headers)

    def _hits(self, data: Any) -> list[Hit]:
        reply = self._validate(_Reply, data)
        if reply.type != "search":
            raise self._shape_error(f"type is {reply.type!r}, expected 'search'")
        if reply.web is None:  # no web results for this query
            return []
        return [Hit(i.title or "", i.url or "", i.description or "", i.page_age) for i in reply.web.results]

    def _special_status(self, response: httpx.Response, detail: str) -> ProviderError | None:
        if response.status_code == 422 and _error_code(response) == "SUBSCRIPTION_TOKEN_INVALID":
            return self._refused(422, detail)
        return None

    def _rate_limit_wait(self, response: httpx.Response) -> float | None:
        """``Retry-After`` if sent, else the reset time of the exhausted window(s) from ``X-RateLimit-*``."""
        header = retry_after_seconds(response.headers.get("retry-after"))
        if header is not None:
            return header
        resets = _numbers(response.headers.get("x-ratelimit-reset"))
        if not resets:
            return None
        remaining = _numbers(response.headers.get("x-ratelimit-remaining"))
        exhausted = [reset for reset, left in zip(resets, remaining) if left <= 0]
        return max(exhausted) if exhausted else resets[0]


def _numbers(header: str | None) -> list[float]:
    out = []
    for part in (header or "").split(","):
        try:
            out.append(float(part.strip()))
        except ValueError:
            return []
    return out


def _error_code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code", "")) if isinstance(error, dict) else ""
