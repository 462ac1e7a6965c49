"""Tavily search API.

Format (https://docs.tavily.com/documentation/api-reference/endpoint/search, and the official client
tavily-ai/tavily-python ``tavily/tavily.py``): ``POST https://api.tavily.com/search`` with ``Authorization: Bearer
tvly-...`` (older clients put ``api_key`` in the body; the current API reference and client use the header) and a JSON
body ``{query, max_results (0-20), search_depth (basic|advanced), topic (general|news|finance), time_range?,
include_domains?, exclude_domains?, include_answer, include_raw_content, include_images}``. The reply is ``{query,
answer?, images, results: [{title, url, content, score, raw_content?, published_date? (news)}], response_time}``.
Errors carry ``{"detail": {"error": "..."}}``: 400 bad request, 401 missing or invalid key, 429 too many requests,
432 plan limit exceeded, 433 pay-as-you-go limit exceeded, 5xx server error
(https://help.tavily.com/articles/8645538886-understanding-http-errors).
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from deepsearcher.errors import ProviderError
from deepsearcher.websearch.base import TavilyOptions
from deepsearcher.websearch.http_provider import HttpWebSearch, Request, detail_suffix
from deepsearcher.websearch.results import Hit

MAX_RESULTS = 20


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str | None = None
    content: str | None = None
    published_date: str | None = None


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[_Item]


class TavilySearch(HttpWebSearch):
    """Web search through Tavily (provider ``tavily``)."""

    label = "Tavily"
    OPTIONAL = ("time_range", "include_domains", "exclude_domains")
    options: TavilyOptions

    def _request(self, query: str, max_results: int, api_key: str | None) -> Request:
        opts = self.options
        body: dict[str, Any] = {
            "query": query, "max_results": min(max_results, MAX_RESULTS), "search_depth": opts.search_depth,
            "topic": opts.topic, "include_answer": False, "include_raw_content": False, "include_images": False,
        }
        if opts.time_range:
            body["time_range"] = opts.time_range
        if opts.include_domains:
            body["include_domains"] = opts.include_domains
        if opts.exclude_domains:
            body["exclude_domains"] = opts.exclude_domains
        headers = {"Accept": "application/json", "Authorization": f"Bearer {api_key or ''}"}
        return Request("POST", "/search", json_body=body, headers=headers)

    def _hits(self, data: Any) -> list[Hit]:
        reply = self._validate(_Reply, data)
        return [Hit(i.title or "", i.url or "", i.content or "", i.published_date) for i in reply.results]

    def _special_status(self, response: httpx.Response, detail: str) -> ProviderError | None:
        if response.status_code in (432, 433):
            limit = "plan's usage limit" if response.status_code == 432 else "pay-as-you-go limit"
            return ProviderError(f"{self.where} refused the search: the account's {limit} is used up "
                                 f"(HTTP {response.status_code}){detail_suffix(detail)}",
                                 hint="upgrade the plan or raise the limit on the Tavily dashboard, or switch "
                                      "web_search.provider")
        return None
