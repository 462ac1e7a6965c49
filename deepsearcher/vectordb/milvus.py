"""Milvus through pymilvus' ``MilvusClient``: a Milvus Lite file, a Milvus server, or Zilliz Cloud, one code path.

Schema (one collection per user collection): ``id`` VARCHAR primary key (content hash, so loads upsert), ``vector``
FLOAT_VECTOR (L2-normalised, COSINE), ``text`` VARCHAR with an analyzer feeding a BM25 function into ``sparse``
(full-text search for hybrid retrieval), ``source``, ``title``, ``page`` (-1 = none), ``chunk_index``, ``doc_hash``,
``doc_chunks`` (chunks of the whole source, to tell a complete load from an interrupted one) and ``metadata`` JSON.
The collection description is the user's (or a generated one, marked so); collection properties record it with the
embedding model and dimension. Milvus Lite 2.x (the C++ engine, ``pip install "milvus-lite==2.5.1"``) has no
collection properties: there they are kept as a JSON object in the collection description, and a description changed
later in a file beside the database (``deepsearcher.vectordb.milvus_lite``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from deepsearcher.errors import CollectionError, ProviderError, StoreInUseError
from deepsearcher.types import MAX_CHUNK_BYTES, Chunk, CollectionInfo, Hit, StoreCapabilities
from deepsearcher.vectordb.fusion import HYBRID_DEPTH, fuse_hybrid
from deepsearcher.vectordb.milvus_lite import (
    PROP_DESC, PROP_DESC_GENERATED, PROP_DIM, PROP_MODEL, check_lite_format, collection_props, lite_engine_major,
    lite_file_locked, lite_version, read_descriptions, write_description,
)
from deepsearcher.vectordb.names import validate_collection_name

log = logging.getLogger(__name__)

OUTPUT_FIELDS = ["id", "text", "source", "title", "page", "chunk_index", "doc_hash", "metadata"]
MAX_SOURCE_BYTES = 4096  # VARCHAR max_length counts UTF-8 bytes (Milvus docs, "String Field")
MAX_TITLE_BYTES = 2048
#: Lite files this process opened: milvus-lite keeps their flock for the life of the process, and a probe from the
#: same process would see its own lock as "another process".
_OPENED_IN_THIS_PROCESS: set[str] = set()


def _quote(value: str) -> str:
    """A Milvus filter string literal."""
    return json.dumps(value, ensure_ascii=False)


class MilvusStore:
    """Chunk storage in Milvus.

    Args:
        uri: Milvus Lite file path (already resolved) or a server URI.
        token: server token (``user:password`` or API key) or None.
        db_name: database on a server, or None.

    Raises:
        ProviderError: milvus-lite missing for a file URI, or the server unreachable (raised on first use).
        StoreInUseError: the Lite file is opened by another process.
    """

    def __init__(self, uri: str, token: str | None = None, db_name: str | None = None) -> None:
        self.uri = uri
        self.token = token
        self.db_name = db_name
        self._client: Any = None
        self._loaded: set[str] = set()

    @property
    def is_lite(self) -> bool:
        return not self.uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))

    @property
    def capabilities(self) -> StoreCapabilities:
        """Milvus Lite (both engines): exact search, BM25 and hybrid, one process per file; a server: HNSW."""
        if self.is_lite:
            major = lite_engine_major()
            return StoreCapabilities(dense=True, bm25=True, hybrid=True, engine=f"lite-{major}", index_type="FLAT",
                                     version=lite_version(), file_lock=True)
        return StoreCapabilities(dense=True, bm25=True, hybrid=True, engine="server", index_type="HNSW")

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _connect(self) -> Any:
        # gRPC's C core prints keep-alive GOAWAY notices to stderr during long embedding pauses; they are harmless
        os.environ.setdefault("GRPC_VERBOSITY", "NONE")
        try:
            from pymilvus import MilvusClient
        except ModuleNotFoundError as exc:  # pragma: no cover - core dependency
            raise ProviderError("pymilvus is not installed", hint="pip install pymilvus") from exc
        if self.is_lite:
            try:
                with warnings.catch_warnings():  # milvus-lite 2.x imports pkg_resources, which warns on every run
                    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
                    import milvus_lite  # noqa: F401
            except ModuleNotFoundError as exc:
                raise ProviderError(
                    "Milvus Lite is not available on this platform (package milvus-lite)",
                    hint="pip install milvus-lite (Linux/macOS), or point vector_db.uri at a Milvus server "
                         "(http://host:19530, e.g. Milvus standalone in Docker) or Zilliz Cloud") from exc
            try:
                Path(self.uri).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ProviderError(f"cannot create the Milvus Lite file {self.uri}: {exc.strerror or exc}",
                                    hint="set vector_db.uri to a path in a writable folder") from exc
            check_lite_format(Path(self.uri))
            # milvus-lite's in-process gRPC server logs unimplemented optional RPCs (AllocTimestamp) at ERROR
            logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
            if self.uri not in _OPENED_IN_THIS_PROCESS and lite_file_locked(Path(self.uri)):
                raise StoreInUseError(f"the Milvus Lite file {self.uri} is in use by another process",
                                      hint="wait for the other deepsearcher process to finish (Milvus Lite allows "
                                           "one process per file), use another vector_db.uri, or run a Milvus "
                                           "server for concurrent access")
        kwargs: dict[str, Any] = {"uri": self.uri}
        if self.token:
            kwargs["token"] = self.token
        if self.db_name:
            kwargs["db_name"] = self.db_name
        try:
            client = MilvusClient(**kwargs)
            if self.is_lite:
                _OPENED_IN_THIS_PROCESS.add(self.uri)
            return client
        except Exception as exc:  # pymilvus raises MilvusException / ConnectionConfigException / RuntimeError
            text = str(exc)
            if self.is_lite and ("lock" in text.lower() or "in use" in text.lower() or "opened" in text.lower()):
                raise StoreInUseError(f"the Milvus Lite file {self.uri} is in use by another process",
                                      hint="wait for the other deepsearcher process to finish, or use another "
                                           "vector_db.uri") from exc
            raise ProviderError(f"cannot open Milvus at {self.uri}: {text}",
                                hint="check vector_db.uri / token_env; is the server running?") from exc

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    # --- collections ---------------------------------------------------------------------------------------------
    def has_collection(self, name: str) -> bool:
        return bool(self.client.has_collection(validate_collection_name(name)))

    def create_collection(self, name: str, *, description: str, model_name: str, dim: int) -> None:
        """Create a collection with the chunk schema, a dense index and a BM25 sparse index."""
        from pymilvus import DataType, Function, FunctionType

        validate_collection_name(name)
        client = self.client
        props = {PROP_MODEL: model_name, PROP_DIM: str(dim), PROP_DESC: description}
        # Milvus Lite 2.x has no collection properties: there they are kept as JSON in the (schema) description
        legacy_lite = self._legacy_lite
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False,
                                      description=json.dumps(props) if legacy_lite else description)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_CHUNK_BYTES, enable_analyzer=True)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("source", DataType.VARCHAR, max_length=MAX_SOURCE_BYTES)
        schema.add_field("title", DataType.VARCHAR, max_length=MAX_TITLE_BYTES)
        schema.add_field("page", DataType.INT64)
        schema.add_field("chunk_index", DataType.INT64)
        schema.add_field("doc_hash", DataType.VARCHAR, max_length=64)
        schema.add_field("doc_chunks", DataType.INT64)
        schema.add_field("metadata", DataType.JSON)
        schema.add_function(Function(name="text_bm25", function_type=FunctionType.BM25,
                                     input_field_names=["text"], output_field_names=["sparse"]))
        index = client.prepare_index_params()
        index.add_index(field_name="vector", index_type="FLAT" if self.is_lite else "HNSW", metric_type="COSINE",
                        **({} if self.is_lite else {"params": {"M": 16, "efConstruction": 200}}))
        index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        client.create_collection(name, schema=schema, index_params=index,
                                 **({} if legacy_lite else {"description": description, "properties": props}))
        if legacy_lite:
            write_description(self.uri, name, None)  # a changed description of an earlier collection of that name
        self._loaded.add(name)
        log.info("created collection %s (dim=%d, model=%s)", name, dim, model_name)

    def drop_collection(self, name: str) -> None:
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="see `deepsearcher collections`")
        self.client.drop_collection(name)
        self._loaded.discard(name)
        if self._legacy_lite:
            write_description(self.uri, name, None)

    def list_collections(self) -> list[str]:
        return sorted(self.client.list_collections())

    def describe(self, name: str) -> CollectionInfo:
        """Name, description, chunk count and embedding model of a collection.

        Raises:
            CollectionError: no such collection.
        """
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="load documents with `deepsearcher load`")
        desc = self.client.describe_collection(name)
        props = collection_props(desc)
        if self._legacy_lite:
            props.update(read_descriptions(self.uri).get(name, {}))
        return CollectionInfo(name=name, description=props.get(PROP_DESC, desc.get("description", "")) or "",
                              chunk_count=self.count(name), embedding_model=props.get(PROP_MODEL, "?"),
                              embedding_dim=int(props.get(PROP_DIM, 0) or 0),
                              description_generated=props.get(PROP_DESC_GENERATED) == "1")

    def set_description(self, name: str, description: str, *, generated: bool = False) -> None:
        """Replace a collection's description (a collection property; on Lite 2.x, the file beside the database).

        Raises:
            CollectionError: no such collection.
        """
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="see `deepsearcher collections`")
        props = {PROP_DESC: description, PROP_DESC_GENERATED: "1" if generated else "0"}
        if self._legacy_lite:
            write_description(self.uri, name, props)
        else:
            self.client.alter_collection_properties(name, properties=props)

    def sample(self, name: str, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks with ``chunk_index == 0`` (each opens a file, page or record).

        Raises:
            CollectionError: no such collection.
        """
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="see `deepsearcher collections`")
        self._ready(name)
        rows = self.client.query(name, filter="chunk_index == 0", output_fields=OUTPUT_FIELDS, limit=limit)
        return [_to_chunk(row) for row in rows]

    @property
    def _legacy_lite(self) -> bool:
        """Milvus Lite 2.x: no collection properties."""
        return self.is_lite and lite_engine_major() < 3

    def check_embedding(self, name: str, model_name: str, dim: int) -> None:
        """Refuse to mix embedding models in one collection.

        Raises:
            CollectionError: the collection was built with another model or dimension.
        """
        # properties only: describe() also counts rows, which costs a scan on every query
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="load documents with `deepsearcher load`")
        props = collection_props(self.client.describe_collection(name))
        stored_model, stored_dim = props.get(PROP_MODEL, "?"), int(props.get(PROP_DIM, 0) or 0)
        if stored_model != model_name or (stored_dim and stored_dim != dim):
            raise CollectionError(
                f"collection {name!r} was built with embedding model {stored_model!r} "
                f"(dim {stored_dim}), but the configured model is {model_name!r} (dim {dim})",
                hint="configure the same embedding model, use another collection, or rebuild it with "
                     "--force-new-collection")

    def _ready(self, name: str) -> None:
        """Load a collection into memory once per process (a collection opened from disk starts released)."""
        if name not in self._loaded:
            self.client.load_collection(name)
            self._loaded.add(name)

    def count(self, name: str, filter_expr: str = "") -> int:
        self._ready(name)
        rows = self.client.query(name, filter=filter_expr, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    # --- documents -----------------------------------------------------------------------------------------------
    def is_complete(self, name: str, source: str, doc_hash: str) -> bool:
        """True when every chunk of ``source`` at version ``doc_hash`` is stored (an unchanged, complete load)."""
        expr = f"source == {_quote(stored_source(source))} and doc_hash == {_quote(doc_hash)}"
        self._ready(name)
        rows = self.client.query(name, filter=expr, output_fields=["doc_chunks"], limit=1)
        if not rows:
            return False
        return self.count(name, expr) >= int(rows[0]["doc_chunks"])

    def upsert(self, name: str, chunks: Sequence[Chunk], vectors: np.ndarray, doc_chunks: dict[str, int]) -> int:
        """Upsert chunks with their vectors (shape (len(chunks), dim)); returns rows written."""
        if not chunks:
            return 0
        self._ready(name)
        rows = [{
            "id": c.id, "vector": vectors[i].tolist(), "text": c.text, "source": stored_source(c.source),
            "title": fit_bytes(c.title, MAX_TITLE_BYTES), "page": -1 if c.page is None else int(c.page),
            "chunk_index": c.chunk_index,
            "doc_hash": c.doc_hash, "doc_chunks": doc_chunks[c.source], "metadata": c.metadata,
        } for i, c in enumerate(chunks)]
        self.client.upsert(name, rows)
        return len(rows)

    def delete_stale(self, name: str, source: str, doc_hash: str) -> int:
        """Delete chunks of ``source`` that belong to another version than ``doc_hash``; returns rows deleted."""
        expr = f"source == {_quote(stored_source(source))} and doc_hash != {_quote(doc_hash)}"
        stale = self.count(name, expr)  # count() loads the collection
        if stale:
            self.client.delete(name, filter=expr)
        return stale

    def seal(self, name: str) -> None:
        """Flush the collection's write buffer into sealed segments (call at the end of a load).

        Milvus Lite keeps unflushed writes in an in-memory table that every search and count snapshots again: on the
        6,824-chunk 2Wiki collection a dense search took ~0.7 s before the flush and ~0.04 s after it. A server
        flushes on its own schedule; there the call only makes the data durable sooner.
        """
        self.client.flush(name)

    # --- search --------------------------------------------------------------------------------------------------
    def search(self, name: str, query_vector: np.ndarray | None, query_text: str, top_k: int,
               mode: str = "hybrid") -> list[Hit]:
        """Top-k chunks for a query.

        Args:
            name: collection.
            query_vector: L2-normalised query embedding, shape (dim,); unused in "bm25" mode.
            query_text: the raw query (for BM25).
            top_k: results wanted.
            mode: "dense" (cosine), "bm25" (full text), or "hybrid" (the top ``HYBRID_DEPTH`` of both, fused by
                ``fuse_hybrid``).

        Returns:
            Hits, best first.
        """
        client = self.client
        self._ready(name)
        if mode == "dense":
            res = client.search(name, data=[np.asarray(query_vector).tolist()], anns_field="vector", limit=top_k,
                                output_fields=OUTPUT_FIELDS, search_params={"metric_type": "COSINE"})
        elif mode == "bm25":
            res = client.search(name, data=[query_text], anns_field="sparse", limit=top_k,
                                output_fields=OUTPUT_FIELDS, search_params={"metric_type": "BM25"})
        elif mode == "hybrid":
            # two searches fused here rather than one hybrid_search: Milvus' rankers offer RRF (which ranks a chunk
            # that only BM25 finds, e.g. by an exact product code, below every chunk both lists share) and a
            # weighted sum that squashes BM25 through arctan; see fuse_hybrid and docs/benchmarks.md. (Fetching ids
            # only for the 2 x 50 candidates and then get() of the fused top-k was measured: no faster on Lite 3.x,
            # 16 % slower on 2.x.)
            depth = max(HYBRID_DEPTH, top_k)
            return fuse_hybrid(self.search(name, query_vector, query_text, depth, mode="dense"),
                               self.search(name, None, query_text, depth, mode="bm25"), top_k)
        else:
            raise ValueError(f"unknown search mode {mode!r}")
        hits = [_to_hit(item, name) for item in (res[0] if res else [])]
        if mode == "bm25":  # Milvus Lite reports BM25 as a negative distance, a server as the positive score
            hits = [replace(h, score=abs(h.score)) for h in hits]
        return hits


    def chunks_around(self, name: str, chunk: Chunk, window: int) -> list[Chunk]:
        """Chunks of the same document version (source, page, doc_hash) with ``chunk_index`` within ``window``,
        ordered by ``chunk_index`` (one filtered query, no vector search).

        Raises:
            CollectionError: no such collection.
            ValueError: ``window`` < 0.
        """
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        if not self.has_collection(name):
            raise CollectionError(f"no collection named {name!r}", hint="load documents with `deepsearcher load`")
        self._ready(name)
        page = -1 if chunk.page is None else int(chunk.page)
        expr = (f"source == {_quote(chunk.source)} and page == {page} and doc_hash == {_quote(chunk.doc_hash)} "
                f"and chunk_index >= {chunk.chunk_index - window} and chunk_index <= {chunk.chunk_index + window}")
        rows = self.client.query(name, filter=expr, output_fields=OUTPUT_FIELDS, limit=2 * window + 1)
        return sorted((_to_hit(row, name).chunk for row in rows), key=lambda c: c.chunk_index)


@functools.cache
def fit_bytes(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes on a character boundary (lone surrogates written as
    ``\\udcXX``, which UTF-8 cannot hold)."""
    data = text.encode("utf-8", "backslashreplace")
    return data[:max_bytes].decode("utf-8", "ignore")


def stored_source(source: str) -> str:
    """The ``source`` value stored for a source id, the same on every call: the id itself when it fits
    ``MAX_SOURCE_BYTES``, else its head and ``#`` + 32 hex chars of its SHA-256, so that a long URL is found again on
    re-load (an unchanged source) and two long ids with one head stay apart."""
    fitted = fit_bytes(source, MAX_SOURCE_BYTES)
    if fitted == source:
        return source
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return fit_bytes(source, MAX_SOURCE_BYTES - 33) + "#" + digest


def _to_chunk(item: Any) -> Chunk:
    """A Chunk from a search result (fields under ``entity``) or a query row (fields at the top)."""
    entity = item.get("entity", item)
    page = entity.get("page", -1)
    return Chunk(id=str(item.get("id", entity.get("id"))), text=entity.get("text", ""),
                 source=entity.get("source", ""), title=entity.get("title", ""),
                 page=None if page is None or page < 0 else int(page), chunk_index=int(entity.get("chunk_index", 0)),
                 doc_hash=entity.get("doc_hash", ""), metadata=entity.get("metadata") or {})


def _to_hit(item: Any, collection: str) -> Hit:
    return Hit(chunk=_to_chunk(item), score=float(item.get("distance", 0.0)), collection=collection)


def iter_batches(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
