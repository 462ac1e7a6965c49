"""In-process chat on a local GGUF file through llama-cpp-python (extra ``local``:
``pip install 'deepsearcher[local]'``).

No server, no network: the model is loaded on the first call (lazy import, so ``deepsearcher --help`` never imports
llama.cpp). Structured steps use llama.cpp's JSON-schema grammar (``response_format={"type": "json_object",
"schema": …}``), which constrains even tiny models to well-formed JSON. The window is ``n_ctx`` and tokens are
counted with the model's own tokenizer; a prompt longer than the window raises ``ContextWindowError`` (so callers
shrink it), not a plain ``ProviderError``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel

from deepsearcher.errors import ConfigError, ContextWindowError, ProviderError
from deepsearcher.events import EventCallback, QueryModel, ignore_event
from deepsearcher.llm.base import (
    ChatResult, Message, StopReply, TokenCallback, estimate_tokens, json_schema, messages_chars,
)
from deepsearcher.llm.options import LlamaCppOptions


class LlamaCppChat:
    """``ChatModel`` running a GGUF model in this process.

    Args:
        options: the ``llm`` settings block (``model_path`` already resolved against the config folder).

    Raises (on first use):
        ConfigError: the GGUF file does not exist.
        ProviderError: llama-cpp-python is not installed, or the file is not a loadable model.
    """

    def __init__(self, options: LlamaCppOptions) -> None:
        self.options = options
        self.name = options.model or Path(options.model_path or "").name
        self.price_per_1m_input = options.price_per_1m_input
        self.price_per_1m_output = options.price_per_1m_output
        self._llama: Any = None
        self._lock = threading.Lock()  # a Llama context is not thread-safe

    def check(self) -> None:
        """Load the model now, so a missing file or extra fails before the query starts."""
        self._model()

    def prepare(self, on_event: EventCallback) -> None:
        """``check`` with progress: a bundled model's first-run assembly and every load are reported as
        ``query.model`` events (loading a GGUF takes seconds on a slow disk; assembling one, a minute)."""
        if self._llama is None:
            self._model(on_event)

    @property
    def max_tokens(self) -> int:
        """The configured completion limit per call (``llm.max_tokens``)."""
        return self.options.max_tokens

    def context_window(self) -> tuple[int, str]:
        """``(llm.n_ctx, "llm.n_ctx")``: the window this process gives the model."""
        return self.options.n_ctx, "llm.n_ctx"

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's tokenizer (loads the model on first use)."""
        llama = self._model()
        with self._lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _path(self, on_event: EventCallback) -> Path:
        """The GGUF file: ``model_path``, or the bundled model assembled into the cache (first run)."""
        if self.options.model is None:
            return Path(self.options.model_path or "").expanduser()
        from deepsearcher.llm.bundled import assemble, bundled_model

        model = bundled_model(self.options.model)
        step = max(1, model.size // 20)
        shown = [-1]

        def progress(done: int, total: int) -> None:
            if done // step != shown[0] or done == total:
                shown[0] = done // step
                on_event(QueryModel(model=model.name, stage="assembling", done=done, total=total))

        return assemble(model, progress)

    def _model(self, on_event: EventCallback = ignore_event) -> Any:
        if self._llama is None:
            try:  # before a bundled model is assembled: without llama.cpp it could not run anyway
                from llama_cpp import Llama
            except ImportError as exc:
                raise ProviderError("the llama_cpp provider needs llama-cpp-python",
                                    hint="pip install 'deepsearcher[model]' (the bundled model) or "
                                         "'deepsearcher[local]'") from exc
            path = self._path(on_event)
            if not path.is_file():
                raise ConfigError(f"llm.model_path {str(path)!r} does not exist",
                                  hint="point llm.model_path at a .gguf file")
            on_event(QueryModel(model=self.name, stage="loading", total=path.stat().st_size))
            started = time.monotonic()
            try:
                self._llama = Llama(model_path=str(path), n_ctx=self.options.n_ctx, n_threads=self.options.n_threads,
                                    verbose=False)
            except Exception as exc:  # llama.cpp raises ValueError/RuntimeError for unreadable models
                raise ProviderError(f"llama.cpp could not load {path}: {exc}",
                                    hint="is it a GGUF model file that this llama-cpp-python version supports?") \
                    from exc
            on_event(QueryModel(model=self.name, stage="ready", total=path.stat().st_size,
                                seconds=round(time.monotonic() - started, 1)))
        return self._llama

    def chat(self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
             on_token: TokenCallback | None = None, max_tokens: int | None = None) -> ChatResult:
        """Complete ``messages`` (see ``ChatModel.chat``); ``max_tokens`` overrides ``llm.max_tokens`` for this call.

        Raises:
            ConfigError, ProviderError: as for ``check``; ProviderError also when generation fails.
            ContextWindowError: the prompt does not fit ``n_ctx`` ("Requested tokens … exceed context window").
        """
        llama = self._model()
        kwargs: dict[str, Any] = {"messages": list(messages), "temperature": self.options.temperature,
                                  "max_tokens": max_tokens or self.options.max_tokens}
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema(schema)}
        with self._lock:
            try:
                if on_token is None:
                    resp = llama.create_chat_completion(**kwargs)
                    choice = resp["choices"][0]
                    text = choice["message"].get("content") or ""
                    usage = resp.get("usage") or {}
                    return ChatResult(text, "", int(usage.get("prompt_tokens") or 0) or
                                      estimate_tokens(messages_chars(messages)),
                                      int(usage.get("completion_tokens") or 0) or estimate_tokens(text), 1,
                                      choice.get("finish_reason") or "")
                pieces: list[str] = []
                finish = ""
                chunks = llama.create_chat_completion(stream=True, **kwargs)
                for chunk in chunks:
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    piece = choice.get("delta", {}).get("content") or ""
                    if piece:
                        pieces.append(piece)
                        try:
                            on_token(piece)
                        except StopReply:  # the caller has what it needs: no more tokens are generated
                            chunks.close()
                            finish = "stop"
                            break
            except ValueError as exc:  # "Requested tokens (N) exceed context window of M", grammar errors
                if "context window" in str(exc):
                    raise ContextWindowError(f"the prompt does not fit llm.n_ctx = {self.options.n_ctx}: {exc}",
                                             hint="raise llm.n_ctx or lower query.top_k",
                                             limit=self.options.n_ctx) from exc
                raise ProviderError(f"llama.cpp failed: {exc}", hint="raise llm.n_ctx or lower query.top_k") from exc
        text = "".join(pieces)
        prompt_tokens = len(llama.tokenize(messages_chars(messages).encode("utf-8"), add_bos=False, special=True))
        return ChatResult(text, "", prompt_tokens, len(llama.tokenize(text.encode("utf-8"), add_bos=False)), 1,
                          finish)
