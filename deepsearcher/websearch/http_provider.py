"""One HTTP path for every web search provider: key lookup, bounded retries, and errors that say what to do.

A provider subclasses ``HttpWebSearch`` and supplies the request (``_request``), the parse of the documented response
(``_hits``) and, where its API documents them, special statuses (``_special_status``) and rate-limit headers
(``_rate_limit_wait``). Retries (tenacity) cover HTTP 429, 5xx, timeouts and dropped connections: the wait is the
service's ``Retry-After`` when it sends one, else exponential backoff with jitter from ``retry_backoff_s``, never more
than ``max_retry_wait_s``; a longer ``Retry-After`` ends the search at once with a rate-limit error. A refused
connection is not retried (the service is not running there; waiting does not help). Redirects are not followed, so
a key header never travels to another host.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError
from tenacity import (RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, stop_any,
                      wait_exponential, wait_random)

from deepsearcher.errors import ProviderError, without_hint
from deepsearcher.websearch.base import WebResult, WebSearchOptionsBase
from deepsearcher.websearch.results import Hit, finish

log = logging.getLogger(__name__)

USER_AGENT = "deepsearcher-websearch"
NO_RESULTS = object()  # what _fetch returns when the service answered "nothing found" with an error status


@dataclass(frozen=True)
class Request:
    """One HTTP request to the provider; ``path`` is appended to ``base_url``."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    json_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


class _Transient(Exception):
    """A failure worth retrying: 429, 5xx, timeout or dropped connection."""

    def __init__(self, kind: str, detail: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.status, self.retry_after = kind, detail, status, retry_after


class HttpWebSearch:
    """Base of the HTTP web search providers (see the module docstring). Cheap to build: no I/O until ``search``."""

    label = "web search"  # the service's name in messages, e.g. "Brave Search"
    #: options that only narrow a search (language, country, time range…): a request the service rejects is sent
    #: once more without them (``search``)
    OPTIONAL: tuple[str, ...] = ()
    options: WebSearchOptionsBase

    def __init__(self, options: WebSearchOptionsBase) -> None:
        self.options = options
        self.name: str = getattr(options, "provider")
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()  # agents may search from several threads
        self._last = threading.local()  # what the last search of this thread reported beside its results

    @property
    def degraded(self) -> list[str]:
        """"engine: reason" for each engine the service said did not answer the last search of this thread (SearXNG's
        ``unresponsive_engines``); [] when all answered or the service does not say."""
        return list(getattr(self._last, "degraded", []))

    # --- the protocol ----------------------------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int = 10) -> list[WebResult]:
        """Search the web for ``query``; return at most ``max_results`` cleaned results ([] for a blank query).

        Only ``query`` is sent to the service. Raises:
            ProviderError: the key is missing or refused, the service rate-limits or fails after the retries, does
                not answer within ``timeout_s``, cannot be reached, or answers with something other than its
                documented JSON (the message names the service and what was wrong).
            ValueError: ``max_results`` < 1.
        """
        if max_results < 1:
            raise ValueError(f"max_results must be at least 1, got {max_results}")
        query = " ".join(query.split())
        if not query:
            log.debug("%s: blank query, nothing sent", self.name)
            return []
        key = self._api_key()
        self._last.degraded = []
        try:
            data = self._fetch(self._request(query, max_results, key))
        except Rejected as exc:
            dropped = self._drop_optional()
            if not dropped:
                raise
            log.info("%s rejected %s; searching without them: %s", self.name, dropped, exc)
            data = self._fetch(self._request(query, max_results, key))
            self._last.degraded = [f"searched without {', '.join(dropped)} (the service rejected the request: "
                                   f"{without_hint(exc)})"]
        results = [] if data is NO_RESULTS else finish(self._hits(data), self.name, max_results)
        log.debug("%s: %d result(s)", self.name, len(results))
        return results

    def close(self) -> None:
        """Close the HTTP connection pool (idempotent)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _drop_optional(self) -> list[str]:
        """Reset every optional request parameter that is set (``OPTIONAL``) to its default, for the rest of this
        provider's life; the ``name=value`` of each one dropped ([] when none was set)."""
        model = type(self.options)
        fields = model.model_fields
        dropped: dict[str, Any] = {}
        for name in self.OPTIONAL:
            default = fields[name].get_default(call_default_factory=True)
            value = getattr(self.options, name)
            if value != default:
                dropped[name] = default
        if dropped:
            shown = [f"web_search.{n}={getattr(self.options, n)!r}" for n in dropped]
            self.options = self.options.model_copy(update=dropped)
            return shown
        return []

    # --- provider hooks --------------------------------------------------------------------------------------------
    def _request(self, query: str, max_results: int, api_key: str | None) -> Request:
        raise NotImplementedError

    def _hits(self, data: Any) -> list[Hit]:
        raise NotImplementedError

    def _special_status(self, response: httpx.Response, detail: str) -> ProviderError | None:
        """A documented, provider-specific status (quota, balance, disabled format); None = handle generically."""
        return None

    def _no_results(self, response: httpx.Response, detail: str) -> bool:
        """True when an error status is the service's documented way of saying "nothing found"."""
        return False

    def _rate_limit_wait(self, response: httpx.Response) -> float | None:
        """Seconds the service asks us to wait before retrying (``Retry-After``); None = not said."""
        return retry_after_seconds(response.headers.get("retry-after"))

    # --- shared steps ----------------------------------------------------------------------------------------------
    @property
    def where(self) -> str:
        return f"{self.label} at {self.options.base_url}"

    def _api_key(self) -> str | None:
        env = self.options.api_key_env
        if not env:
            return None
        key = os.environ.get(env, "").strip()
        if not key:
            raise ProviderError(f"{self.label} needs an API key, but the environment variable {env} is not set",
                                hint=f"export {env}=<your key> (web_search.api_key_env names the variable)")
        return key

    def _fetch(self, request: Request) -> Any:
        """Send ``request`` with retries; return the parsed JSON body of the 2xx reply."""
        opts = self.options
        attempts = 0
        retrying = Retrying(retry=retry_if_exception_type(_Transient),
                            stop=stop_any(stop_after_attempt(opts.max_retries + 1),
                                          _wait_too_long(opts.max_retry_wait_s)),
                            wait=_waiter(opts.retry_backoff_s, opts.max_retry_wait_s), reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    return self._send_once(request)
        except _Transient as exc:
            raise self._gave_up(exc, attempts) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _send_once(self, request: Request) -> Any:
        try:
            with self._http().stream(request.method, self.options.base_url + request.path,
                                     params=request.params or None, json=request.json_body,
                                     headers=request.headers) as streamed:
                response = self._capped(streamed)
        except httpx.TimeoutException as exc:
            raise _Transient("timeout", type(exc).__name__) from exc
        except httpx.ConnectError as exc:
            raise ProviderError(f"cannot connect to {self.where}: {exc}", hint=self._connect_hint()) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise _Transient("network", str(exc) or type(exc).__name__) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"request to {self.where} failed: {exc}",
                                hint="check web_search.base_url") from None
        if response.is_success:
            return self._json(response)
        return self._status(response)

    def _capped(self, streamed: httpx.Response) -> httpx.Response:
        """The reply read up to ``max_reply_mb`` (decoded bytes), as a response holding that body.

        Raises:
            ProviderError: the reply is larger (a broken or hostile service could send gigabytes).
        """
        limit = int(self.options.max_reply_mb * 1_000_000)
        body = bytearray()
        for piece in streamed.iter_bytes():
            body += piece
            if len(body) > limit:
                raise ProviderError(f"{self.where} sent a reply larger than {self.options.max_reply_mb:g} MB",
                                    hint="check web_search.base_url, or raise web_search.max_reply_mb")
        headers = [(k, v) for k, v in streamed.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(streamed.status_code, headers=headers, content=bytes(body), request=streamed.request)

    def _status(self, response: httpx.Response) -> Any:
        status = response.status_code
        detail = error_detail(response)
        if self._no_results(response, detail):
            return NO_RESULTS
        special = self._special_status(response, detail)
        if special is not None:
            raise special
        if status == 429:
            raise _Transient("rate", detail, status, self._rate_limit_wait(response))
        if status >= 500:
            raise _Transient("server", detail, status, retry_after_seconds(response.headers.get("retry-after")))
        if status in (401, 403):
            raise self._refused(status, detail)
        if 300 <= status < 400:
            raise ProviderError(f"{self.where} redirected the search (HTTP {status}) to "
                                f"{response.headers.get('location', '?')}",
                                hint="set web_search.base_url to the final address (redirects are not followed)")
        raise Rejected(f"{self.where} rejected the search request (HTTP {status}){detail_suffix(detail)}",
                       hint=f"check the web_search options for {self.name} (see docs/web-search.md)")

    def _refused(self, status: int, detail: str) -> ProviderError:
        env = self.options.api_key_env
        if env:
            return ProviderError(f"{self.where} refused the API key from ${env} (HTTP {status}){detail_suffix(detail)}",
                                 hint=f"set {env} to a valid, active key (web_search.api_key_env names the "
                                      "variable)")
        return ProviderError(f"{self.where} refused the search (HTTP {status}){detail_suffix(detail)}",
                             hint="check web_search.base_url and the service's access rules")

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            ctype = response.headers.get("content-type", "no content type")
            start = " ".join(response.text[:80].split())
            raise ProviderError(f"{self.where} answered with something that is not JSON ({ctype}, starting "
                                f"{start!r})",
                                hint=f"check that web_search.base_url points at the {self.label} API") from None

    def _shape_error(self, problem: str) -> ProviderError:
        return ProviderError(f"{self.where} answered with JSON of an unexpected shape: {problem}",
                             hint=f"check that web_search.base_url points at the {self.label} API; if it does, the "
                                  "API may have changed: please report it")

    def _validate(self, model: type[BaseModel], data: Any) -> Any:
        """``model`` validated from ``data``; a mismatch becomes a ProviderError naming the field and the problem."""
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'top level'}: {e['msg']}"
                                 for e in exc.errors()[:3])
            raise self._shape_error(problems) from None

    def _gave_up(self, exc: _Transient, attempts: int) -> ProviderError:
        opts = self.options
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if exc.kind == "rate":
            if exc.retry_after is not None and exc.retry_after > QUOTA_WAIT_S:
                return ProviderError(f"{self.where} says the search quota is used up (HTTP 429); it resets in "
                                     f"{human_duration(exc.retry_after)}{detail_suffix(exc.detail)}",
                                     hint="search the web again after the reset, raise the plan's quota, or switch "
                                          "web_search.provider")
            if exc.retry_after is not None and exc.retry_after > opts.max_retry_wait_s:
                return ProviderError(f"{self.where} rate-limited the search (HTTP 429) and asks to wait "
                                     f"{human_duration(exc.retry_after)}, longer than web_search.max_retry_wait_s "
                                     f"({opts.max_retry_wait_s:g} s){detail_suffix(exc.detail)}",
                                     hint="search again later, or raise web_search.max_retry_wait_s")
            return ProviderError(f"{self.where} rate-limited the search (HTTP 429) and still refused it after "
                                 f"{tries}{detail_suffix(exc.detail)}",
                                 hint="wait a minute and search again, search less often, or check the plan's rate "
                                      "limit and quota (web_search.max_retries sets the retries)")
        if exc.kind == "timeout":
            return ProviderError(f"{self.where} did not answer within timeout_s = {opts.timeout_s:g} s ({tries})",
                                 hint="raise web_search.timeout_s, or check the network and the service's status")
        if exc.kind == "server":
            return ProviderError(f"{self.where} failed with HTTP {exc.status} ({tries}){detail_suffix(exc.detail)}",
                                 hint="the service is having trouble: search again later, or switch "
                                      "web_search.provider")
        return ProviderError(f"{self.where} dropped the connection ({tries}): {exc.detail}",
                             hint="check the network and web_search.base_url")

    def _connect_hint(self) -> str:
        return "check web_search.base_url and the network (a proxy is taken from HTTPS_PROXY/HTTP_PROXY)"

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.options.timeout_s, follow_redirects=False,
                                            headers={"User-Agent": USER_AGENT})
            return self._client


QUOTA_WAIT_S = 3600.0
"""A 429 asking to wait longer than this is a used-up quota (daily, monthly), not a rate limit to wait out."""


def human_duration(seconds: float) -> str:
    """``seconds`` in the largest fitting unit, rounded: "45 s", "12 minutes", "3.5 hours", "23 days"."""
    for unit, size in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size:
            value = round(seconds / size, 1)
            text = f"{value:g}"
            return f"about {text} {unit}{'' if text == '1' else 's'}"
    return f"{seconds:g} s"


class Rejected(ProviderError):
    """The service rejected the request itself (HTTP 400, 404, 422…): a parameter it does not accept."""


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110 §10.2.3); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_detail(response: httpx.Response) -> str:
    """The service's own error message, from the documented error bodies, else the start of the body text.

    Tavily: ``{"detail": {"error": ...}}``; Brave: ``{"error": {"detail": ..., "code": ...}}``; Jina:
    ``{"message": ..., "readableMessage": ...}``; FastAPI-style ``{"detail": "..."}``.
    """
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text[:200].split())
    if not isinstance(body, dict):
        return ""
    for outer, inner in (("detail", "error"), ("error", "detail"), ("error", "message")):
        node = body.get(outer)
        if isinstance(node, dict) and isinstance(node.get(inner), str):
            return node[inner][:300]
    for key in ("readableMessage", "message", "detail", "error"):
        if isinstance(body.get(key), str):
            return body[key][:300]
    return ""


def detail_suffix(detail: str) -> str:
    """': detail' to end a message with the service's own words, or '' when it said nothing."""
    return f": {detail}" if detail else ""


def _waiter(backoff_s: float, cap_s: float):
    backoff = wait_exponential(multiplier=backoff_s, max=cap_s) + wait_random(0, backoff_s)  # tenacity 8 and 9

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, cap_s)
        return min(backoff(state), cap_s)

    return wait


def _wait_too_long(cap_s: float):
    """Stop condition: the service asked for a wait longer than ``cap_s``."""

    def stop(state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        return isinstance(exc, _Transient) and exc.retry_after is not None and exc.retry_after > cap_s

    return stop
