"""Jina Search (``s.jina.ai``).

Format: ``GET https://s.jina.ai/?q=<query>`` with ``Accept: application/json`` and ``Authorization: Bearer <key>``
(jina-ai/reader README "Using s.jina.ai for web search" and JSON mode; Jina's API guide docs.jina.ai, mirrored as
jina-ai/meta-prompt ``v8.txt``, section "Search API", which also documents ``POST /`` with a JSON body; the server,
jina-ai/reader ``src/api/searcher-serper.ts``, takes ``q``, ``num`` (0-20), ``gl``, ``hl``, ``page`` by GET or POST).
``X-Respond-With: no-content`` asks for titles, URLs and descriptions only, without fetching every result page. The
reply is ``{"code": 200, "status": 20000, "data": [{title, url, description, content?, date?, usage}], "meta"}``.
Errors are ``{"code", "name", "status", "message", "readableMessage"}``: 401 without a valid key, 402 when the
account's balance is used up (``InsufficientBalanceError``), 429 over the rate limit (40 requests per minute, 400
with a premium key); an empty search is an error whose message starts "No search results".
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from deepsearcher.errors import ProviderError
from deepsearcher.websearch.base import JinaOptions
from deepsearcher.websearch.http_provider import HttpWebSearch, Request, detail_suffix
from deepsearcher.websearch.results import Hit

MAX_NUM = 20
SNIPPET_CHARS = 500  # a snippet from page content when the description is empty (with_content only)


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str | None = None
    description: str | None = None
    content: str | None = None
    date: str | None = None


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    data: list[_Item]


class JinaSearch(HttpWebSearch):
    """Web search through Jina's s.jina.ai (provider ``jina``)."""

    label = "Jina Search"
    OPTIONAL = ("gl", "hl")
    options: JinaOptions

    def _request(self, query: str, max_results: int, api_key: str | None) -> Request:
        opts = self.options
        params: dict[str, Any] = {"q": query, "num": min(max_results, MAX_NUM)}
        if opts.gl:
            params["gl"] = opts.gl
        if opts.hl:
            params["hl"] = opts.hl
        headers = {"Accept": "application/json", "Authorization": f"Bearer {api_key or ''}"}
        if not opts.with_content:
            headers["X-Respond-With"] = "no-content"
        return Request("GET", "/", params=params, headers=headers)

    def _hits(self, data: Any) -> list[Hit]:
        reply = self._validate(_Reply, data)
        return [Hit(i.title or "", i.url or "", i.description or (i.content or "")[:SNIPPET_CHARS], i.date)
                for i in reply.data]

    def _no_results(self, response: httpx.Response, detail: str) -> bool:
        return 400 <= response.status_code < 500 and detail.startswith("No search results")

    def _special_status(self, response: httpx.Response, detail: str) -> ProviderError | None:
        if response.status_code == 402:
            return ProviderError(f"{self.where} refused the search: the account's balance is used up "
                                 f"(HTTP 402){detail_suffix(detail)}",
                                 hint=f"top up the Jina account of the key in ${self.options.api_key_env}, or switch "
                                      "web_search.provider")
        return None
