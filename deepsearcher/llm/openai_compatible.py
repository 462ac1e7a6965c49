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
- what the server is (``ServerInfo.identify``) bounds the requests sent to it at once (``server_gate``: 1 for
  llama-cpp-python's server, ``total_slots`` for llama-server). Streams are read line by line (``sse_events``) so
  an error inside a 200 stream (llama.cpp's ``data: {"error"}``, ``error:`` line, ``event: error``) is raised with
  the server's words. A stream that ends with no finish reason is a context overflow only when the prompt is near a
  known window; otherwise it was cut off (llama-cpp-python cuts a streamed reply when another request arrives): it
  is retried at once and the server gets one request at a time from then on, said once. A read timeout on an
  accepted connection is a busy server (retried, said once), not an unreachable one.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from deepsearcher.errors import ConfigError, ContextWindowError, ProviderError
from deepsearcher.llm.base import (
    ChatResult, Message, StopReply, TokenCallback, estimate_tokens, json_schema, messages_chars, schema_name,
)
from deepsearcher.llm.server_info import ServerGate, ServerInfo, hosted_window, server_gate
from deepsearcher.llm.window import limit_in_message
from deepsearcher.llm.options import OpenAICompatibleLLMOptions
from deepsearcher.net.unreachable import unreachable_hint
from deepsearcher.options import key_variable

log = logging.getLogger(__name__)

DOCS_HINT = "see docs/llm-providers.md for a config block per provider"
#: seconds to wait for a TCP connection: a server that is up accepts at once, even while busy generating
CONNECT_TIMEOUT_S = 10.0
_FORMAT_LEVELS = ("json_schema", "json_object", "none")


class OpenAICompatibleChat:
    """``ChatModel`` over the OpenAI SDK.

    Args:
        options: the ``llm`` settings block.

    Construction is cheap; the client is made on first use.
    """

    def __init__(self, options: OpenAICompatibleLLMOptions) -> None:
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
        self._window: tuple[int, str] | None = None
        self._identified = False
        self._busy_said = False
        self._cut_said = False
        self._kind_name = ""
        self.gate: ServerGate = server_gate(self.where)

    @property
    def where(self) -> str:
        return self.options.base_url or "https://api.openai.com/v1"

    def _api_key(self) -> str:
        env = key_variable(self.options)
        key = os.environ.get(env) if env else None
        if key:
            return key
        if self.options.base_url is None:
            state = "is empty" if env and key is not None and not key.strip() else "is not set"
            raise ConfigError(
                f"no API key for OpenAI: the environment variable {env or 'OPENAI_API_KEY'} {state}",
                hint=f"export {env or 'OPENAI_API_KEY'}=sk-…, or point llm.base_url at a local server (llama.cpp, "
                     f"Ollama, vLLM); {DOCS_HINT}")
        return "not-needed"  # local servers accept any key; a hosted one answers 401, which names api_key_env

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI, Timeout

            timeout = self.options.timeout_s  # a refused or unroutable address fails in seconds, not timeout_s
            self._client = OpenAI(api_key=self._api_key(), base_url=self.options.base_url, max_retries=0,
                                  timeout=Timeout(timeout, connect=min(CONNECT_TIMEOUT_S, timeout)))
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
        except openai.APITimeoutError as exc:
            if not _accepted(exc):
                raise ProviderError(f"cannot reach the LLM server at {self.where}: no connection within "
                                    f"{min(CONNECT_TIMEOUT_S, timeout_s):g} s",
                                    hint=unreachable_hint(self.where, "", "llm.base_url", DOCS_HINT)) from exc
            # up, but busy: a single-slot server (llama-cpp-python, llama-server --parallel 1) answers /models only
            # after the request it is generating; questions wait for it (llm.timeout_s, llm.max_retries)
            self._say_busy(f"did not answer GET /models within {timeout_s:g} s")
        except openai.APIConnectionError as exc:
            raise ProviderError(f"cannot reach the LLM server at {self.where}: {_reason(exc)}",
                                hint=unreachable_hint(self.where, _reason(exc), "llm.base_url", DOCS_HINT)) from exc
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
            self._info = ServerInfo(self.options.base_url, self.options.model, headers, gate=self.gate)
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

    def _say_busy(self, what: str) -> None:
        """Say once per provider that the server is up but busy (a read timed out on an accepted connection)."""
        if not self._busy_said:
            self._busy_said = True
            log.warning("the LLM server at %s is busy: it accepted the connection but %s (a single-slot server "
                        "answering another request, or a slow model); waiting for it, up to llm.timeout_s = %g s "
                        "per attempt and llm.max_retries = %d retries", self.where, what, self.options.timeout_s,
                        self.options.max_retries)

    def _before_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if exc is not None and _accepted(exc):
            self._say_busy(f"sent no reply within llm.timeout_s = {self.options.timeout_s:g} s")

    def _identify(self) -> None:
        """Once per provider: ask a local server what it is and send it no more requests at once than it has slots
        (``server_info.ServerKind``)."""
        if self._identified:
            return
        with self._lock:  # the other threads wait here: none may send before the limit is known
            if self._identified:
                return
            info = self.server_info if self.options.base_url and hosted_window(self.options.base_url) is None \
                else None
            kind = info.identify() if info is not None else None
            self._kind_name = kind.name if kind is not None else ""
            if kind is not None and kind.slots:
                self.gate.set_limit(kind.slots, kind.name)
            self._identified = True

    def _with_retries(self, kwargs: dict[str, Any], on_token: TokenCallback | None) -> tuple[ChatResult, int]:
        attempts = 0
        retrying = Retrying(retry=retry_if_exception(_transient), stop=stop_after_attempt(self.options.max_retries + 1),
                            wait=_wait, reraise=True, before_sleep=self._before_retry)
        self._identify()
        replay = Replay(on_token) if on_token is not None else None
        try:
            for attempt in retrying:
                with attempt, self.gate.slot():
                    attempts += 1
                    if kwargs.get("stream"):
                        if replay is not None:
                            replay.restart()
                        return self._stream(kwargs, replay), attempts
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
        self._check_prompt_kept(resp.usage, kwargs)
        return ChatResult(text, reasoning, prompt, completion, 1, choice.finish_reason or "")

    def _stream(self, kwargs: dict[str, Any], on_token: TokenCallback | None) -> ChatResult:
        """Read the SSE stream line by line (not through the SDK's parser, which drops llama.cpp's ``error:`` lines):
        content to ``on_token``, reasoning and usage collected, an error inside the 200 stream raised as one."""
        import openai

        reply = StreamReply()
        try:
            with self.client.chat.completions.with_streaming_response.create(**kwargs) as response:
                for event, data in sse_events(response.iter_lines()):
                    if data.strip() == "[DONE]":
                        reply.done = True
                        break
                    try:
                        self._stream_chunk(event, data, reply, on_token)
                    except StopReply:  # the caller has what it needs: closing the response ends the generation
                        reply.finish = "stop"
                        break
        except Exception as exc:  # the SDK's HTTP library (httpx or httpx2) raises its own classes mid-stream
            name = type(exc).__name__
            if name in _READ_TIMEOUTS:  # a pause between chunks longer than the timeout
                raise openai.APITimeoutError(request=exc.request) from exc  # type: ignore[attr-defined]
            if name in ("RemoteProtocolError", "ReadError"):  # the connection dropped mid-reply
                raise StreamCut(self.where, len(reply.joined), str(exc) or name) from exc
            raise
        if not reply.finish:
            self._cut(kwargs, reply)
        prompt, completion = self._usage(reply.usage, kwargs, reply.joined + "".join(reply.reasoning))
        self._check_prompt_kept(reply.usage, kwargs)
        return ChatResult(reply.joined, "".join(reply.reasoning), prompt, completion, 1, reply.finish)

    def _stream_chunk(self, event: str, data: str, reply: StreamReply, on_token: TokenCallback | None) -> None:
        import json

        try:
            chunk = json.loads(data)
        except ValueError:
            if event == "error":
                raise self._stream_error(data) from None
            return  # a comment or keep-alive a server invented
        if event == "error" or isinstance(chunk, dict) and chunk.get("error"):
            raise self._stream_error(chunk.get("error", chunk) if isinstance(chunk, dict) else chunk)
        if not isinstance(chunk, dict):
            return
        if chunk.get("usage"):
            reply.usage = _Usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        reply.finish = choice.get("finish_reason") or reply.finish
        delta = choice.get("delta") or {}
        piece = next((delta[k] for k in ("reasoning_content", "reasoning") if isinstance(delta.get(k), str)
                      and delta[k]), "")
        if piece:
            reply.reasoning.append(piece)
        content = delta.get("content")
        if isinstance(content, str) and content:
            reply.text.append(content)
            if on_token is not None:
                on_token(content)

    def _stream_error(self, error: Any) -> Exception:
        """An error the server sent inside a 200 stream (llama.cpp: ``data: {"error": {...}}``, ``error: {...}``
        lines, or ``event: error``): a context overflow names the window, anything else names the server's words."""
        detail: dict[str, Any] = error if isinstance(error, dict) else {"message": str(error)}
        inner = detail.get("error")
        if isinstance(inner, dict):
            detail = inner
        message = str(detail.get("message") or detail)[:300]
        kind = str(detail.get("type") or detail.get("code") or "")
        if "exceed_context" in kind or any(word in message.lower() for word in CONTEXT_WORDS):
            n_ctx = detail.get("n_ctx")
            return ContextWindowError(
                f"the prompt does not fit the context window of {self.options.model!r} at {self.where}: {message}",
                hint="set llm.context_window to the server's context size, or start the server with a larger one "
                     "(llama-server -c / --ctx-size, llama_cpp.server --n_ctx)",
                limit=n_ctx if isinstance(n_ctx, int) else limit_in_message(message))
        return ProviderError(f"the LLM server at {self.where} reported an error inside its reply: {message}",
                             hint="see the server's log for the cause")

    def _cut(self, kwargs: dict[str, Any], reply: StreamReply) -> None:
        """A stream that ended with no finish reason: a prompt near a known window is a context overflow; anything
        else was cut off (llama-cpp-python interrupts a streamed reply when another request arrives): one request
        at a time to this server from now on, and the reply is asked again."""
        prompt = estimate_tokens(messages_chars(kwargs["messages"]))
        window = self._known_window()
        if window is not None and prompt >= NEAR_WINDOW * window[0]:
            raise ContextWindowError(
                f"the LLM server at {self.where} ended the response with no finish reason; the prompt (~{prompt} "
                f"tokens) is near the model's {window[0]}-token context window ({window[1]})",
                hint="use a model/server with a larger context (llama-server -c, llama_cpp.server --n_ctx), or "
                     "lower query.top_k")
        if self.gate.set_limit(1, "cut"):
            log.warning("the LLM server at %s cut a streamed reply off (no finish reason, %d characters); "
                        "llama-cpp-python's server does this to a running request whenever another arrives. "
                        "Sending one request at a time to it from now on; start it with --interrupt_requests False "
                        "to let requests queue instead (docs/llm-providers.md)", self.where, len(reply.joined))
        raise StreamCut(self.where, len(reply.joined), "no finish reason")

    def _known_window(self) -> tuple[int, str] | None:
        if self._window is None:
            try:
                self._window = self.context_window() or (0, "")
            except Exception:  # best effort: an unknown window
                self._window = (0, "")
        return self._window if self._window[0] else None

    def _check_prompt_kept(self, usage: Any, kwargs: dict[str, Any]) -> None:
        """Ollama cuts a prompt longer than the window it loaded the model with and answers anyway: when it counts
        under half the prompt's estimated tokens, say so once (the answer was written without part of the prompt)."""
        kind = self._kind_name
        counted = int(getattr(usage, "prompt_tokens", 0) or 0)
        estimate = estimate_tokens(messages_chars(kwargs["messages"]))
        if kind != "ollama" or not counted or counted * 2 >= estimate or self._cut_said:
            return
        self._cut_said = True
        log.warning("Ollama at %s read only %d tokens of a prompt of ~%d: it cut the prompt to the window the model "
                    "is loaded with, silently. Start Ollama with a larger OLLAMA_CONTEXT_LENGTH, or set "
                    "llm.context_window to the window it runs with (ollama ps shows it)", self.where, counted,
                    estimate)

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
        if isinstance(exc, openai.APITimeoutError) and _accepted(exc):
            return ProviderError(
                f"the LLM server at {self.where} is busy: it accepted the connection but sent no reply within "
                f"llm.timeout_s = {self.options.timeout_s:g} s, {self.options.max_retries + 1} times (a single-slot "
                "server answering another client's request, or a prompt too long for a slow model)",
                hint="raise llm.timeout_s, or let the other client finish, or give the server more slots "
                     "(llama-server --parallel N)")
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(f"cannot reach the LLM server at {self.where}: no connection within "
                                 f"{min(CONNECT_TIMEOUT_S, self.options.timeout_s):g} s "
                                 f"({self.options.max_retries} retries)",
                                 hint=unreachable_hint(self.where, "", "llm.base_url", DOCS_HINT))
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(f"cannot reach the LLM server at {self.where}: {_reason(exc)}",
                                 hint=unreachable_hint(self.where, _reason(exc), "llm.base_url", DOCS_HINT))
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

    if isinstance(exc, StreamCut):
        return True
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500 and not _param_refusal(exc)


def _wait(state: RetryCallState) -> float:
    """Exponential backoff with jitter (1 s, 2 s, 4 s … ≤ 30 s); a server's Retry-After wins, capped at 60 s."""
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, StreamCut):
        return 0.0  # the next attempt waits for its turn at the server's gate instead
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    if header:
        try:
            return min(60.0, max(0.0, float(header)))
        except ValueError:
            pass
    return wait_exponential_jitter(initial=1, max=30, jitter=1)(state)


#: the timeouts of an accepted connection, by class name (the SDK uses httpx or httpx2, whose classes differ)
_READ_TIMEOUTS = ("ReadTimeout", "WriteTimeout", "PoolTimeout")


def _accepted(exc: BaseException) -> bool:
    """A timeout on a connection the server accepted (it is up, only slow or busy), not a connect timeout."""
    cause: BaseException | None = exc
    while cause is not None:
        if type(cause).__name__ == "ConnectTimeout":
            return False
        if type(cause).__name__ in _READ_TIMEOUTS:
            return True
        cause = cause.__cause__
    return False


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


#: a prompt within this share of the window may have overflowed it (llama.cpp counts the chat template too)
NEAR_WINDOW = 0.85


class StreamCut(ProviderError):
    """A streamed reply that ended without a finish reason (interrupted, or the connection dropped); retried."""

    def __init__(self, where: str, chars: int, why: str) -> None:
        super().__init__(
            f"the LLM server at {where} cut the streamed reply off ({why}, after {chars} characters), again after "
            "every retry: another request interrupted it (llama-cpp-python's server does this to a running request "
            "unless started with --interrupt_requests False) or the server failed mid-reply (see its log)",
            hint="start llama-cpp-python's server with --interrupt_requests False and run one client at a time, or "
                 "raise llm.max_retries")


class Replay:
    """Passes streamed text on once: a reply asked again after a cut repeats what was already shown, which is
    held back until the new text goes past it (text that differs is passed on as it comes)."""

    def __init__(self, sink: TokenCallback) -> None:
        self.sink = sink
        self.shown = ""
        self.current = ""

    def restart(self) -> None:
        self.current = ""

    def __call__(self, piece: str) -> None:
        self.current += piece
        if self.shown.startswith(self.current):
            return  # still repeating what is on screen
        new = self.current[len(self.shown):] if self.current.startswith(self.shown) else piece
        self.shown = self.current
        if new:
            self.sink(new)


class _Usage:
    """``usage`` of a stream chunk, as attributes (the shape ``_usage`` reads)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.prompt_tokens = int(data.get("prompt_tokens") or 0)
        self.completion_tokens = int(data.get("completion_tokens") or 0)


@dataclass
class StreamReply:
    """What a stream delivered so far."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    usage: _Usage | None = None
    finish: str = ""
    done: bool = False

    @property
    def joined(self) -> str:
        return "".join(self.text)


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(event, data)`` of each Server-Sent Event; an ``error: {...}`` line (llama.cpp's server before 2025) is an
    ``error`` event of its own."""
    event, data = "", list[str]()
    for line in lines:
        if not line.strip():
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value.strip()
        elif name == "error":
            yield "error", value
    if data:
        yield event or "message", "\n".join(data)
