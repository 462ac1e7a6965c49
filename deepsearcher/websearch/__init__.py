"""Web search providers (registry kind ``web_search``): SearXNG, Brave Search, Tavily and Jina Search.

Importing this package is cheap (pydantic and the settings models); a provider module (and httpx) is imported when the
provider is built. ``PROVIDERS`` is the table ``deepsearcher.builtins`` registers: each ``provider:`` name with its
class (as ``"module:Class"``, imported on first use), its options model and a one-line description.
"""

from __future__ import annotations

from deepsearcher.websearch.base import (
    BraveOptions, JinaOptions, SearxngOptions, TavilyOptions, WebResult, WebSearch, WebSearchOptions,
    WebSearchOptionsBase)

PROVIDERS: dict[str, tuple[str, type[WebSearchOptionsBase], str]] = {
    "searxng": ("deepsearcher.websearch.searxng:SearxngSearch", SearxngOptions,
                "A self-hosted SearXNG instance through its JSON search API (no key)."),
    "brave": ("deepsearcher.websearch.brave:BraveSearch", BraveOptions,
              "The Brave Search API (key in BRAVE_SEARCH_API_KEY)."),
    "tavily": ("deepsearcher.websearch.tavily:TavilySearch", TavilyOptions,
               "Tavily's search API (key in TAVILY_API_KEY)."),
    "jina": ("deepsearcher.websearch.jina:JinaSearch", JinaOptions,
             "Jina Search, s.jina.ai (key in JINA_API_KEY)."),
}

__all__ = ["PROVIDERS", "BraveOptions", "JinaOptions", "SearxngOptions", "TavilyOptions", "WebResult", "WebSearch",
           "WebSearchOptions", "WebSearchOptionsBase"]
