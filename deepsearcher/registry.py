"""One registry maps ``provider:`` names to factories; built-ins register exactly like third-party plugins.

Third-party packages register through the ``deepsearcher.providers`` entry-point group: each entry point is a callable
that receives this module's ``register`` function (after simonw/llm's plugin hooks). Factories import their heavy
dependencies lazily, so ``deepsearcher --help`` never imports torch.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from typing import Any, Callable

from deepsearcher.errors import ConfigError

log = logging.getLogger(__name__)

Factory = Callable[[Any], Any]
_REGISTRY: dict[tuple[str, str], Factory] = {}
_plugins_loaded = False


def register(kind: str, name: str, factory: Factory) -> None:
    """Register ``factory(options) -> provider`` for ``kind`` ("llm", "embedding", "crawler", ...) and ``name``."""
    _REGISTRY[(kind, name)] = factory


def create(kind: str, options: Any) -> Any:
    """Build the provider named by ``options.provider``.

    Raises:
        ConfigError: no provider of that kind has that name (the message lists the known ones).
    """
    _load_plugins()
    name = getattr(options, "provider", None)
    factory = _REGISTRY.get((kind, str(name)))
    if factory is None:
        known = sorted(n for k, n in _REGISTRY if k == kind)
        raise ConfigError(f"unknown {kind} provider {name!r}; known: {', '.join(known)}")
    return factory(options)


def names(kind: str) -> list[str]:
    _load_plugins()
    return sorted(n for k, n in _REGISTRY if k == kind)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group="deepsearcher.providers"):
        try:
            ep.load()(register)
        except Exception:  # a broken plugin must not break the built-ins; it is logged with its traceback
            log.exception("provider plugin %s failed to load", ep.name)


# --- built-ins -----------------------------------------------------------------------------------------------------
def _st_embedder(options: Any) -> Any:
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder(options)


def _oa_embedder(options: Any) -> Any:
    from deepsearcher.embedding.openai_compatible import OpenAICompatibleEmbedder

    return OpenAICompatibleEmbedder(options)


register("embedding", "sentence_transformers", _st_embedder)
register("embedding", "openai_compatible", _oa_embedder)


def _oa_chat(options: Any) -> Any:
    from deepsearcher.llm.openai_compatible import OpenAICompatibleChat

    return OpenAICompatibleChat(options)


def _llama_cpp_chat(options: Any) -> Any:
    from deepsearcher.llm.llama_cpp import LlamaCppChat

    return LlamaCppChat(options)


register("llm", "openai_compatible", _oa_chat)
register("llm", "llama_cpp", _llama_cpp_chat)


def _builtin_crawler(options: Any) -> Any:
    from deepsearcher.ingest.crawler import BuiltinCrawler

    return BuiltinCrawler(options)


def _firecrawl_crawler(options: Any) -> Any:
    from deepsearcher.ingest.firecrawl import FirecrawlCrawler

    return FirecrawlCrawler(options)


register("crawler", "builtin", _builtin_crawler)
register("crawler", "firecrawl", _firecrawl_crawler)
