"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp, TEI...)."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from deepsearcher.embedding.base import l2_normalise
from deepsearcher.errors import ProviderError
from deepsearcher.embedding.options import OpenAICompatibleEmbeddingOptions
from deepsearcher.net.unreachable import root_cause, unreachable_hint
from deepsearcher.options import key_variable


class OpenAICompatibleEmbedder:
    """Embedder over the ``openai`` SDK's ``embeddings.create`` (the SDK retries 429/5xx with backoff).

    Args:
        options: provider options (model, base_url, api_key_env, batch_size, dimensions).
    """

    def __init__(self, options: OpenAICompatibleEmbeddingOptions) -> None:
        self.options = options
        self.model_name = options.model
        self._client: Any = None
        self._dimension: int | None = options.dimensions

    @property
    def where(self) -> str:
        return self.options.base_url or "https://api.openai.com/v1"

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            key = os.environ.get(key_variable(self.options) or "", "") or "not-needed"
            if self.options.base_url is None and key == "not-needed":
                raise ProviderError(f"no API key for the embeddings endpoint in ${self.options.api_key_env}",
                                    hint=f"export {self.options.api_key_env}=... or set embedding.base_url")
            self._client = OpenAI(api_key=key, base_url=self.options.base_url,
                                  timeout=self.options.timeout_s, max_retries=self.options.max_retries)
        return self._client

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed_documents(["dimension probe"]).shape[1])
        return self._dimension

    @property
    def max_tokens(self) -> int | None:
        return None

    def tokenizer(self) -> Any | None:
        return None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        out: list[list[float]] = []
        kwargs: dict[str, Any] = {"model": self.options.model}
        if self.options.dimensions:
            kwargs["dimensions"] = self.options.dimensions
        for start in range(0, len(texts), self.options.batch_size):
            batch = list(texts[start:start + self.options.batch_size])
            try:
                resp = self._get_client().embeddings.create(input=batch, **kwargs)
            except openai.APIConnectionError as exc:  # refused, timed out, a name that does not resolve
                reason = root_cause(exc)
                raise ProviderError(f"cannot reach the embeddings endpoint at {self.where}: {reason}",
                                    hint=unreachable_hint(self.where, reason, "embedding.base_url")) from exc
            except openai.OpenAIError as exc:
                raise ProviderError(f"the embeddings endpoint at {self.where} failed: {exc}",
                                    hint="check embedding.base_url, embedding.model and the API key") from exc
            out.extend(item.embedding for item in sorted(resp.data, key=lambda d: d.index))
        if not out:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        arr = l2_normalise(np.asarray(out, dtype=np.float32))
        self._dimension = arr.shape[1]
        return arr

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
