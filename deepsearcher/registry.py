"""One registry of providers and agents: ``(kind, name) -> (factory, options model)``, the single source of truth.

Kinds: ``embedding``, ``llm``, ``vector_db``, ``loader``, ``crawler``, ``web_search`` and ``agent``. The config's
``provider:`` names (and ``query.agent`` / ``--agent``) are looked up here, and config validation is assembled from
the registered options models (``deepsearcher.settings.settings_model``), so a plugin's options are checked exactly
like a built-in's.

Plugins: a distribution declares an entry point in the group ``deepsearcher.providers`` whose object is a hook
``register(registry)`` called with this module's ``Registry``; it calls ``registry.register(kind, name, factory,
options, description=…)``. Built-ins are registered by the same kind of hook (``deepsearcher.builtins:register``),
loaded first (after simonw/llm, which loads its default models through its own plugin mechanism).

Factories take the validated options model and return the provider; they import heavy dependencies lazily, so
``deepsearcher --help`` never imports torch. A factory may be given as ``"package.module:callable"`` and is then
imported on first use.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, Callable, Iterator

from pydantic import BaseModel

from deepsearcher.errors import ConfigError

log = logging.getLogger(__name__)

KINDS = ("embedding", "llm", "vector_db", "loader", "crawler", "web_search", "agent")
ENTRY_POINT_GROUP = "deepsearcher.providers"
BUILTIN_HOOK = "deepsearcher.builtins:register"

Factory = Callable[[Any], Any]


@dataclass(frozen=True)
class Provider:
    """One registered provider.

    Attributes:
        kind: one of ``KINDS``.
        name: the name used in ``config.yaml`` (``provider: name``) or with ``--agent``.
        factory: ``factory(options) -> provider`` (or a ``"module:callable"`` string, imported on first use).
        options: the pydantic options model validated from the config section, or None for a provider without
            options (its section may then hold only ``provider:``).
        description: one line shown by ``deepsearcher config providers`` (and, for agents, to the agent router).
        origin: "builtin" or the entry point that registered it.
    """

    kind: str
    name: str
    factory: Factory | str
    options: type[BaseModel] | str | None = None
    description: str = ""
    origin: str = "builtin"

    def options_model(self) -> type[BaseModel] | None:
        """The options model, imported when it was registered by name."""
        return _resolve(self.options) if isinstance(self.options, str) else self.options

    def create(self, options: Any) -> Any:
        """Build the provider from its validated options."""
        factory = _resolve(self.factory) if isinstance(self.factory, str) else self.factory
        return factory(options)


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)


class Registry:
    """The providers of one process (``deepsearcher.registry.registry``); plugins are loaded on first look-up."""

    def __init__(self) -> None:
        self._providers: dict[tuple[str, str], Provider] = {}
        self._loaded = False
        self._origin = "builtin"
        #: incremented on every change, so cached validation models are rebuilt
        self.version = 0

    def register(self, kind: str, name: str, factory: Factory | str, options: type[BaseModel] | str | None = None,
                 *, description: str = "") -> Provider:
        """Register (or replace) a provider.

        Args:
            kind: one of ``KINDS``.
            name: the ``provider:`` name (letters, digits, ``_`` and ``-``).
            factory: ``factory(options) -> provider`` or ``"module:callable"``.
            options: pydantic options model of the config section (``extra="forbid"`` recommended; subclass
                ``deepsearcher.settings.ProviderOptions``, or ``ingest.options.LoaderOptions`` /
                ``ingest.options.CrawlScope`` / ``vectordb.options.VectorDBOptions`` for those kinds, whose common
                fields the pipeline reads), or its ``"module:Class"`` name, or None.
            description: one line for ``deepsearcher config providers``.

        Raises:
            ValueError: an unknown kind or an empty name.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown provider kind {kind!r}; kinds: {', '.join(KINDS)}")
        if not name or not all(ch.isalnum() or ch in "_-" for ch in name):
            raise ValueError(f"invalid provider name {name!r}: use letters, digits, '_' and '-'")
        provider = Provider(kind, name, factory, options, description, self._origin)
        self._providers[(kind, name)] = provider
        self.version += 1
        return provider

    def unregister(self, kind: str, name: str) -> None:
        """Remove a provider (no error when it is not registered)."""
        if self._providers.pop((kind, name), None) is not None:
            self.version += 1

    @contextlib.contextmanager
    def temporarily(self, kind: str, name: str, factory: Factory | str,
                    options: type[BaseModel] | str | None = None, *, description: str = "") -> Iterator[Provider]:
        """Register a provider for the duration of a ``with`` block, then restore what was there (tests)."""
        self.load_plugins()
        before = self._providers.get((kind, name))
        if before is not None and options is None:
            options = before.options
        try:
            yield self.register(kind, name, factory, options, description=description or
                                (before.description if before else ""))
        finally:
            if before is None:
                self.unregister(kind, name)
            else:
                self._providers[(kind, name)] = before
                self.version += 1

    def get(self, kind: str, name: str) -> Provider:
        """The provider ``name`` of ``kind``.

        Raises:
            ConfigError: none of that name (the message lists the registered ones).
        """
        self.load_plugins()
        provider = self._providers.get((kind, name))
        if provider is None:
            raise ConfigError(f"unknown {kind} provider {name!r}; known: {', '.join(self.names(kind)) or 'none'}",
                              hint="`deepsearcher config providers` lists what is installed")
        return provider

    def create(self, kind: str, options: Any) -> Any:
        """Build the provider named by ``options.provider`` from its options.

        Raises:
            ConfigError: no provider of that kind has that name.
        """
        return self.get(kind, str(getattr(options, "provider", None))).create(options)

    def names(self, kind: str) -> list[str]:
        """Registered names of ``kind``, in registration order (built-ins first)."""
        self.load_plugins()
        return [name for k, name in self._providers if k == kind]

    def providers(self, kind: str | None = None) -> list[Provider]:
        """Registered providers (of one kind when given), in registration order."""
        self.load_plugins()
        return [p for (k, _), p in self._providers.items() if kind is None or k == kind]

    def load_plugins(self) -> None:
        """Run the built-in hook, then every ``deepsearcher.providers`` entry point (once per process).

        A plugin that fails to load is logged with its traceback and skipped: it must not break the built-ins.
        """
        if self._loaded:
            return
        self._loaded = True
        _resolve(BUILTIN_HOOK)(self)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.value == BUILTIN_HOOK:
                continue
            self._origin = f"entry point {ep.name} ({ep.value})"
            try:
                ep.load()(self)
            except Exception:  # a broken plugin is reported in the log, never fatal
                log.exception("provider plugin %s failed to load", ep.name)
            finally:
                self._origin = "builtin"


#: The process-wide registry.
registry = Registry()


def register(kind: str, name: str, factory: Factory | str, options: type[BaseModel] | str | None = None, *,
             description: str = "") -> Provider:
    """Register a provider in the process-wide registry (see ``Registry.register``)."""
    return registry.register(kind, name, factory, options, description=description)


def create(kind: str, options: Any) -> Any:
    """Build a provider from the process-wide registry (see ``Registry.create``)."""
    return registry.create(kind, options)


def names(kind: str) -> list[str]:
    """Registered names of ``kind`` in the process-wide registry."""
    return registry.names(kind)
