"""One registry maps ``provider:`` names to factories; built-ins register exactly like third-party plugins.

Third-party packages register through the ``deepsearcher.providers`` entry-point group: each entry point is a callable
that receives this module's ``register`` function (after simonw/llm's plugin hooks). Factories import their heavy
dependencies lazily, so ``deepsearcher --help`` never imports torch.
"""

from __future__ import annotations

import logging
from importlib import import_module
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
def register_lazy(kind: str, name: str, target: str) -> None:
    """Register a provider class named ``"package.module:Class"``, imported only when the provider is created."""

    def factory(options: Any) -> Any:
        module, _, cls = target.partition(":")
        return getattr(import_module(module), cls)(options)

    register(kind, name, factory)


for _kind, _name, _target in [
    ("embedding", "sentence_transformers",
     "deepsearcher.embedding.sentence_transformers:SentenceTransformersEmbedder"),
    ("embedding", "openai_compatible", "deepsearcher.embedding.openai_compatible:OpenAICompatibleEmbedder"),
    ("llm", "openai_compatible", "deepsearcher.llm.openai_compatible:OpenAICompatibleChat"),
    ("llm", "llama_cpp", "deepsearcher.llm.llama_cpp:LlamaCppChat"),
    ("crawler", "builtin", "deepsearcher.ingest.crawler:BuiltinCrawler"),
    ("crawler", "firecrawl", "deepsearcher.ingest.firecrawl:FirecrawlCrawler"),
]:
    register_lazy(_kind, _name, _target)
