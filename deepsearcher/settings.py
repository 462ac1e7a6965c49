"""Configuration: ``config.yaml`` validated into typed, described pydantic models.

Every section selects a provider by ``provider:``; each provider has its own options model with ``extra="forbid"``,
so a typo is an error that names the key and the file (after paper-qa's nested ``Settings`` and simonw/llm's
per-model ``Options``). Secrets never live in the file: the file names environment variables (``api_key_env``).
Relative paths resolve against the config file's folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from deepsearcher.errors import ConfigError

CONFIG_ENV = "DEEPSEARCHER_CONFIG"
BUNDLED_MODEL = "bundled:all-MiniLM-L6-v2"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


# --- LLM -----------------------------------------------------------------------------------------------------------
class OpenAICompatibleLLM(_Model):
    """Any server speaking the OpenAI chat-completions API (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp, ...)."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("gpt-4o-mini", description="Model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(4096, gt=0, description="Maximum completion tokens per call.")
    timeout_s: float = Field(120, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries with exponential backoff on 429/5xx/timeouts.")
    json_schema: Literal["auto", "always", "never"] = Field(
        "auto", description="Ask for JSON-schema output: auto = ask, drop it once if the server refuses."
    )
    price_per_1m_input: float | None = Field(None, ge=0, description="Price per 1M prompt tokens (for cost).")
    price_per_1m_output: float | None = Field(None, ge=0, description="Price per 1M completion tokens.")


class LlamaCppLLM(_Model):
    """In-process llama.cpp on a local GGUF file (extra ``local``)."""

    provider: Literal["llama_cpp"] = "llama_cpp"
    model_path: Path = Field(..., description="Path to a .gguf file.")
    n_ctx: int = Field(4096, gt=0, description="Context window in tokens.")
    n_threads: int | None = Field(None, description="CPU threads; None = llama.cpp's default.")
    temperature: float = Field(0.1, ge=0, le=2)
    max_tokens: int = Field(1024, gt=0)
    price_per_1m_input: float | None = None
    price_per_1m_output: float | None = None


LLMSettings = Annotated[Union[OpenAICompatibleLLM, LlamaCppLLM], Field(discriminator="provider")]


# --- Embedding -----------------------------------------------------------------------------------------------------
class SentenceTransformersEmbedding(_Model):
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


class OpenAICompatibleEmbedding(_Model):
    """An OpenAI-compatible /embeddings endpoint."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("text-embedding-3-small")
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    batch_size: int = Field(128, gt=0)
    dimensions: int | None = Field(None, description="Requested output dimension, where the model supports it.")
    timeout_s: float = Field(60, gt=0)
    max_retries: int = Field(3, ge=0)


EmbeddingSettings = Annotated[
    Union[SentenceTransformersEmbedding, OpenAICompatibleEmbedding], Field(discriminator="provider")
]


# --- Vector DB -----------------------------------------------------------------------------------------------------
class MilvusSettings(_Model):
    """Milvus: a Lite file path, or a server / Zilliz Cloud URI (same code path)."""

    provider: Literal["milvus"] = "milvus"
    uri: str = Field("./milvus.db", description="Milvus Lite file (*.db) or http(s)://host:19530.")
    token: str | None = Field(None, description="Literal token is refused; use token_env.")
    token_env: str | None = Field(None, description="Environment variable holding user:password or API key.")
    db_name: str | None = Field(None, description="Database on a Milvus server.")
    default_collection: str = Field("deepsearcher", description="Collection used when none is given.")
    connect_timeout_s: float = Field(10, gt=0, description="Seconds to wait for a Milvus server to answer the "
                                                           "connection before reporting it unreachable.")
    hnsw_m: int = Field(16, ge=2, le=2048, description="Server collections: HNSW links per node (Milvus M); "
                                                       "more = better recall, more memory. Lite searches exactly.")
    hnsw_ef_construction: int = Field(200, ge=8, description="Server collections: HNSW candidate list while "
                                                             "building the index (Milvus efConstruction).")
    hnsw_ef: int = Field(256, ge=1, description="Server collections: HNSW candidate list per search (Milvus ef; "
                                                "raised to the number of results asked for). Measured recall@10 "
                                                "of exact: 0.988 at 100k chunks, 0.957 at 1M (512: 0.979); "
                                                "docs/benchmarks.md.")

    @field_validator("token")
    @classmethod
    def _no_literal_token(cls, v: str | None) -> str | None:
        if v:
            raise ValueError("secrets are not read from the file: put the token in an environment variable "
                             "and name it in vector_db.token_env")
        return v


# --- Loader / crawler ----------------------------------------------------------------------------------------------
class LoaderSettings(_Model):
    """How files become Documents."""

    provider: Literal["builtin", "unstructured"] = Field("builtin", description="builtin or unstructured (extra).")
    include: list[str] = Field(default_factory=list, description="Glob patterns a file must match (folders).")
    exclude: list[str] = Field(
        default_factory=lambda: ["**/.git/**", "**/__pycache__/**", "**/.*"],
        description="Glob patterns of files to skip (folders).",
    )
    json_text_key: str = Field("text", description="JSON/JSONL: key holding the text.")
    json_title_key: str | None = Field("title", description="JSON/JSONL: key holding the title.")
    unstructured_strategy: Literal["fast", "auto"] = Field("fast", description="unstructured partition strategy.")


class _CrawlScope(_Model):
    """What every crawler provider is told to fetch: depth, page limit, host, robots.txt and URL patterns."""

    max_depth: int = Field(1, ge=0, description="Link depth from the start URL (0 = only that page).")
    max_pages: int = Field(50, gt=0, description="Pages fetched per start URL at most.")
    same_site: bool = Field(True, description="Stay on the start URL's host (links and redirects).")
    respect_robots: bool = Field(True, description="Obey robots.txt.")
    include: list[str] = Field(default_factory=list, description="Regexes a URL must match to be fetched.")
    exclude: list[str] = Field(default_factory=list, description="Regexes of URLs never fetched.")

    @field_validator("include", "exclude")
    @classmethod
    def _valid_regexes(cls, patterns: list[str]) -> list[str]:
        return _check_regexes(patterns)


class BuiltinCrawler(_CrawlScope):
    """The built-in breadth-first crawler (httpx + trafilatura)."""

    provider: Literal["builtin"] = "builtin"
    concurrency: int = Field(4, gt=0, description="Requests in flight at once.")
    timeout_s: float = Field(20, gt=0, description="Per-request timeout in seconds (connect to last byte).")
    max_page_mb: float = Field(20, gt=0, description="Responses larger than this many MB are skipped.")
    user_agent: str = Field("deepsearcher-crawler (+https://github.com/deepsearcher)",
                            description="User-Agent header, also the name matched against robots.txt groups.")


class FirecrawlCrawler(_CrawlScope):
    """Firecrawl (hosted or self-hosted) through firecrawl-py (extra ``crawl``); max_pages is Firecrawl's limit and
    same_site keeps it off external links and subdomains."""

    provider: Literal["firecrawl"] = "firecrawl"
    api_url: str | None = Field(None, description="Self-hosted Firecrawl URL; None = the hosted service.")
    api_key_env: str | None = "FIRECRAWL_API_KEY"
    timeout_s: float = Field(600, gt=0, description="Wait this long for a crawl job, then cancel it.")
    poll_interval_s: float = Field(2, gt=0, description="Seconds between crawl status polls.")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="More Firecrawl options by our names (see docs/crawling.md); "
                                                "an unknown one is an error listing the accepted ones.")


def _check_regexes(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression {pattern!r}: {exc}") from None
    return patterns


CrawlerSettings = Annotated[Union[BuiltinCrawler, FirecrawlCrawler], Field(discriminator="provider")]


# --- Ingest / query ------------------------------------------------------------------------------------------------
class IngestSettings(_Model):
    """Splitting and batching."""

    chunk_size_tokens: int = Field(240, gt=16, description="Chunk size in the embedder's own tokens.")
    chunk_overlap_tokens: int = Field(32, ge=0, description="Overlap between consecutive chunks, in tokens.")
    batch_size: int = Field(256, gt=0, description="Chunks embedded and upserted per batch.")


class QuerySettings(_Model):
    """The agent loop."""

    agent: Literal["auto", "deep_search", "naive", "chain_of_rag"] = "deep_search"
    max_iter: int = Field(3, gt=0, description="Reflection rounds at most.")
    top_k: int = Field(5, gt=0, description="Chunks retrieved per (sub-query, collection).")
    max_sub_queries: int = Field(4, gt=0)
    token_budget: int | None = Field(None, gt=0, description="Stop iterating past this many LLM tokens.")
    hybrid: bool = Field(True, description="Dense + BM25 (full text), fused by a weighted sum of normalised scores.")
    language: str | None = Field(None, description="Report language; None = the question's language.")
    dedup_threshold: float = Field(0.92, gt=0, le=1, description="Cosine above which sub-queries are duplicates.")


class ServerSettings(_Model):
    """``deepsearcher serve``."""

    host: str = "127.0.0.1"
    port: int = 8000
    token_env: str = Field("DEEPSEARCHER_API_TOKEN", description="Bearer token variable (required off loopback).")
    allowed_roots: list[Path] = Field(default_factory=list, description="Folders the load endpoint may read.")
    allow_private_urls: bool | None = Field(
        None, description="Let the load endpoint fetch URLs on loopback/private/link-local addresses; "
                          "None = only when the server itself is bound to loopback.")
    max_concurrent_queries: int = Field(2, gt=0, description="Queries run at once (in worker threads); more wait.")


DEFAULT_PROVIDERS = {"llm": "openai_compatible", "embedding": "sentence_transformers", "crawler": "builtin"}


class Settings(_Model):
    """The whole configuration. ``config_path`` is set by ``load_settings``."""

    llm: LLMSettings | None = Field(default_factory=OpenAICompatibleLLM)
    embedding: EmbeddingSettings = Field(default_factory=SentenceTransformersEmbedding)
    vector_db: MilvusSettings = Field(default_factory=MilvusSettings)
    loader: LoaderSettings = Field(default_factory=LoaderSettings)
    crawler: CrawlerSettings = Field(default_factory=BuiltinCrawler)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    query: QuerySettings = Field(default_factory=QuerySettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    config_path: Path | None = Field(None, exclude=True, description="Where the settings came from.")

    @model_validator(mode="before")
    @classmethod
    def _default_providers(cls, data: Any) -> Any:
        """A section written without ``provider:`` uses the default provider of that section."""
        if isinstance(data, dict):
            data = dict(data)
            for section, provider in DEFAULT_PROVIDERS.items():
                if isinstance(data.get(section), dict) and "provider" not in data[section]:
                    data[section] = {"provider": provider, **data[section]}
        return data

    def resolve_path(self, value: str | Path) -> Path:
        """Resolve a relative path against the config file's folder (cwd when no file)."""
        p = Path(value).expanduser()
        if p.is_absolute():
            return p
        base = self.config_path.parent if self.config_path else Path.cwd()
        return (base / p).resolve()

    def masked(self) -> dict[str, Any]:
        """Effective settings as a dict, with the *values* of secret env vars shown masked."""
        data = self.model_dump(mode="json", exclude={"config_path"})

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for key, val in list(node.items()):
                    if key.endswith("_env") and isinstance(val, str):
                        secret = os.environ.get(val)
                        node[key] = f"{val} ({'set: ' + _mask(secret) if secret else 'not set'})"
                    else:
                        walk(val)

        walk(data)
        if data.get("vector_db", {}).get("uri") and not _is_remote(self.vector_db.uri):
            data["vector_db"]["uri"] = str(self.resolve_path(self.vector_db.uri))
        return data


def _mask(secret: str) -> str:
    return secret[:3] + "…" + secret[-2:] if len(secret) > 8 else "****"


def _is_remote(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "tcp://", "grpc://"))


def default_config_path() -> Path | None:
    """The config file to use: ``$DEEPSEARCHER_CONFIG``, else ``./config.yaml`` if it exists, else None."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    here = Path("config.yaml")
    return here if here.is_file() else None


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Read and validate a config file.

    Args:
        path: YAML file; None = ``default_config_path()`` (built-in defaults when that is None too).
        overrides: nested dict merged over the file (e.g. ``{"query": {"max_iter": 2}}``).

    Returns:
        Validated ``Settings`` with ``config_path`` set.

    Raises:
        ConfigError: the file is missing, not YAML, or a key is unknown / of the wrong type (the message names the
            key path and the file).
    """
    cfg_path = Path(path) if path is not None else default_config_path()
    raw: dict[str, Any] = {}
    if cfg_path is not None:
        if not cfg_path.is_file():
            raise ConfigError(f"config file not found: {cfg_path}",
                              hint="pass --config PATH or set DEEPSEARCHER_CONFIG; see config.yaml in the repo")
        try:
            with cfg_path.open(encoding="utf-8") as stream:  # a stream, so YAML errors name the file
                loaded = yaml.safe_load(stream)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{cfg_path}: not valid YAML: {exc}") from exc
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{cfg_path}: the top level must be a mapping of sections (llm, embedding, ...)")
        raw = loaded
    if overrides:
        raw = _merge(raw, overrides)
    where = str(cfg_path) if cfg_path else "built-in defaults"
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"] if not _is_union_tag(p))
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown key"
            lines.append(f"  {loc}: {msg}")
        raise ConfigError(f"invalid configuration in {where}:\n" + "\n".join(lines)) from exc
    settings.config_path = cfg_path.resolve() if cfg_path else None
    return settings


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {
        "openai_compatible", "llama_cpp", "sentence_transformers", "builtin", "firecrawl",
    }


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, val in extra.items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], val)
        else:
            out[key] = val
    return out
