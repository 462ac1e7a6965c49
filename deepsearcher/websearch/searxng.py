"""SearXNG (self-hosted metasearch) through its search API.

Format (https://docs.searxng.org/dev/search_api.html): ``GET /search`` with ``q`` (required), ``format=json``,
optional ``categories`` and ``engines`` (comma-separated), ``language``, ``pageno``, ``time_range`` (day, month,
year) and ``safesearch`` (0, 1, 2). The JSON reply carries ``results: [{title, url, content, publishedDate?, engine,
score, ...}]`` plus ``answers``, ``infoboxes`` and ``suggestions`` (unused here) and ``unresponsive_engines``
(``[[engine, reason], …]``: engines that failed this search, e.g. suspended after a CAPTCHA; reported as
``degraded``). "Requesting an unset format will
return a 403 Forbidden error": JSON must be listed in ``search.formats`` of the instance's settings.yml, and many
public instances leave it off. There is no result-count parameter; one page (about 10-20 results) is fetched and cut
to ``max_results``.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from deepsearcher.errors import ProviderError
from deepsearcher.websearch.base import SearxngOptions
from deepsearcher.websearch.http_provider import HttpWebSearch, Request
from deepsearcher.websearch.results import Hit


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str | None = None
    content: str | None = None
    publishedDate: str | None = None


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[_Item]
    unresponsive_engines: list[list[str]] = []  # [[engine, reason], …]: engines that did not answer this search


class SearxngSearch(HttpWebSearch):
    """Web search on a SearXNG instance (provider ``searxng``); no key unless the instance sits behind a proxy."""

    label = "SearXNG"
    OPTIONAL = ("categories", "engines", "language", "time_range", "safesearch")
    options: SearxngOptions

    def _request(self, query: str, max_results: int, api_key: str | None) -> Request:
        opts = self.options
        params: dict[str, Any] = {"q": query, "format": "json"}
        if opts.categories:
            params["categories"] = ",".join(opts.categories)
        if opts.engines:
            params["engines"] = ",".join(opts.engines)
        if opts.language:
            params["language"] = opts.language
        if opts.time_range:
            params["time_range"] = opts.time_range
        if opts.safesearch is not None:
            params["safesearch"] = opts.safesearch
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return Request("GET", "/search", params=params, headers=headers)

    def _hits(self, data: Any) -> list[Hit]:
        reply = self._validate(_Reply, data)
        engines = [": ".join(str(p) for p in pair[:2]) for pair in reply.unresponsive_engines if pair]
        self._last.degraded = [*self.degraded, *engines]  # after a "searched without …" of a retry, not instead
        return [Hit(i.title or "", i.url or "", i.content or "", i.publishedDate) for i in reply.results]

    def _special_status(self, response: httpx.Response, detail: str) -> ProviderError | None:
        if response.status_code != 403:
            return None
        env = self.options.api_key_env
        proxy = f"; if a proxy in front of it checks a token, check ${env} too" if env else ""
        return ProviderError(
            f"{self.where} refused format=json (HTTP 403): JSON output is probably not enabled on this instance",
            hint="add json to search.formats in the instance's settings.yml (formats: [html, json]) and restart it "
                 f"(docs/web-search.md){proxy}")

    def _connect_hint(self) -> str:
        return ("start the SearXNG instance (docs/web-search.md shows a one-line docker command) or set "
                "web_search.base_url to where it runs")
