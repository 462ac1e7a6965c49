"""The chunk collection's schema and indexes in Milvus (one definition for Lite and servers).

Fields: ``id`` VARCHAR primary key (content hash, so loads upsert), ``vector`` FLOAT_VECTOR (L2-normalised, COSINE),
``text`` VARCHAR, ``source``, ``title``, ``page`` (-1 = none), ``chunk_index``, ``doc_hash``, ``doc_chunks`` (chunks
of the whole source, to tell a complete load from an interrupted one) and ``metadata`` JSON. With full-text search
(Milvus >= 2.5, both Lite engines), ``text`` also gets an analyzer feeding a BM25 function into ``sparse``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepsearcher.types import MAX_CHUNK_BYTES, Chunk, Hit

SPARSE_FIELD = "sparse"
MAX_SOURCE_BYTES = 4096  # VARCHAR max_length counts UTF-8 bytes (Milvus docs, "String Field")
MAX_TITLE_BYTES = 2048
OUTPUT_FIELDS = ["id", "text", "source", "title", "page", "chunk_index", "doc_hash", "metadata"]


@dataclass(frozen=True)
class HnswParams:
    """HNSW graph parameters (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search using
    Hierarchical Navigable Small World graphs", TPAMI 2020).

    Attributes:
        m: links per node (Milvus ``M``); more = better recall, more memory.
        ef_construction: candidate list size while building (Milvus ``efConstruction``).
        ef: candidate list size while searching (Milvus ``ef``); raised to the requested ``limit`` when smaller.
    """

    m: int = 16
    ef_construction: int = 200
    ef: int = 256


def build_schema(client: Any, dim: int, description: str, *, full_text: bool, analyzer: str = "standard") -> Any:
    """The collection schema; ``full_text`` adds the analyzer (``analyzer``: Milvus' tokenizer name, "standard" =
    Milvus' default, left unnamed), the ``sparse`` field and the BM25 function."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False, description=description)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    params: dict[str, Any] = {"enable_analyzer": True} if full_text else {}
    if full_text and analyzer != "standard":
        params["analyzer_params"] = {"tokenizer": analyzer}
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_CHUNK_BYTES, **params)
    if full_text:
        schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("source", DataType.VARCHAR, max_length=MAX_SOURCE_BYTES)
    schema.add_field("title", DataType.VARCHAR, max_length=MAX_TITLE_BYTES)
    schema.add_field("page", DataType.INT64)
    schema.add_field("chunk_index", DataType.INT64)
    schema.add_field("doc_hash", DataType.VARCHAR, max_length=64)
    schema.add_field("doc_chunks", DataType.INT64)
    schema.add_field("metadata", DataType.JSON)
    if full_text:
        schema.add_function(Function(name="text_bm25", function_type=FunctionType.BM25,
                                     input_field_names=["text"], output_field_names=[SPARSE_FIELD]))
    return schema


def build_indexes(client: Any, *, index_type: str, full_text: bool, hnsw: HnswParams) -> Any:
    """Index parameters: FLAT (exact) or HNSW on ``vector`` (COSINE), plus BM25's inverted index on ``sparse``."""
    index = client.prepare_index_params()
    params = {"M": hnsw.m, "efConstruction": hnsw.ef_construction} if index_type == "HNSW" else {}
    index.add_index(field_name="vector", index_type=index_type, metric_type="COSINE", params=params)
    if full_text:
        index.add_index(field_name=SPARSE_FIELD, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return index


def dense_search_params(index_type: str, hnsw: HnswParams, limit: int) -> dict[str, Any]:
    """Search parameters for ``vector``: HNSW's ``ef`` must be at least ``limit`` (Milvus refuses it otherwise)."""
    if index_type == "HNSW":
        return {"metric_type": "COSINE", "params": {"ef": max(hnsw.ef, limit)}}
    return {"metric_type": "COSINE"}


def text_analyzer(description: dict[str, Any]) -> str:
    """The tokenizer BM25 uses in a described collection ("standard" when none is named, "" without full text)."""
    if not has_full_text(description):
        return ""
    for field in description.get("fields") or []:
        if field.get("name") == "text":
            params = (field.get("params") or {}).get("analyzer_params") or {}
            if isinstance(params, str):
                params = json.loads(params or "{}")
            tokenizer = params.get("tokenizer") or params.get("type") or "standard"
            return str(tokenizer.get("type", "standard") if isinstance(tokenizer, dict) else tokenizer)
    return "standard"


def has_full_text(description: dict[str, Any]) -> bool:
    """True when a described collection (``MilvusClient.describe_collection``) has the BM25 ``sparse`` field."""
    return any(f.get("name") == SPARSE_FIELD for f in description.get("fields") or [])


def chunk_row(chunk: Chunk, vector: np.ndarray, doc_chunks: int) -> dict[str, Any]:
    """The row stored for a chunk: its fields (source and title fitted to their byte limits), its vector (shape
    (dim,)) and the chunk count of its whole source."""
    return {"id": chunk.id, "vector": vector.tolist(), "text": chunk.text, "source": stored_source(chunk.source),
            "title": fit_bytes(chunk.title, MAX_TITLE_BYTES), "page": -1 if chunk.page is None else int(chunk.page),
            "chunk_index": chunk.chunk_index, "doc_hash": chunk.doc_hash, "doc_chunks": doc_chunks,
            "metadata": chunk.metadata}


def hit_from_result(item: Any, collection: str) -> Hit:
    """A search result row (``MilvusClient.search``) as a ``Hit``; ``page`` -1 becomes None."""
    entity = item.get("entity", item)
    page = entity.get("page", -1)
    chunk = Chunk(id=str(item.get("id", entity.get("id"))), text=entity.get("text", ""),
                  source=entity.get("source", ""), title=entity.get("title", ""),
                  page=None if page is None or page < 0 else int(page), chunk_index=int(entity.get("chunk_index", 0)),
                  doc_hash=entity.get("doc_hash", ""), metadata=entity.get("metadata") or {})
    return Hit(chunk=chunk, score=float(item.get("distance", 0.0)), collection=collection)


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
