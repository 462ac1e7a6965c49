"""Web search providers (registry kind ``web_search``): SearXNG, Brave Search, Tavily and Jina Search.

Importing this package is cheap (pydantic only); a provider module (and httpx) is imported when the provider is built.
``PROVIDERS`` maps each ``provider:`` name to its class (as ``"module:Class"``, for ``registry.register_lazy``) and its
options model.
"""

from __future__ import annotations

from pydantic import BaseModel

from deepsearcher.websearch.base import (
    BraveOptions, JinaOptions, SearxngOptions, TavilyOptions, WebResult, WebSearch, WebSearchOptions,
    WebSearchOptionsBase)

PROVIDERS: dict[str, tuple[str, type[BaseModel]]] = {
    "searxng": ("deepsearcher.websearch.searxng:SearxngSearch", SearxngOptions),
    "brave": ("deepsearcher.websearch.brave:BraveSearch", BraveOptions),
    "tavily": ("deepsearcher.websearch.tavily:TavilySearch", TavilyOptions),
    "jina": ("deepsearcher.websearch.jina:JinaSearch", JinaOptions),
}

__all__ = ["PROVIDERS", "BraveOptions", "JinaOptions", "SearxngOptions", "TavilyOptions", "WebResult", "WebSearch",
           "WebSearchOptions", "WebSearchOptionsBase"]
