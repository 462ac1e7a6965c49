"""Milvus through pymilvus' ``MilvusClient``: a Milvus Lite file, a Milvus server, or Zilliz Cloud, one code path.

One collection per user collection (schema in ``deepsearcher.vectordb.schema``). The collection description is the
user's (or a generated one, marked so); collection properties record it with the embedding model and dimension.
Milvus Lite 2.x (the C++ engine, ``pip install "milvus-lite==2.5.1"``) has no collection properties: there they are
kept as a JSON object in the collection description, and a description changed later in a file beside the database
(``deepsearcher.vectordb.milvus_lite``). What the deployment can do (full-text search, the index type) is read on
connect (``MilvusStore.capabilities``); a collection on a server without full-text search is dense-only, and hybrid
or BM25 requests on it run dense (``MilvusStore.plan_search`` says so in one line).
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from deepsearcher.errors import CollectionError, ConfigError, DiskFullError, ProviderError, without_hint
from deepsearcher.filters import SearchFilter
from deepsearcher.types import Chunk, CollectionInfo, Hit, SearchMode, SearchPlan, StoreCapabilities
from deepsearcher.vectordb.capabilities import (FULL_TEXT_SINCE, SEARCH_MODES, lite_capabilities, parse_version,
                                                plan_search, server_capabilities)
from deepsearcher.vectordb.connection import GuardedClient, disk_full_error, open_server_client
from deepsearcher.vectordb.filters import compile_filter, missing_dates, pushed_down
from deepsearcher.vectordb.filters import quote_literal as _quote
from deepsearcher.vectordb.fusion import HYBRID_DEPTH, fuse_hybrid
from deepsearcher.vectordb.milvus_lite import (
    PROP_DESC, PROP_DESC_GENERATED, PROP_DIM, PROP_MODEL, collection_props, lite_engine_major, lite_version,
    close_lite_client, open_lite_client, read_descriptions, write_description,
)
from deepsearcher.vectordb.names import no_such_collection, validate_collection_name
from deepsearcher.vectordb.schema import (OUTPUT_FIELDS, HnswParams, build_indexes, build_schema, chunk_row,
                                          dense_search_params, has_full_text, hit_from_result, stored_source,
                                          text_analyzer)

log = logging.getLogger(__name__)

FULL_MODES = list(SEARCH_MODES)
#: counts and the completeness check read what was written just before (a server's default, "Bounded", may not)
STRONG = "Strong"
DENSE_ONLY = ["dense"]
#: a Milvus Lite write that fails with less free space than this beside the file is blamed on the full disk (Lite's
#: own error then often says only that its server went away)
LITE_LOW_DISK_BYTES = 64 * 1024 * 1024


#: a filter an older server cannot apply whole: candidates fetched per result wanted, at most MAX_LIMIT
OVERFETCH = 20
MAX_LIMIT = 16384


class MilvusStore:
    """Chunk storage in Milvus.

    Args:
        uri: Milvus Lite file path (already resolved) or a server URI.
        token: server token (``user:password`` or API key) or None.
        db_name: database on a server, or None.
        hnsw: HNSW build and search parameters for collections on a server (Lite searches exactly).
        connect_timeout_s: seconds to wait for a server to answer the connection.
        analyzer: the BM25 tokenizer of collections created ("standard" or "jieba", ``vector_db.bm25_analyzer``).

    Raises:
        ProviderError: milvus-lite missing for a file URI, or the server down, refusing the token or without the
            database (raised on first use, one line naming the URI).
        StoreInUseError: the Lite file is opened by another process.
    """

    def __init__(self, uri: str, token: str | None = None, db_name: str | None = None, *,
                 hnsw: HnswParams | None = None, connect_timeout_s: float = 10.0, analyzer: str = "standard") -> None:
        self.uri = uri
        self.analyzer = analyzer
        self.token = token
        self.db_name = db_name
        self.hnsw = hnsw or HnswParams()
        self.connect_timeout_s = connect_timeout_s
        self._client: GuardedClient | None = None
        self._capabilities: StoreCapabilities | None = None
        self._loaded: set[str] = set()
        self._modes: dict[str, list[str]] = {}

    @property
    def is_lite(self) -> bool:
        return not self.uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))

    @property
    def client(self) -> GuardedClient:
        """The connected ``MilvusClient`` (wrapped: failures raise ``ProviderError``; ``.raw`` is pymilvus')."""
        if self._client is None:
            self._client = open_lite_client(self.uri) if self.is_lite else open_server_client(
                self.uri, self.token, self.db_name, self.connect_timeout_s)
        return self._client

    @property
    def capabilities(self) -> StoreCapabilities:
        """What the deployment offers (engine, server version, BM25/hybrid, dense index type); read once."""
        if self._capabilities is None:
            if self.is_lite:
                self._capabilities = lite_capabilities(lite_version(), lite_engine_major())
            else:
                self._capabilities = server_capabilities(str(self.client.get_server_version()))
            log.info("Milvus at %s: %s", self.uri, self._capabilities)
        return self._capabilities

    @property
    def where(self) -> str:
        """The store in words, for messages: "Milvus v2.3.5-lite at http://127.0.0.1:19530", "Milvus Lite 3.2.2 at
        /path/milvus.db"."""
        caps = self.capabilities
        return f"Milvus {'Lite ' if self.is_lite else ''}{caps.version} at {self.uri}"

    def close(self) -> None:
        if self._client is not None:
            try:
                if self.is_lite:
                    close_lite_client(self._client)
                else:
                    self._client.raw.close()
            finally:
                self._client = None

    # --- collections ---------------------------------------------------------------------------------------------
    def has_collection(self, name: str) -> bool:
        return bool(self.client.has_collection(validate_collection_name(name)))

    def create_collection(self, name: str, *, description: str, model_name: str, dim: int) -> None:
        """Create a collection with the chunk schema and its indexes, and load it.

        With full-text search (``capabilities.bm25``) the collection gets the BM25 field and index, else it is
        dense-only. When another process creates the same collection at the same moment, this one uses it. A
        creation that fails after the collection exists (an index the server refuses, an interrupt) drops it again:
        no half-made collection is left.

        Raises:
            CollectionError: invalid name.
            ProviderError: the server refused the collection or its index (the message names the server).
        """
        validate_collection_name(name)
        caps, client = self.capabilities, self.client
        self._check_analyzer(caps.bm25)
        props = {PROP_MODEL: model_name, PROP_DIM: str(dim), PROP_DESC: description}
        legacy_lite = self._legacy_lite  # no collection properties: kept as JSON in the description
        schema = build_schema(client.raw, dim, json.dumps(props) if legacy_lite else description, full_text=caps.bm25,
                              analyzer=self.analyzer)
        try:
            client.create_collection(name, schema=schema,
                                     **({} if legacy_lite else {"description": description, "properties": props}))
        except ProviderError as exc:
            if not isinstance(exc, DiskFullError) and self.is_lite and self._lite_disk_low():
                raise disk_full_error(self.uri) from exc
            if client.has_collection(name):  # created by another process meanwhile
                log.info("collection %s was created by another process; using it", name)
                return
            raise
        try:
            client.create_index(name, build_indexes(client.raw, index_type=caps.index_type, full_text=caps.bm25,
                                                    hnsw=self.hnsw))
            client.load_collection(name)
        except BaseException as exc:
            self._discard(name)
            if isinstance(exc, ProviderError) and not isinstance(exc, DiskFullError):
                raise ProviderError(f"could not create collection {name!r} in {self.where} (removed again): "
                                    f"{without_hint(exc)}", hint=exc.hint) from exc
            raise
        if legacy_lite:
            write_description(self.uri, name, None)  # a changed description of an earlier collection of that name
        self._loaded.add(name)
        self._modes[name] = FULL_MODES if caps.bm25 else DENSE_ONLY
        log.info("created collection %s (dim=%d, model=%s, %s)", name, dim, model_name,
                 "dense + BM25" if caps.bm25 else "dense only")

    def _check_analyzer(self, full_text: bool) -> None:
        """Milvus Lite runs the jieba tokenizer through the ``jieba`` package (a server has its own).

        Raises:
            ConfigError: ``bm25_analyzer: jieba`` on Milvus Lite without the package.
        """
        if full_text and self.analyzer == "jieba" and self.is_lite:
            import importlib.util

            if importlib.util.find_spec("jieba") is None:
                raise ConfigError("vector_db.bm25_analyzer: jieba needs the jieba package on Milvus Lite",
                                  hint="pip install 'deepsearcher[cjk]' (or set bm25_analyzer: standard)")

    def text_analyzer(self, name: str) -> str:
        """The tokenizer BM25 uses in collection ``name`` ("standard", "jieba", ...; "" without full-text search)."""
        return text_analyzer(self.client.describe_collection(name))

    def _discard(self, name: str) -> None:
        """Drop a collection whose creation failed; a failure here is logged, the original error matters."""
        try:
            if self.client.has_collection(name):
                self.client.drop_collection(name)
        except Exception:  # noqa: BLE001 - the caller re-raises the creation error
            log.warning("could not drop the half-made collection %s", name, exc_info=True)
        self._loaded.discard(name)
        self._modes.pop(name, None)

    def drop_collection(self, name: str) -> None:
        if not self.has_collection(name):
            raise no_such_collection(name, self.list_collections())
        self.client.drop_collection(name)
        self._loaded.discard(name)
        self._modes.pop(name, None)
        if self._legacy_lite:
            write_description(self.uri, name, None)

    def list_collections(self) -> list[str]:
        return sorted(self.client.list_collections())

    def collection_modes(self, name: str) -> list[str]:
        """Search modes a collection supports: ["dense", "bm25", "hybrid"], or ["dense"] without full-text search.

        Raises:
            CollectionError: no such collection.
        """
        if name not in self._modes:
            if not self.has_collection(name):
                raise no_such_collection(name, self.list_collections())
            desc = self.client.describe_collection(name)
            self._modes[name] = FULL_MODES if has_full_text(desc) else DENSE_ONLY
        return self._modes[name]

    def _index_type(self, name: str) -> str:
        """The dense index of a collection as the server describes it ("FLAT", "HNSW", ...), "" when it has none."""
        try:
            return str((self.client.describe_index(name, "vector") or {}).get("index_type", ""))
        except ProviderError:  # no index on the field (a collection made by another tool)
            return ""

    def describe(self, name: str) -> CollectionInfo:
        """Name, description (and whether it was generated), chunk count, embedding model, search modes and dense
        index of a collection.

        Raises:
            CollectionError: no such collection.
        """
        if not self.has_collection(name):
            raise no_such_collection(name, self.list_collections())
        desc = self.client.describe_collection(name)
        props = collection_props(desc)
        if self._legacy_lite:
            props.update(read_descriptions(self.uri).get(name, {}))
        count = (int(self.client.get_collection_stats(name).get("row_count", 0)) if self._unloadable(name)
                 else self.count(name))
        self._modes.setdefault(name, FULL_MODES if has_full_text(desc) else DENSE_ONLY)
        return CollectionInfo(name=name, description=props.get(PROP_DESC, desc.get("description", "")) or "",
                              chunk_count=count, embedding_model=props.get(PROP_MODEL, "?"),
                              embedding_dim=int(props.get(PROP_DIM, 0) or 0),
                              description_generated=props.get(PROP_DESC_GENERATED) == "1",
                              modes=list(self._modes[name]), index_type=self._index_type(name))

    def set_description(self, name: str, description: str, *, generated: bool = False) -> None:
        """Replace a collection's description (a collection property; on Lite 2.x, the file beside the database).

        Raises:
            CollectionError: no such collection.
        """
        if not self.has_collection(name):
            raise no_such_collection(name, self.list_collections())
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
            raise no_such_collection(name, self.list_collections())
        self._ready(name)
        rows = self.client.query(name, filter="chunk_index == 0", output_fields=OUTPUT_FIELDS, limit=limit)
        return [hit_from_result(row, name).chunk for row in rows]

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
            raise no_such_collection(name, self.list_collections())
        self._ready(name)
        page = -1 if chunk.page is None else int(chunk.page)
        expr = (f"source == {_quote(stored_source(chunk.source))} and page == {page} and "
                f"doc_hash == {_quote(chunk.doc_hash)} and chunk_index >= {chunk.chunk_index - window} and "
                f"chunk_index <= {chunk.chunk_index + window}")
        rows = self.client.query(name, filter=expr, output_fields=OUTPUT_FIELDS, limit=2 * window + 1,
                                 consistency_level=STRONG)
        return sorted((hit_from_result(row, name).chunk for row in rows), key=lambda c: c.chunk_index)

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
            raise no_such_collection(name, self.list_collections())
        props = collection_props(self.client.describe_collection(name))
        stored_model, stored_dim = props.get(PROP_MODEL, "?"), int(props.get(PROP_DIM, 0) or 0)
        if stored_model != model_name or (stored_dim and stored_dim != dim):
            raise CollectionError(
                f"collection {name!r} was built with embedding model {stored_model!r} "
                f"(dim {stored_dim}), but the configured model is {model_name!r} (dim {dim})",
                hint="configure the same embedding model, use another collection, or rebuild it with "
                     "--force-new-collection")

    def _unloadable(self, name: str) -> bool:
        """A collection with a BM25 field on a server without full-text search (made by an older deepsearcher):
        loading it aborts a 2.3 server, so it is never loaded."""
        return not self.capabilities.bm25 and "bm25" in self.collection_modes(name)

    def _ready(self, name: str) -> None:
        """Load a collection into memory once per process (a collection opened from disk starts released).

        Raises:
            CollectionError: the collection has a full-text field this server cannot load.
        """
        if name not in self._loaded:
            if self._unloadable(name):
                raise CollectionError(f"collection {name!r} has a full-text (BM25) field that {self.where} cannot "
                                      "load (made by an earlier deepsearcher)",
                                      hint=f"drop it (deepsearcher collections drop {name}) and load again: it "
                                           "will be created dense-only")
            self.client.load_collection(name)
            self._loaded.add(name)

    def undated(self, name: str) -> int:
        """Chunks without a stored date (loaded before deepsearcher stored dates): a date filter never admits them;
        0 where the server has no ``exists`` operator (before Milvus 2.5: not counted, never an error)."""
        try:
            return self.count(name, missing_dates())
        except ProviderError:
            log.debug("%s cannot count chunks without a date", self.where, exc_info=True)
            return 0

    def count(self, name: str, filter_expr: str = "") -> int:
        self._ready(name)
        rows = self.client.query(name, filter=filter_expr, output_fields=["count(*)"], consistency_level=STRONG)
        return int(rows[0]["count(*)"]) if rows else 0

    # --- documents -----------------------------------------------------------------------------------------------
    def is_complete(self, name: str, source: str, doc_hash: str) -> bool:
        """True when every chunk of ``source`` at version ``doc_hash`` is stored (an unchanged, complete load)."""
        expr = f"source == {_quote(stored_source(source))} and doc_hash == {_quote(doc_hash)}"
        self._ready(name)
        rows = self.client.query(name, filter=expr, output_fields=["doc_chunks"], limit=1, consistency_level=STRONG)
        if not rows:
            return False
        return self.count(name, expr) >= int(rows[0]["doc_chunks"])

    def stored_ids(self, name: str, ids: Sequence[str], doc_hash: str) -> set[str]:
        """Which of ``ids`` are stored at version ``doc_hash`` (a resumed load embeds only the others; an id stored
        at another version is not counted: its row must be rewritten with the new version)."""
        if not ids:
            return set()
        self._ready(name)
        expr = f"id in [{', '.join(_quote(i) for i in ids)}] and doc_hash == {_quote(doc_hash)}"
        rows = self.client.query(name, filter=expr, output_fields=["id"], limit=len(ids), consistency_level=STRONG)
        return {str(row["id"]) for row in rows}

    def upsert(self, name: str, chunks: Sequence[Chunk], vectors: np.ndarray, doc_chunks: dict[str, int]) -> int:
        """Upsert chunks with their vectors (shape (len(chunks), dim)); returns rows written."""
        if not chunks:
            return 0
        self._ready(name)
        rows = [chunk_row(c, vectors[i], doc_chunks[c.source]) for i, c in enumerate(chunks)]
        self._writing(self.client.upsert, name, rows)
        return len(rows)

    def _writing(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A write to the store; on Milvus Lite, a failure while the disk beside the file is (nearly) full raises
        ``DiskFullError`` ("disk full at <folder>"), whatever the engine's own message says.

        Raises:
            DiskFullError: the disk is full.
            ProviderError: any other failure.
        """
        try:
            return call(*args, **kwargs)
        except ProviderError as exc:
            if not isinstance(exc, DiskFullError) and self.is_lite and self._lite_disk_low():
                raise disk_full_error(self.uri) from exc
            raise

    def _lite_disk_low(self) -> bool:
        try:
            return shutil.disk_usage(Path(self.uri).resolve().parent).free < LITE_LOW_DISK_BYTES
        except OSError:
            return False

    def delete_stale(self, name: str, source: str, doc_hash: str) -> int:
        """Delete chunks of ``source`` that belong to another version than ``doc_hash``; returns rows deleted."""
        expr = f"source == {_quote(stored_source(source))} and doc_hash != {_quote(doc_hash)}"
        stale = self.count(name, expr)  # count() loads the collection
        if stale:
            self._writing(self.client.delete, name, filter=expr)
        return stale

    def sources(self, name: str) -> list[str]:
        """The distinct ``source`` values stored in a collection, sorted (one scan of that field only: a folder
        re-load compares them with the files it found, ``ingest.load.remove_missing``)."""
        self._ready(name)
        it = self.client.query_iterator(name, batch_size=4096, filter="", output_fields=["source"],
                                        consistency_level=STRONG)
        found: set[str] = set()
        try:
            while batch := it.next():
                found.update(str(row["source"]) for row in batch)
        finally:
            it.close()
        return sorted(found)

    def delete_source(self, name: str, source: str) -> int:
        """Delete every chunk of ``source`` (any version); returns rows deleted."""
        expr = f"source == {_quote(stored_source(source))}"
        rows = self.count(name, expr)  # count() loads the collection
        if rows:
            self._writing(self.client.delete, name, filter=expr)
        return rows

    def seal(self, name: str) -> None:
        """Flush the collection's write buffer into sealed segments (call at the end of a load).

        Milvus Lite keeps unflushed writes in an in-memory table that every search and count snapshots again: on the
        6,824-chunk 2Wiki collection a dense search took ~0.7 s before the flush and ~0.04 s after it. A server
        flushes on its own schedule; there the call only makes the data durable sooner.
        """
        self._writing(self.client.flush, name)

    # --- search --------------------------------------------------------------------------------------------------
    def plan_search(self, name: str, mode: SearchMode) -> SearchPlan:
        """The mode a search on ``name`` will run: ``mode``, or "dense" with a one-line ``notice`` on a collection
        without full-text search.

        Raises:
            ValueError: an unknown mode.
        """
        reason = f"{self.where}; full-text search needs Milvus >= {FULL_TEXT_SINCE[0]}.{FULL_TEXT_SINCE[1]}"
        return plan_search(name, mode, self.collection_modes(name), reason)

    def search(self, name: str, query_vector: np.ndarray | None, query_text: str, top_k: int,
               mode: SearchMode = "hybrid", *, where: SearchFilter | None = None) -> list[Hit]:
        """Top-k chunks for a query.

        Args:
            name: collection.
            query_vector: L2-normalised query embedding, shape (dim,); unused in "bm25" mode.
            query_text: the raw query (for BM25).
            top_k: results wanted.
            mode: "dense" (cosine; HNSW with ``hnsw.ef`` on a server, exact on Lite), "bm25" (full text), or
                "hybrid" (the top ``HYBRID_DEPTH`` of both, fused by ``fuse_hybrid``). On a collection without
                full-text search, "bm25" and "hybrid" run dense (see ``plan_search``, which gives the notice).
            where: only chunks this filter admits (compiled by ``vectordb.filters.compile_filter``; a path glob is
                matched exactly on the hits by the caller, ``SearchFilter.admits``).

        Returns:
            Hits, best first.

        Raises:
            CollectionError: "bm25" on a dense-only collection with no ``query_vector`` to fall back on.
            ValueError: an unknown mode.
        """
        plan = self.plan_search(name, mode)
        if plan.fell_back:
            log.info("%s", plan.notice)
            if query_vector is None:
                raise CollectionError(f"collection {name!r} has no full-text (BM25) index in {self.where}",
                                      hint="search it with --mode dense (or hybrid, which falls back to dense)")
        infix = self._infix_like
        expr = compile_filter(where, infix_like=infix)
        if where is None or pushed_down(where, infix_like=infix):
            return self._search(name, query_vector, query_text, top_k, plan.mode, expr)
        # an older server cannot match the path globs: fetch more and keep what the filter admits
        hits = self._search(name, query_vector, query_text, min(top_k * OVERFETCH, MAX_LIMIT), plan.mode, expr)
        return [hit for hit in hits if where.admits(hit.chunk)][:top_k]

    @property
    def _infix_like(self) -> bool:
        """The deployment's ``LIKE`` matches anywhere in a string (Lite, Milvus >= 2.4), not only a prefix."""
        version = parse_version(self.capabilities.version)
        return self.is_lite or version is None or version[:2] >= (2, 4)

    def _search(self, name: str, query_vector: np.ndarray | None, query_text: str, top_k: int,
                mode: str, expr: str = "") -> list[Hit]:
        client = self.client
        self._ready(name)
        if mode == "dense":
            params = dense_search_params(self.capabilities.index_type, self.hnsw, top_k)
            res = client.search(name, data=[np.asarray(query_vector).tolist()], anns_field="vector", limit=top_k,
                                output_fields=OUTPUT_FIELDS, search_params=params, filter=expr)
        elif mode == "bm25":
            res = client.search(name, data=[query_text], anns_field="sparse", limit=top_k,
                                output_fields=OUTPUT_FIELDS, search_params={"metric_type": "BM25"}, filter=expr)
        else:
            # two searches fused here rather than one hybrid_search: Milvus' rankers offer RRF (which ranks a chunk
            # that only BM25 finds, e.g. by an exact product code, below every chunk both lists share) and a
            # weighted sum that squashes BM25 through arctan; see fuse_hybrid and docs/benchmarks.md. (Fetching ids
            # only for the 2 x 50 candidates and then get() of the fused top-k was measured: no faster on Lite 3.x,
            # 16 % slower on 2.x.)
            depth = max(HYBRID_DEPTH, top_k)
            return fuse_hybrid(self._search(name, query_vector, query_text, depth, "dense", expr),
                               self._search(name, None, query_text, depth, "bm25", expr), top_k)
        hits = [hit_from_result(item, name) for item in (res[0] if res else [])]
        if mode == "bm25":  # Milvus Lite reports BM25 as a negative distance, a server as the positive score
            hits = [replace(h, score=abs(h.score)) for h in hits]
        return hits

