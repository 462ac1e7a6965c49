"""Options of the built-in chat model providers (the ``llm`` section of config.yaml).

Kept apart from the providers so that validating a config imports neither the HTTP client stack nor llama.cpp.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from typing_extensions import Self

from deepsearcher.options import PathResolver, ProviderOptions


class OpenAICompatibleLLMOptions(ProviderOptions):
    """Any server speaking the OpenAI chat-completions API (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp, ...)."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("gpt-4o-mini", description="Model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key.")
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


class LlamaCppOptions(ProviderOptions):
    """In-process llama.cpp on a local GGUF file (extra ``local``)."""

    provider: Literal["llama_cpp"] = "llama_cpp"
    model_path: Path = Field(..., description="Path to a .gguf file (relative to the config file's folder).")
    n_ctx: int = Field(4096, gt=0, description="Context window in tokens (prompt + reply); every prompt is "
                                               "fitted to it.")
    n_threads: int | None = Field(None, description="CPU threads; None = llama.cpp's default.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(1024, gt=0, description="Maximum completion tokens per call.")
    price_per_1m_input: float | None = Field(None, ge=0, description="Price per 1M prompt tokens (for cost).")
    price_per_1m_output: float | None = Field(None, ge=0, description="Price per 1M completion tokens.")

    def resolved(self, resolve: PathResolver) -> Self:
        return self.model_copy(update={"model_path": resolve(self.model_path)})
