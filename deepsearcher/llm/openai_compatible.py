"""Chat provider for every server that speaks the OpenAI chat-completions API, on the ``openai`` SDK.

One provider, configured by ``base_url`` + ``model``, covers OpenAI, DeepSeek (chat and reasoner), SambaNova, Together,
Gemini's OpenAI-compatible endpoint, vLLM, Ollama and llama.cpp servers (see ``docs/llm-providers.md``); the reference
system's one-class-per-vendor copies differ only by ``base_url``.

Behaviour:
- transport retries with exponential backoff and jitter (tenacity) on 429, 5xx, timeouts and connection errors, up to
  ``max_retries``; a ``Retry-After`` header is honoured (capped at 60 s). Every HTTP attempt counts as an LLM call.
- structured output: asks for ``response_format={"type": "json_schema", ...}``; a server that refuses it (400/422) is
  asked once with ``{"type": "json_object", "schema": ...}`` (llama-cpp-python, Anyscale style) and then without any
  format; the level that worked is remembered for the provider's lifetime. ``max_tokens`` / ``temperature`` /
  ``stream_options`` refused by name are adapted the same way (``max_completion_tokens`` for OpenAI reasoning models).
- reasoning from ``reasoning_content`` (or ``reasoning``) is returned in ``ChatResult.reasoning``; content streams to
  ``on_token``.
- usage from the server, estimated from characters when it sends none.
- context window and tokenizer (``context_window()``, ``count_tokens``): ``llm.context_window`` when set, else what
  the server reports (``llm.server_info``: vLLM, llama.cpp, llama-cpp-python, Ollama); a prompt the server refuses
  as too long raises ``ContextWindowError`` carrying the limit the server named.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Sequence
from urllib.parse import urlparse

from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from deepsearcher.errors import ConfigError, ContextWindowError, ProviderError
from deepsearcher.llm.base import (
    ChatResult, Message, TokenCallback, estimate_tokens, json_schema, messages_chars, schema_name,
)
from deepsearcher.llm.server_info import ServerInfo, hosted_window
from deepsearcher.llm.window import limit_in_message
from deepsearcher.settings import OpenAICompatibleLLM, key_variable

log = logging.getLogger(__name__)

DOCS_HINT = "see docs/llm-providers.md for a config block per provider"
_FORMAT_LEVELS = ("json_schema", "json_object", "none")


def _is_local(base_url: str | None) -> bool:
    host = urlparse(base_url or "").hostname or ""
    return host in {"localhost", "127.0.0.1", "::1", "0.0.0.0"} or host.endswith(".local")


class OpenAICompatibleChat:
    """``ChatModel`` over the OpenAI SDK.

    Args:
        options: the ``llm`` settings block.

    Construction is cheap; the client is made on first use.
    """

    def __init__(self, options: OpenAICompatibleLLM) -> None:
        self.options = options
        self.name = options.model
        self.price_per_1m_input = options.price_per_1m_input
        self.price_per_1m_output = options.price_per_1m_output
        self._client: Any = None
        self._format_level = 2 if options.json_schema == "never" else 0
        self._token_param = "max_tokens"
        self._send_temperature = True
        self._stream_usage = True
        self._lock = threading.Lock()
        self._info: ServerInfo | None = None

    @property
    def where(self) -> str:
        return self.options.base_url or "https://api.openai.com/v1"

    def _api_key(self) -> str:
        env = key_variable(self.options)
        key = os.environ.get(env) if env else None
        if key:
            return key
        if self.options.base_url is None:
            raise ConfigError(
                f"no API key for OpenAI: the environment variable {env or 'OPENAI_API_KEY'} is not set",
                hint=f"export {env or 'OPENAI_API_KEY'}=sk-…, or point llm.base_url at a local server (llama.cpp, "
                     f"Ollama, vLLM); {DOCS_HINT}")
        return "not-needed"  # local servers accept any key; a hosted one answers 401, which names api_key_env

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(api_key=self._api_key(), base_url=self.options.base_url,
                                  timeout=self.options.timeout_s, max_retries=0)
        return self._client

    # --- reachability ------------------------------------------------------------------------------------------------
    def check(self, timeout_s: float = 10.0) -> None:
        """Fail fast when the server is unreachable or rejects the key (one ``GET /models``; no LLM call).

        Raises:
            ConfigError: no API key for OpenAI.
            ProviderError: connection refused / timed out, or 401/403.
        """
        import openai

        try:
            self.client.with_options(timeout=timeout_s, max_retries=0).models.list()
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise self._auth_error(exc) from exc
        except openai.APIConnectionError as exc:
            raise ProviderError(f"cannot reach the LLM server at {self.where}: {_reason(exc)}",
                                hint=f"start the server or fix llm.base_url in the config; {DOCS_HINT}") from exc
        except openai.APIStatusError:
            pass  # reachable; some servers have no /models

    def _auth_error(self, exc: Exception) -> ProviderError:
        return ProviderError(f"the LLM server at {self.where} rejected the API key ({_reason(exc)})",
                             hint=f"put a valid key in the environment variable {self.options.api_key_env!s} "
                                  f"(llm.api_key_env names it; left unset, the default key goes to OpenAI only, "
                                  f"so write it out for another server)")

    # --- window and tokens ----------------------------------------------------------------------------------------
    @property
    def max_tokens(self) -> int:
        """The configured completion limit per call (``llm.max_tokens``)."""
        return self.options.max_tokens

    @property
    def server_info(self) -> ServerInfo | None:
        """What the server reports about the model; None for OpenAI itself (it reports nothing)."""
        if self._info is None and self.options.base_url is not None:
            key = self._api_key()
            headers = {"Authorization": f"Bearer {key}"} if key != "not-needed" else {}
            self._info = ServerInfo(self.options.base_url, self.options.model, headers)
        return self._info

    def context_window(self) -> tuple[int, str] | None:
        """``(tokens, source)``: ``llm.context_window`` when set, else what the server reports (a hosted API's
        documented window: ``server_info.HOSTED_WINDOWS``), else None."""
        if self.options.context_window is not None:
            return self.options.context_window, "llm.context_window"
        info = self.server_info
        return info.context_window() if info is not None else hosted_window(None)

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's tokenizer endpoint, or None (then the caller estimates)."""
        info = self.server_info
        return info.count_tokens(text) if info is not None else None

    # --- chat ----------------------------------------------------------------------------------------------------
    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Complete ``messages`` (see ``ChatModel.chat``); ``max_tokens`` overrides ``llm.max_tokens`` for this call.

        Raises:
            ConfigError: no API key for OpenAI.
            ProviderError: unreachable, refused, or still failing after ``max_retries`` retries.
        """
        import openai

        attempts = 0
        learned = (self._format_level, self._token_param, self._send_temperature, self._stream_usage)
        exc: Exception | None = None
        for _ in range(5):  # one adaptation per refused parameter at most
            kwargs = self._request(messages, schema, stream=on_token is not None, max_tokens=max_tokens)
            try:
                result, used = self._with_retries(kwargs, on_token)
                attempts += used
                return ChatResult(result.text, result.reasoning, result.prompt_tokens, result.completion_tokens,
                                  attempts, result.finish_reason)
            except _Attempts as wrapped:
                attempts += wrapped.attempts
                exc = wrapped.error
            if _param_refusal(exc) and self._adapt(exc, kwargs):
                continue
            break
        # what was learned is kept only when a request then succeeded (a 400 for context length is not a refusal)
        self._format_level, self._token_param, self._send_temperature, self._stream_usage = learned
        if exc is not None:
            raise self._translate(exc) from exc
        raise ProviderError(f"the LLM server at {self.where} kept refusing the request parameters")

    def _request(self, messages: Sequence[Message], schema: type[BaseModel] | None, stream: bool,
                 max_tokens: int | None = None) -> dict[str, Any]:
        opts = self.options
        kwargs: dict[str, Any] = {"model": opts.model, "messages": list(messages),
                                  self._token_param: max_tokens or opts.max_tokens}
        if self._send_temperature:
            kwargs["temperature"] = opts.temperature
        if schema is not None and self._format_level < 2:
            body = json_schema(schema)
            if self._format_level == 0:
                kwargs["response_format"] = {"type": "json_schema",
                                             "json_schema": {"name": schema_name(schema), "schema": body}}
            else:
                kwargs["response_format"] = {"type": "json_object", "schema": body}
        if stream:
            kwargs["stream"] = True
            if self._stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def _adapt(self, exc: Exception, kwargs: dict[str, Any]) -> bool:
        """Drop or rename the parameter a 400/422 refused; True when there is something left to try."""
        msg = _reason(exc).lower()
        if any(word in msg for word in CONTEXT_WORDS):
            return False  # a prompt too long for the window: no parameter to adapt
        has_format = "response_format" in kwargs and self.options.json_schema == "auto"
        plain_refusal = getattr(exc, "status_code", 500) in (400, 422)
        sent_level = _FORMAT_LEVELS.index(kwargs.get("response_format", {}).get("type", "none"))
        with self._lock:
            if has_format and sent_level < self._format_level:
                pass  # a call running at the same time already stepped down: just send again
            elif has_format and any(word in msg for word in ("response_format", "json_schema", "json_object")):
                self._downgrade_format()
            elif "max_tokens" in msg and self._token_param == "max_tokens" and "max_completion_tokens" in msg:
                self._token_param = "max_completion_tokens"
            elif "temperature" in msg and self._send_temperature:
                self._send_temperature = False
            elif "stream_options" in msg and "stream_options" in kwargs:
                self._stream_usage = False
            elif has_format and plain_refusal:  # a 400 that names nothing: the format is the usual culprit
                self._downgrade_format()
            else:
                return False
        return True

    def _downgrade_format(self) -> None:
        self._format_level += 1
        log.info("%s refused response_format %s; using %s from now on", self.where,
                 _FORMAT_LEVELS[self._format_level - 1], _FORMAT_LEVELS[self._format_level])

    def _with_retries(self, kwargs: dict[str, Any], on_token: TokenCallback | None) -> tuple[ChatResult, int]:
        attempts = 0
        retrying = Retrying(retry=retry_if_exception(_transient), stop=stop_after_attempt(self.options.max_retries + 1),
                            wait=_wait, reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    if kwargs.get("stream"):
                        return self._stream(kwargs, on_token), attempts
                    return self._complete(kwargs), attempts
        except Exception as exc:
            raise _Attempts(exc, attempts) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _complete(self, kwargs: dict[str, Any]) -> ChatResult:
        resp = self.client.chat.completions.create(**kwargs)
        if not resp.choices:
            raise ProviderError(f"the LLM server at {self.where} returned no choices")
        choice = resp.choices[0]
        text = choice.message.content or ""
        reasoning = _reasoning_of(choice.message)
        prompt, completion = self._usage(resp.usage, kwargs, text + reasoning)
        return ChatResult(text, reasoning, prompt, completion, 1, choice.finish_reason or "")

    def _stream(self, kwargs: dict[str, Any], on_token: TokenCallback | None) -> ChatResult:
        text: list[str] = []
        reasoning: list[str] = []
        usage = None
        finish = ""
        for chunk in self.client.chat.completions.create(**kwargs):
            if getattr(chunk, "usage", None):
                usage = chunk.usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            finish = choice.finish_reason or finish
            delta = choice.delta
            if delta is None:
                continue
            piece = _reasoning_of(delta)
            if piece:
                reasoning.append(piece)
            if delta.content:
                text.append(delta.content)
                if on_token is not None:
                    on_token(delta.content)
        joined = "".join(text)
        if not joined and not reasoning and not finish:
            # llama.cpp's server logs "Requested tokens exceed context window" and just closes the stream: an
            # empty stream with no finish reason is a failed request, not an empty answer
            raise ContextWindowError(
                f"the LLM server at {self.where} ended the response with no output and no finish reason; the "
                f"prompt (~{estimate_tokens(messages_chars(kwargs['messages']))} tokens) probably exceeds the "
                "model's context window",
                hint="use a model/server with a larger context (e.g. llama.cpp --n_ctx), or lower query.top_k")
        prompt, completion = self._usage(usage, kwargs, joined + "".join(reasoning))
        return ChatResult(joined, "".join(reasoning), prompt, completion, 1, finish)

    @staticmethod
    def _usage(usage: Any, kwargs: dict[str, Any], out_text: str) -> tuple[int, int]:
        if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
            return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
        return estimate_tokens(messages_chars(kwargs["messages"])), estimate_tokens(out_text)

    def _translate(self, exc: Exception) -> Exception:
        import openai

        if isinstance(exc, (ProviderError, ConfigError)):
            return exc
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return self._auth_error(exc)
        if isinstance(exc, openai.NotFoundError):
            return ProviderError(f"the LLM server at {self.where} has no model {self.options.model!r} "
                                 f"({_reason(exc)})", hint="check llm.model (and llm.base_url)")
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(f"the LLM server at {self.where} timed out after {self.options.timeout_s:g} s "
                                 f"({self.options.max_retries} retries)", hint="raise llm.timeout_s or use a "
                                 "faster model")
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(f"cannot reach the LLM server at {self.where}: {_reason(exc)}",
                                 hint=f"start the server or fix llm.base_url; {DOCS_HINT}")
        if isinstance(exc, openai.RateLimitError):
            return ProviderError(f"the LLM server at {self.where} is rate-limiting ({_reason(exc)}) after "
                                 f"{self.options.max_retries} retries", hint="raise llm.max_retries or wait")
        if isinstance(exc, openai.APIStatusError):
            reason = _reason(exc)
            if any(word in reason.lower() for word in CONTEXT_WORDS):
                return ContextWindowError(f"the prompt does not fit the context window of {self.options.model!r} "
                                          f"at {self.where}: {reason}", hint="set llm.context_window to the "
                                          "server's context size, or use a model with a larger context",
                                          limit=limit_in_message(reason))
            return ProviderError(f"the LLM server at {self.where} answered {exc.status_code}: {reason}")
        if isinstance(exc, openai.OpenAIError):
            return ProviderError(f"LLM request to {self.where} failed: {exc}")
        return exc


#: Phrases servers use for a prompt longer than the context window (OpenAI, vLLM, llama.cpp, Ollama).
CONTEXT_WORDS = ("context_length_exceeded", "maximum context length", "context window", "context length",
                 "exceed_context_size", "too many tokens")


class _Attempts(Exception):
    """Carries the final error of a retried request and how many HTTP attempts it took."""

    def __init__(self, error: Exception, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


_PARAM_WORDS = ("response_format", "json_schema", "json_object", "max_completion_tokens", "stream_options",
                "temperature")


def _param_refusal(exc: BaseException) -> bool:
    """A 400/422, or a 5xx that names one of our parameters (llama-cpp-python answers 500 to a request body it
    cannot validate): the request should be adapted, not repeated."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code in (400, 422):
        return True
    return exc.status_code >= 500 and any(word in _reason(exc).lower() for word in _PARAM_WORDS)


def _transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500 and not _param_refusal(exc)


def _wait(state: RetryCallState) -> float:
    """Exponential backoff with jitter (1 s, 2 s, 4 s … ≤ 30 s); a server's Retry-After wins, capped at 60 s."""
    exc = state.outcome.exception() if state.outcome else None
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    if header:
        try:
            return min(60.0, max(0.0, float(header)))
        except ValueError:
            pass
    return wait_exponential_jitter(initial=1, max=30, jitter=1)(state)


def _reasoning_of(obj: Any) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = getattr(obj, key, None)
        if value is None and getattr(obj, "model_extra", None):
            value = obj.model_extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _reason(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
        cause: BaseException | None = exc.__cause__
        while cause is not None and cause.__cause__ is not None:
            cause = cause.__cause__
        if cause is not None and str(cause):
            return str(cause)[:300]
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
        detail = body.get("detail")
        if detail:
            return str(detail)[:300]
    return str(exc)[:300]
