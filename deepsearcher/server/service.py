"""The served state shared by the HTTP API, the OpenAI-compatible endpoint and the MCP tools: one ``DeepSearcher``,
the access policy, and the bounded query and load queues (``workers.WorkQueue``). No web framework here, so
``deepsearcher mcp`` (stdio) uses the same rules without the ``server`` extra."""

from __future__ import annotations

import logging
import threading
from typing import Any

from deepsearcher.errors import DeepSearcherError
from deepsearcher.server.security import AccessPolicy
from deepsearcher.server.workers import WorkQueue
from deepsearcher.settings import Settings
from deepsearcher.types import LoadSummary

log = logging.getLogger(__name__)


class Service:
    """The app's state: one DeepSearcher, the access policy, and the query and load queues."""

    def __init__(self, settings: Settings, searcher: Any, policy: AccessPolicy) -> None:
        self.settings = settings
        self.searcher = searcher
        self.policy = policy
        server = settings.server
        self.queries = WorkQueue(server.max_concurrent_queries, server.max_queued_queries, "queries")
        # one load at a time: two loads into one collection would race on the same sources
        self.loads = WorkQueue(1, server.max_queued_loads, "loads")
        self._warm_lock = threading.Lock()
        self._warm = False

    def ready(self, llm: bool = False) -> Any:
        """The searcher with its providers built once, so concurrent first requests never open the Lite file (or
        load a local model) twice.

        Args:
            llm: also build the chat model (queries); raises ConfigError when none is configured.
        """
        if not self._warm or llm:
            with self._warm_lock:
                if not self._warm:
                    self.searcher.store.list_collections()  # opens the store (a Lite file in use fails here)
                    _ = self.searcher.embedder
                    self._warm = True
                if llm:
                    _ = self.searcher.llm  # built once, then cached by DeepSearcher
        return self.searcher

    def warm(self) -> None:
        """Open the store and load the embedder before the first request (at startup): a first request that did it
        held the warm-up lock for seconds, so a burst of queries waited there instead of being queued or answered
        429 at once. A failure (a Lite file in use) is left for the requests to report."""
        try:
            self.ready()
        except DeepSearcherError as exc:
            log.warning("warm-up failed, requests will report it: %s", exc)

    @staticmethod
    def check_inputs_with(policy: AccessPolicy, inputs: list[str]) -> list[str]:
        """Every input checked against the policy (URLs by address, paths by root), in the caller's order.

        Raises:
            Refused: 403 / 422, see ``AccessPolicy.check_url`` and ``check_path``.
        """
        from deepsearcher.ingest.sources import is_url

        return [policy.check_url(i) if is_url(i) else str(policy.check_path(i)) for i in inputs]

    def load(self, inputs: list[str], collection: str | None, description: str | None, *,
             force_new: bool = False, keep_missing: bool = False,
             only: list[str] | None = None) -> LoadSummary:
        """Load checked inputs through the one ingestion entry point, with the server's rules: files found outside
        the roots (through symlinks) are treated as absent, and the crawler gets the server's address rule.
        ``only``: a folder watch's changed paths (``server.watching``)."""
        policy = self.policy
        return self.ready().load(inputs, collection, description, force_new=force_new,
                                 path_allowed=policy.inside_roots, allow_private_urls=policy.allow_private_urls,
                                 keep_missing=keep_missing, only=only)

    def close(self, close_searcher: bool) -> None:
        self.queries.shutdown(wait=False, cancel_futures=True)
        self.loads.shutdown(wait=False, cancel_futures=True)
        if close_searcher:
            self.searcher.close()
