"""Configuration: ``config.yaml`` validated into typed, described pydantic models.

Every provider section (``llm``, ``embedding``, ``vector_db``, ``loader``, ``crawler``, ``web_search``) selects a
provider by ``provider:``; each provider has its own options model with ``extra="forbid"``, so a typo is an error that
names the key and the file (after paper-qa's nested ``Settings`` and simonw/llm's per-model ``Options``). The model
that validates a file is assembled from ``deepsearcher.registry`` (``settings_model()``), so a plugin's provider and
its options are accepted and checked exactly like a built-in's. Secrets never live in the file: the file names
environment variables (``api_key_env``). Relative paths resolve against the config file's folder.

Here live the top-level sections (``ingest``, ``query``, ``server``, ``agents``), ``Settings`` and the assembly of
the validating model. Each provider's options live beside the provider (``llm/options.py``, ``embedding/options.py``,
``vectordb/options.py``, ``ingest/options.py``, ``websearch/base.py``); their bases are in ``deepsearcher.options``
(``ProviderOptions`` and ``AgentOptions`` are re-exported here, the names plugins use).

docs/configuration.md is generated from these models (``python -m deepsearcher.cli.config_docs``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import yaml
from pydantic import BaseModel, Field, SerializeAsAny, ValidationError, create_model, field_validator, model_validator
from pydantic_core import PydanticCustomError

from deepsearcher.embedding.options import SentenceTransformersOptions
from deepsearcher.errors import ConfigError
from deepsearcher.ingest.options import BuiltinCrawlerOptions, CrawlScope, LoaderOptions
from deepsearcher.llm.options import DEFAULT_LOCAL_MODEL, LlamaCppOptions, OpenAICompatibleLLMOptions
from deepsearcher.options import AgentOptions as AgentOptions
from deepsearcher.options import ProviderOptions as ProviderOptions
from deepsearcher.options import QuerySettings as QuerySettings
from deepsearcher.options import StrictModel
from deepsearcher.vectordb.names import is_remote
from deepsearcher.vectordb.options import MilvusOptions, VectorDBOptions

CONFIG_ENV = "DEEPSEARCHER_CONFIG"


# --- Ingest / query ------------------------------------------------------------------------------------------------
class RaySettings(StrictModel):
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


class IngestSettings(StrictModel):
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


class WatchedFolder(StrictModel):
    """A folder the server keeps in sync with a collection (``server.watch``), as ``load DIR --watch`` does."""

    path: Path = Field(..., description="The folder (inside server.allowed_roots; relative to the config file).")
    collection: Optional[str] = Field(None, description="Its collection; None = vector_db.default_collection.")
    keep_missing: bool = Field(False, description="Keep the chunks of deleted or renamed files (as load "
                                                  "--keep-missing); default: removed.")


class ServerSettings(StrictModel):
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
    mcp: bool = Field(True, description="Serve the MCP tools over Streamable HTTP at /mcp (needs the extra `mcp`; "
                                        "the same token rule as the API).")
    mcp_load: bool = Field(False, description="Offer the MCP load tool over HTTP (always inside allowed_roots and the "
                                              "address rule); `deepsearcher mcp` over stdio offers it always.")
    watch: list[WatchedFolder] = Field(default_factory=list, description=(
        "Folders kept in sync while the server runs: loaded at startup, then every created, changed, renamed or "
        "deleted file is applied as a re-load would (file-system events; through the load queue, one load at a "
        "time). Each entry: {path, collection (default: vector_db.default_collection), keep_missing (default "
        "false)}; each path must lie inside allowed_roots."))


DEFAULT_PROVIDERS = {"llm": "openai_compatible", "embedding": "sentence_transformers", "vector_db": "milvus",
                     "loader": "builtin", "crawler": "builtin"}
#: config section -> registry kind, for the sections that select a provider
PROVIDER_SECTIONS = {"llm": "llm", "embedding": "embedding", "vector_db": "vector_db", "loader": "loader",
                     "crawler": "crawler", "web_search": "web_search"}
#: the options base class each kind's options models must subclass (the fields the pipeline reads)
KIND_BASES: dict[str, type[ProviderOptions]] = {"vector_db": VectorDBOptions, "loader": LoaderOptions,
                                                "crawler": CrawlScope}


class AgentsSettings(StrictModel):
    """Options of the agents that have some, one key per agent (``agents.<name>``)."""


class Settings(StrictModel):
    """The whole configuration. ``config_path`` is set by ``load_settings``.

    Validate files with ``load_settings`` (or ``settings_model().model_validate``): this class types each provider
    section by its base options class; the model assembled from the registry checks each provider's own options.
    """

    llm: Optional[SerializeAsAny[ProviderOptions]] = Field(
        default_factory=lambda: LlamaCppOptions(model=DEFAULT_LOCAL_MODEL, max_tokens=512),
        description="The chat model (null: no LLM; `retrieve` still works). Default: the bundled local model, "
                    "in-process (extras `local` and `model`).")
    embedding: SerializeAsAny[ProviderOptions] = Field(default_factory=SentenceTransformersOptions,
                                                       description="The embedding model.")
    vector_db: SerializeAsAny[VectorDBOptions] = Field(default_factory=MilvusOptions,
                                                       description="Where chunks are stored.")
    loader: SerializeAsAny[LoaderOptions] = Field(default_factory=LoaderOptions,
                                                  description="How files become documents.")
    crawler: SerializeAsAny[CrawlScope] = Field(default_factory=BuiltinCrawlerOptions,
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
        """Effective settings as a dict, with the *values* of secret env vars shown masked, and those of credential
        headers (Authorization, Cookie, X-Api-Key …) written in the file."""
        data = self.model_dump(mode="json", exclude={"config_path"})

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for key, val in list(node.items()):
                    if key.endswith("_env") and isinstance(val, str):
                        secret = os.environ.get(val)
                        node[key] = f"{val} ({'set: ' + _mask(secret) if secret else 'not set'})"
                    elif key == "headers" and isinstance(val, dict):  # "Authorization: Bearer …" written in the file
                        node[key] = {name: _mask(str(v)) if _SECRET_HEADER.search(name) else v
                                     for name, v in val.items()}
                    else:
                        walk(val)

        walk(data)
        uri = getattr(self.vector_db, "uri", None)
        if isinstance(uri, str) and not is_remote(uri):
            data["vector_db"]["uri"] = str(self.resolve_path(uri))
        return data


#: header names whose values are credentials, masked by ``config check``
_SECRET_HEADER = re.compile(r"auth|cookie|token|key|secret|session|password|credential", re.IGNORECASE)


def _mask(secret: str) -> str:
    return secret[:3] + "…" + secret[-2:] if len(secret) > 8 else "****"


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
                              hint="pass --config PATH or set DEEPSEARCHER_CONFIG to an existing file; "
                                   "`deepsearcher config check` without either shows the built-in defaults")
        try:
            with cfg_path.open(encoding="utf-8") as stream:  # a stream, so YAML errors name the file
                loaded = yaml.load(stream, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
        except DuplicateKey as exc:
            raise ConfigError(f"{cfg_path}: {exc}", hint="merge them into one; YAML would keep only the last") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{cfg_path}: not valid YAML: {exc}") from exc
        except UnicodeDecodeError as exc:  # e.g. saved as UTF-16 by an editor
            raise ConfigError(f"{cfg_path}: not UTF-8 text (byte {exc.start} cannot be decoded)",
                              hint="save the file as UTF-8") from exc
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


class DuplicateKey(yaml.YAMLError):
    """A mapping of the config file gives one key twice."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing a key given twice in one mapping: plain YAML loading keeps the last silently, so
    a second ``query:`` block would drop every setting of the first (found by a new user: ``top_k: 7`` lost, and
    ``config check`` said OK)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *defaults": keys given after it override it
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, (str, int, float, bool)):
                if key in seen:
                    raise DuplicateKey(f"the key {key!r} is given twice (lines {seen[key]} and {line})")
                seen[key] = line
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


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
            msg = "unknown key" + _did_you_mean(loc)
        elif err["type"] in {"model_type", "model_attributes_type", "dict_type"}:  # "query: 5"
            msg = f"must be a section of keys (key: value lines indented under it), got {err.get('input')!r}"
        elif section in PROVIDER_SECTIONS and (
                err["type"] == "union_tag_invalid" or (err["type"] == "literal_error" and loc[-1:] == ["provider"])):
            kind = PROVIDER_SECTIONS[section]
            given = (err.get("ctx") or {}).get("tag", err.get("input"))
            msg = (f"unknown {kind} provider {given!r}; known: {', '.join(registry.names(kind))} "
                   "(`deepsearcher config providers` lists them)")
            loc = [section, "provider"]
        lines.append(f"  {'.'.join(loc)}: {msg}")
    return lines


def _did_you_mean(loc: list[str]) -> str:
    """A hint for an unknown key: ``; did you mean 'x'?`` for a key close to one allowed at the same place (any
    provider's options in a provider section); where the key exists elsewhere, where ("options is a key of
    crawler.provider firecrawl", "did you mean 'options.only_main_content'?", "max_pages goes one level up:
    crawler.max_pages"); else ``""``: a typo or a misplaced key is then one glance from its fix."""
    import difflib

    if not loc:
        return ""
    levels: list[list[type[BaseModel]]] = [[settings_model()]]
    for name in loc[:-1]:
        if name.isdigit():  # an item of a list: its model is the list's
            continue
        fields = [model.model_fields[name] for model in levels[-1] if name in model.model_fields]
        levels.append([m for field in fields for m in _models_in(field.annotation)])
    key, models = loc[-1], levels[-1]
    owners = [m for m in models if key in m.model_fields]
    if owners:  # a key of another provider's options than the chosen one
        names = sorted({str(m.model_fields["provider"].default) for m in owners if "provider" in m.model_fields})
        where = ".".join(loc[:-1])
        return f"; {key} is a key of {where}.provider {' / '.join(names)} only" if names else ""
    nested = sorted({f"{name}.{key}" for m in models for name, field in m.model_fields.items()
                     for inner in _models_in(field.annotation) if key in inner.model_fields})
    if nested:
        return f"; did you mean {nested[0]!r}?"
    if len(levels) > 1 and any(key in m.model_fields for m in levels[-2]):
        return f"; {key} goes one level up: {'.'.join([*loc[:-2], key])}"
    known = sorted({name for model in models for name in model.model_fields})
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation may hold (through Optional, unions and Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    from typing import get_args

    return [model for arg in get_args(annotation) for model in _models_in(arg)]


# --- the validation model, assembled from the registry -----------------------------------------------------------
_SETTINGS_MODELS: dict[int, tuple[int, type[Settings]]] = {}
_DERIVED: dict[tuple[type[BaseModel], str], type[ProviderOptions]] = {}


def settings_model(registry: Any = None) -> type[Settings]:
    """The ``Settings`` subclass that validates a config: each provider section is a discriminated union (on
    ``provider``) of the options models registered for its kind; ``agents`` has one key per agent with options.

    Rebuilt when the registry changes (plugins loaded, a provider registered).

    Raises:
        ConfigError: a registered options model does not subclass the base its kind requires (``AgentOptions`` for
            an agent's).
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
            _require_base("agent", provider, model, AgentOptions)
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
    _require_base(f"{kind} provider", provider, options, base)
    name_type: Any = Literal[provider.name]
    if options.model_fields["provider"].annotation == name_type:
        return options
    key = (options, provider.name)
    if key not in _DERIVED:
        description = options.model_fields["provider"].description
        _DERIVED[key] = create_model(options.__name__, __base__=options, __module__=options.__module__,
                                     provider=(name_type, Field(provider.name, description=description)))
    return _DERIVED[key]


def _require_base(what: str, provider: Any, options: Any, base: type[BaseModel]) -> None:
    """Raise ConfigError unless a registered ``provider``'s options model subclasses ``base`` (``what``: "agent",
    "llm provider"…, named in the message)."""
    if not (isinstance(options, type) and issubclass(options, base)):
        raise ConfigError(f"the {what} {provider.name!r} ({provider.origin}) has an options model that does not "
                          f"subclass {base.__module__}.{base.__name__}", hint="fix or uninstall that plugin")


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, val in extra.items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], val)
        else:
            out[key] = val
    return out
