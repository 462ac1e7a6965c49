"""Configuration: ``config.yaml`` validated into typed, described pydantic models.

Every provider section (``llm``, ``embedding``, ``vector_db``, ``loader``, ``crawler``, ``web_search``) selects a
provider by ``provider:``; each provider has its own options model with ``extra="forbid"``, so a typo is an error that
names the key and the file (after paper-qa's nested ``Settings`` and simonw/llm's per-model ``Options``). The model
that validates a file is assembled from ``deepsearcher.registry`` (``settings_model()``), so a plugin's provider and
its options are accepted and checked exactly like a built-in's. Secrets never live in the file: the file names
environment variables (``api_key_env``). Relative paths resolve against the config file's folder.

docs/configuration.md is generated from these models (``python -m deepsearcher.settings``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Optional, Union

import yaml
from pydantic import (
    BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, create_model, field_validator, model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from deepsearcher.errors import ConfigError
from deepsearcher.vectordb.names import lacks_scheme

CONFIG_ENV = "DEEPSEARCHER_CONFIG"
BUNDLED_MODEL = "bundled:all-MiniLM-L6-v2"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


PathResolver = Callable[[Union[str, Path]], Path]


class ProviderOptions(_Model):
    """Base of every provider's options model: the section's ``provider:`` name plus the provider's own keys.

    Plugin authors subclass it (or ``LoaderSettings`` / ``CrawlScope`` / ``VectorDBOptions`` for those kinds) with
    ``extra="forbid"`` kept, give every field a ``description``, and register the model with the provider.
    """

    provider: str = Field(..., description="Registered provider name (`deepsearcher config providers`).")

    def resolved(self, resolve: PathResolver) -> Self:
        """These options with relative file paths resolved (``resolve`` maps a path against the config folder);
        providers whose options hold paths override it."""
        return self


class AgentOptions(_Model):
    """Base of an agent's options model (the ``agents.<name>`` section of the config)."""


# --- LLM -----------------------------------------------------------------------------------------------------------
DEFAULT_KEY_HOSTS = frozenset({"api.openai.com"})
"""The hosts the default key variable ($OPENAI_API_KEY) is sent to when ``api_key_env`` is left unset."""


def key_variable(options: "OpenAICompatibleLLM | OpenAICompatibleEmbedding") -> str | None:
    """The environment variable whose key goes to ``options.base_url`` (OpenAI-compatible LLM or embedding options).

    A key belongs to its service: the default ``api_key_env`` ($OPENAI_API_KEY) is sent only to OpenAI (no
    ``base_url``, or one on ``DEFAULT_KEY_HOSTS``); another server gets a key only when the config names the
    variable (``api_key_env: DEEPSEEK_API_KEY``, or ``OPENAI_API_KEY`` written out), so pointing ``base_url`` at a
    local or third-party server never hands it the OpenAI key by accident.
    """
    env = options.api_key_env
    if not env or "api_key_env" in options.model_fields_set or options.base_url is None:
        return env
    from urllib.parse import urlsplit

    return env if (urlsplit(options.base_url).hostname or "").lower() in DEFAULT_KEY_HOSTS else None


class OpenAICompatibleLLM(ProviderOptions):
    """Any server speaking the OpenAI chat-completions API (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp, ...)."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("gpt-4o-mini", description="Model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
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


class LlamaCppLLM(ProviderOptions):
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


# --- Embedding -----------------------------------------------------------------------------------------------------
class SentenceTransformersEmbedding(ProviderOptions):
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


class OpenAICompatibleEmbedding(ProviderOptions):
    """An OpenAI-compatible /embeddings endpoint."""

    provider: Literal["openai_compatible"] = "openai_compatible"
    model: str = Field("text-embedding-3-small", description="Embedding model name as the server knows it.")
    base_url: str | None = Field(None, description="API base URL, e.g. http://127.0.0.1:8080/v1; None = OpenAI.")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key. Left "
                                                                  "unset, $OPENAI_API_KEY is sent to OpenAI only; "
                                                                  "another base_url gets a key only when this names "
                                                                  "its variable.")
    batch_size: int = Field(128, gt=0, description="Texts per request.")
    dimensions: int | None = Field(None, description="Requested output dimension, where the model supports it.")
    timeout_s: float = Field(60, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries with exponential backoff on 429/5xx/timeouts.")


# --- Vector DB -----------------------------------------------------------------------------------------------------
class VectorDBOptions(ProviderOptions):
    """Base of every ``vector_db`` provider's options: what the load and query paths read."""

    default_collection: str = Field("deepsearcher", description="Collection used when none is given.")


class MilvusSettings(VectorDBOptions):
    """Milvus: a Lite file path, or a server / Zilliz Cloud URI (same code path)."""

    provider: Literal["milvus"] = "milvus"
    uri: str = Field("./milvus.db", description="Milvus Lite file (*.db) or http(s)://host:19530.")
    token: str | None = Field(None, description="Literal token is refused; use token_env.")
    token_env: str | None = Field(None, description="Environment variable holding user:password or API key.")
    db_name: str | None = Field(None, description="Database on a Milvus server.")
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

    @field_validator("uri")
    @classmethod
    def _scheme_for_servers(cls, v: str) -> str:
        # checked before the path is resolved against the config's folder, which would hide the host:port
        if lacks_scheme(v):
            raise ValueError(f"{v!r} is a server address without its scheme: write http://{v} (a Milvus Lite file "
                             "is a path ending in .db)")
        return v

    @field_validator("token")
    @classmethod
    def _no_literal_token(cls, v: str | None) -> str | None:
        if v:
            raise ValueError("secrets are not read from the file: put the token in an environment variable "
                             "and name it in vector_db.token_env")
        return v

    def resolved(self, resolve: PathResolver) -> Self:
        return self if _is_remote(self.uri) else self.model_copy(update={"uri": str(resolve(self.uri))})


# --- Loader / crawler ----------------------------------------------------------------------------------------------
class LoaderSettings(ProviderOptions):
    """How files become Documents (the base of every ``loader`` provider's options: the file selection and record
    keys apply to all of them)."""

    provider: str = Field("builtin", description="builtin, unstructured (extra), or a plugin's loader.")
    include: list[str] = Field(default_factory=list, description="Glob patterns a file must match (folders).")
    exclude: list[str] = Field(
        default_factory=lambda: ["**/.git/**", "**/__pycache__/**", "**/.*"],
        description="Glob patterns of files to skip (folders).",
    )
    json_text_path: str = Field(
        "text", description="JSON/JSONL: path to each record's text: keys joined by dots, [] for each element of a "
                            "list, e.g. text, body.text or data[].body (records under data). A list of strings is "
                            "joined as paragraphs. Old name: json_text_key.")
    json_title_path: str | None = Field(
        "title", description="JSON/JSONL: path to the title inside a record (e.g. meta.title); null = none. Old "
                             "name: json_title_key.")
    docx_headers_footers: bool = Field(
        False, description="DOCX: also store page headers and footers (they repeat on every page, so off).")
    unstructured_strategy: Literal["fast", "auto"] = Field("fast", description="unstructured partition strategy.")

    @model_validator(mode="before")
    @classmethod
    def _old_key_names(cls, data: Any) -> Any:
        """Accept the old ``json_text_key`` / ``json_title_key`` (a key is a one-step path)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in (("json_text_key", "json_text_path"), ("json_title_key", "json_title_path")):
            if old in data:
                value = data.pop(old)
                if new in data and data[new] != value:
                    raise ValueError(f"{old} is the old name of {new}; give only {new}")
                data[new] = value
        return data


class CrawlScope(ProviderOptions):
    """What every crawler provider is told to fetch: depth, page limit, host, robots.txt and URL patterns."""

    max_depth: int = Field(1, ge=0, description="Link depth from the start URL (0 = only that page).")
    max_pages: int = Field(50, gt=0, description="Pages fetched per start URL at most.")
    same_site: bool = Field(True, description="Stay on the start URL's host (links and redirects).")
    respect_robots: bool = Field(True, description="Obey robots.txt.")
    include: list[str] = Field(default_factory=list, description="Regexes a URL must match to be fetched.")
    exclude: list[str] = Field(default_factory=list, description="Regexes of URLs never fetched.")
    allow_private_urls: bool | None = Field(
        None, description="Fetch URLs whose host resolves to a loopback, private, link-local (cloud metadata), CGNAT, "
                          "multicast, reserved or documentation address (see docs/security.md); checked on every "
                          "connection, redirect and link. None = allowed for the CLI and the Python API (you reach "
                          "your own network anyway); the HTTP server replaces it with its own rule "
                          "(server.allow_private_urls). false = refused everywhere.")

    @field_validator("include", "exclude")
    @classmethod
    def _valid_regexes(cls, patterns: list[str]) -> list[str]:
        return _check_regexes(patterns)


class BuiltinCrawler(CrawlScope):
    """The built-in breadth-first crawler (httpx + trafilatura)."""

    provider: Literal["builtin"] = "builtin"
    concurrency: int = Field(4, gt=0, description="Requests in flight at once.")
    timeout_s: float = Field(20, gt=0, description="One wall-clock deadline per request in seconds, from connecting "
                                                   "to the last byte (robots.txt: all its redirects together).")
    max_page_mb: float = Field(20, gt=0, description="Responses larger than this many MB, on the wire or decoded "
                                                     "(gzip, deflate, br, zstd), are skipped.")
    user_agent: str = Field("deepsearcher-crawler (+https://github.com/deepsearcher)",
                            description="User-Agent header, also the name matched against robots.txt groups.")


class FirecrawlCrawler(CrawlScope):
    """Firecrawl (hosted or self-hosted) through firecrawl-py (extra ``crawl``); max_pages is Firecrawl's limit and
    same_site keeps it off external links and subdomains."""

    provider: Literal["firecrawl"] = "firecrawl"
    api_url: str | None = Field(None, description="Self-hosted Firecrawl URL; None = the hosted service.")
    api_key_env: str | None = Field("FIRECRAWL_API_KEY", description="Environment variable holding the API key.")
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



# --- Ingest / query ------------------------------------------------------------------------------------------------
class RaySettings(_Model):
    """The Ray engine (``ingest.engine: ray``, extra ``ray``): where Ray runs and how many embedding actors."""

    address: str | None = Field(None, description="Ray cluster to run on (ray://head:10001, or auto for the cluster "
                                                  "this machine belongs to); None = start a local Ray for the load "
                                                  "and stop it afterwards.")
    num_cpus: int | None = Field(None, gt=0, description="Local Ray only: CPUs it may schedule on; None = all of "
                                                         "this machine's.")
    embed_actors: int = Field(1, gt=0, description="Embedding actors, one model and one CPU each (extraction tasks "
                                                   "and the writer reserve none: docs/scale.md).")
    embed_batch_size: int = Field(64, gt=0, description="Chunks per batch an embedding actor receives (embedded in "
                                                        "order of length).")


class IngestSettings(_Model):
    """Splitting, batching and the ingestion engine."""

    chunk_size_tokens: int = Field(240, gt=16, description="Chunk size in the embedder's own tokens.")
    chunk_overlap_tokens: int = Field(32, ge=0, description="Overlap between consecutive chunks, in tokens.")
    batch_size: int = Field(256, gt=0, description="Chunks embedded and upserted per batch (Ray engine: per "
                                                   "upsert).")
    describe_with_llm: bool = Field(
        True, description="When a load creates a collection without a description (no -d), let the configured LLM "
                          "write one from a sample of its chunks (one call); false, or no LLM: built from file names "
                          "and titles.")
    engine: Literal["local", "ray"] = Field(
        "local", description="local: one process. ray: Ray Data tasks read and split files, an actor pool embeds, "
                             "batches are upserted to a Milvus server (not Lite); same ids, so both engines build "
                             "the same collection (docs/scale.md).")
    ray: RaySettings = Field(default_factory=RaySettings, description="Options of the Ray engine.")


class QuerySettings(_Model):
    """The agent loop."""

    agent: str = Field("deep_search", description="Agent: auto (the LLM picks per question), deep_search, "
                                                  "chain_of_rag, naive, deep_research, or a plugin's agent.")
    max_iter: int = Field(3, gt=0, description="Reflection rounds at most.")
    top_k: int = Field(5, gt=0, description="Chunks retrieved per (sub-query, collection).")
    max_sub_queries: int = Field(4, gt=0, description="Sub-queries the question is decomposed into at most.")
    token_budget: int | None = Field(
        None, gt=0, description="Hard limit on LLM tokens (prompt + completion) per query, checked before every call; "
                                "room for the final report is kept back, and research stops early to write it.")
    hybrid: bool = Field(True, description="Dense + BM25 (full text), fused by a weighted sum of normalised scores.")
    language: str | None = Field(None, description="Report language; None = the question's language.")
    dedup_threshold: float | None = Field(
        None, gt=0, le=1, description="Cosine at or above which two sub-queries are duplicates (unless numbers, names "
                                      "or negation tell them apart). None = calibrated per embedding model "
                                      "(docs/benchmarks.md: 0.91 for all-MiniLM-L6-v2, 0.97 for other models).")
    max_question_tokens: int = Field(
        3000, gt=0, description="Longer questions are refused before any LLM call (the question is part of every "
                                "prompt).")
    concurrency: int = Field(4, gt=0, description="Sub-queries of one round routed, retrieved and judged at once "
                                                  "(threads); 1 = one after the other.")
    long_report_budget_runs: float = Field(
        2.0, gt=0, le=20, description="A long report (every section, the outline and the editing pass together) may "
                                      "use at most this many times agents.deep_research.token_budget tokens per "
                                      "request; later sections are cut short when it is spent. Without it one "
                                      "request could spend one budget per section (8 sections: 8x). "
                                      "query.token_budget, when lower, wins.")
    report_links: Literal["cited", "all"] = Field(
        "cited", description="Links in a model-written answer (report.md, the API's markdown and answer_html) stay "
                             "links only to the hosts of the report's web sources (cited); any other becomes its "
                             "text and host, so a link cannot carry data out on a click. all = keep http(s) links "
                             "to any host. Remote images and raw HTML are always removed (docs/security.md).")
    read_private_result_urls: bool = Field(
        False, description="Let DeepResearch read web search results (and their redirects) whose host resolves to "
                           "a loopback, private, link-local (cloud metadata), CGNAT or reserved address. A search "
                           "engine, not you, chose those URLs, so they are refused by default whatever "
                           "crawler.allow_private_urls or server.allow_private_urls say (docs/security.md).")
    answer_from_top_chunks_when_irrelevant: bool = Field(
        False, description="When every retrieved chunk is judged irrelevant, answer from the top-ranked chunks "
                           "anyway (with a visible warning) instead of reporting that nothing relevant was found.")

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str) -> str:
        from deepsearcher.registry import registry

        known = registry.names("agent")
        if value != "auto" and value not in known:
            raise PydanticCustomError("literal_error", "Input should be {expected} (the registered agents)",
                                      {"expected": " or ".join(map(repr, ["auto", *known]))})
        return value


class ServerSettings(_Model):
    """``deepsearcher serve``."""

    host: str = Field("127.0.0.1", description="Interface to bind; any non-loopback host needs the token.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port.")
    token_env: str = Field("DEEPSEARCHER_API_TOKEN", description="Bearer token variable (required off loopback).")
    allowed_roots: list[Path] = Field(default_factory=list, description="Folders the load endpoint may read.")
    allow_private_urls: bool | None = Field(
        None, description="Let loads through the server reach loopback/private/link-local (cloud metadata) "
                          "addresses, for the start URLs and for every connection the crawler makes; None = only "
                          "when the server itself is bound to loopback. crawler.allow_private_urls: false still "
                          "wins (docs/security.md).")
    max_concurrent_queries: int = Field(2, gt=0, description="Queries run at once (in worker threads); more wait.")
    max_queued_queries: int = Field(16, ge=0, description="Queries that may wait for a worker; past that a query "
                                                          "is answered 429 with Retry-After.")
    max_queued_loads: int = Field(4, ge=0, description="Loads that may wait while one runs (loads run one at a "
                                                       "time, on a thread of their own); past that 429 with "
                                                       "Retry-After.")
    max_body_mb: float = Field(1.0, gt=0, description="Largest request body in MB; larger ones get 413 before "
                                                      "they are read.")


DEFAULT_PROVIDERS = {"llm": "openai_compatible", "embedding": "sentence_transformers", "vector_db": "milvus",
                     "loader": "builtin", "crawler": "builtin"}
#: config section -> registry kind, for the sections that select a provider
PROVIDER_SECTIONS = {"llm": "llm", "embedding": "embedding", "vector_db": "vector_db", "loader": "loader",
                     "crawler": "crawler", "web_search": "web_search"}
#: the options base class each kind's options models must subclass (the fields the pipeline reads)
KIND_BASES: dict[str, type[ProviderOptions]] = {"vector_db": VectorDBOptions, "loader": LoaderSettings,
                                                "crawler": CrawlScope}


class AgentsSettings(_Model):
    """Options of the agents that have some, one key per agent (``agents.<name>``)."""


class Settings(_Model):
    """The whole configuration. ``config_path`` is set by ``load_settings``.

    Validate files with ``load_settings`` (or ``settings_model().model_validate``): this class types each provider
    section by its base options class; the model assembled from the registry checks each provider's own options.
    """

    llm: Optional[SerializeAsAny[ProviderOptions]] = Field(
        default_factory=OpenAICompatibleLLM, description="The chat model (null: no LLM; `retrieve` still works).")
    embedding: SerializeAsAny[ProviderOptions] = Field(default_factory=SentenceTransformersEmbedding,
                                                       description="The embedding model.")
    vector_db: SerializeAsAny[VectorDBOptions] = Field(default_factory=MilvusSettings,
                                                       description="Where chunks are stored.")
    loader: SerializeAsAny[LoaderSettings] = Field(default_factory=LoaderSettings,
                                                   description="How files become documents.")
    crawler: SerializeAsAny[CrawlScope] = Field(default_factory=BuiltinCrawler,
                                                description="How URLs are fetched.")
    web_search: Optional[SerializeAsAny[ProviderOptions]] = Field(
        None, description="Web search at query time (null: off; nothing is sent to a search engine).")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Splitting and batching.")
    query: QuerySettings = Field(default_factory=QuerySettings, description="The agent loop.")
    agents: SerializeAsAny[AgentsSettings] = Field(default_factory=AgentsSettings,
                                                   description="Options of individual agents.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="`deepsearcher serve`.")
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

    def agent_options(self, name: str) -> BaseModel | None:
        """The options of agent ``name`` (its defaults when the config has none), or None for an agent without
        an options model."""
        value = getattr(self.agents, name, None)
        if isinstance(value, BaseModel):
            return value
        from deepsearcher.registry import registry

        model = registry.get("agent", name).options_model()
        return model() if model is not None else None

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
        uri = getattr(self.vector_db, "uri", None)
        if isinstance(uri, str) and not _is_remote(uri):
            data["vector_db"]["uri"] = str(self.resolve_path(uri))
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
        settings = settings_model().model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration in {where}:\n" + "\n".join(_error_lines(exc))) from exc
    settings.config_path = cfg_path.resolve() if cfg_path else None
    return settings


def _error_lines(exc: ValidationError) -> list[str]:
    """One ``  key.path: message`` line per error; union tags (provider names) left out of the key path."""
    from deepsearcher.registry import registry

    providers = {p.name for p in registry.providers() if p.kind != "agent"}
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        section = loc[0] if loc else ""
        if section in PROVIDER_SECTIONS and len(loc) > 1 and loc[1] in providers:
            loc.pop(1)  # the discriminated union's tag
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif section in PROVIDER_SECTIONS and (
                err["type"] == "union_tag_invalid" or (err["type"] == "literal_error" and loc[-1:] == ["provider"])):
            kind = PROVIDER_SECTIONS[section]
            given = (err.get("ctx") or {}).get("tag", err.get("input"))
            msg = (f"unknown {kind} provider {given!r}; known: {', '.join(registry.names(kind))} "
                   "(`deepsearcher config providers` lists them)")
            loc = [section, "provider"]
        lines.append(f"  {'.'.join(loc)}: {msg}")
    return lines


# --- the validation model, assembled from the registry -----------------------------------------------------------
_SETTINGS_MODELS: dict[int, tuple[int, type[Settings]]] = {}
_DERIVED: dict[tuple[type[BaseModel], str], type[ProviderOptions]] = {}


def settings_model(registry: Any = None) -> type[Settings]:
    """The ``Settings`` subclass that validates a config: each provider section is a discriminated union (on
    ``provider``) of the options models registered for its kind; ``agents`` has one key per agent with options.

    Rebuilt when the registry changes (plugins loaded, a provider registered).

    Raises:
        ConfigError: a registered options model does not subclass the base its kind requires.
    """
    from deepsearcher.registry import registry as default_registry

    reg = registry or default_registry
    reg.load_plugins()
    cached = _SETTINGS_MODELS.get(id(reg))
    if cached is not None and cached[0] == reg.version:
        return cached[1]
    fields: dict[str, Any] = {}
    for section, kind in PROVIDER_SECTIONS.items():
        members = [_section_model(kind, p) for p in reg.providers(kind)]
        info = Settings.model_fields[section]
        field = Field(default=info.default, description=info.description) if info.default_factory is None else \
            Field(default_factory=info.default_factory, description=info.description)
        if not members:
            fields[section] = (Optional[ProviderOptions], field)
            continue
        annotation: Any = members[0] if len(members) == 1 else Annotated[
            Union[tuple(members)], Field(discriminator="provider")]
        annotation = SerializeAsAny[annotation]  # type: ignore[misc]
        fields[section] = (Optional[annotation] if section in ("llm", "web_search") else annotation, field)
    agent_fields: dict[str, Any] = {}
    for provider in reg.providers("agent"):
        model = provider.options_model()
        if model is not None:
            agent_fields[provider.name] = (model, Field(default_factory=model, description=provider.description))
    agents = create_model("AgentsSettings", __base__=AgentsSettings, **agent_fields)
    fields["agents"] = (SerializeAsAny[agents], Field(default_factory=agents,
                                                      description=Settings.model_fields["agents"].description))
    model = create_model("Settings", __base__=Settings, **fields)
    _SETTINGS_MODELS[id(reg)] = (reg.version, model)
    return model


def _section_model(kind: str, provider: Any) -> type[ProviderOptions]:
    """The options model of one provider, with ``provider: Literal[name]`` so it can be a union member."""
    base = KIND_BASES.get(kind, ProviderOptions)
    options = provider.options_model() or base
    if not (isinstance(options, type) and issubclass(options, base)):
        raise ConfigError(f"the {kind} provider {provider.name!r} ({provider.origin}) has an options model that "
                          f"does not subclass deepsearcher.settings.{base.__name__}",
                          hint="fix or uninstall that plugin")
    name_type: Any = Literal[provider.name]
    if options.model_fields["provider"].annotation == name_type:
        return options
    key = (options, provider.name)
    if key not in _DERIVED:
        description = options.model_fields["provider"].description
        _DERIVED[key] = create_model(options.__name__, __base__=options, __module__=options.__module__,
                                     provider=(name_type, Field(provider.name, description=description)))
    return _DERIVED[key]


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, val in extra.items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], val)
        else:
            out[key] = val
    return out
