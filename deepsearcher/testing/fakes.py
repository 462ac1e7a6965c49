"""Fakes for tests, also for plugin authors: a deterministic embedder, an in-memory vector store and the scripted chat
model, each satisfying its protocol (``deepsearcher.protocols``).

- ``HashEmbedder``: bag of hashed words, L2-normalised (equal word sets give cosine 1, disjoint ones 0); no model.
- ``MemoryStore``: collections in a dict, exact cosine search; passes the ``VectorStore`` conformance suite
  (``deepsearcher.testing.conformance``) for what it claims: dense search only (``capabilities``), other modes fall back to
  dense.
- ``ScriptedChatModel``: replays queued replies and records every prompt (``deepsearcher.testing.scripted``).

Use them through the public constructor, never by writing private attributes::

    app = DeepSearcher(settings, embedder=HashEmbedder(), store=MemoryStore(), llm=ScriptedChatModel([...]))
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import Sequence

import numpy as np

from deepsearcher.embedding.base import l2_normalise
from deepsearcher.errors import CollectionError
from deepsearcher.filters import SearchFilter
from deepsearcher.testing.scripted import ScriptedCall, ScriptedChatModel, ScriptExhaustedError
from deepsearcher.types import Chunk, CollectionInfo, Hit, SearchMode, SearchPlan, StoreCapabilities
from deepsearcher.vectordb.capabilities import plan_search
from deepsearcher.vectordb.names import no_such_collection, validate_collection_name

__all__ = ["HashEmbedder", "MemoryStore", "ScriptedCall", "ScriptedChatModel", "ScriptExhaustedError"]


class HashEmbedder:
    """A deterministic ``Embedder``: each lower-cased word ``\\w+`` adds 1 to the dimension its MD5 hash picks.

    Args:
        dimension: vector length.
        model_name: the name recorded in collections.
    """

    max_tokens = None

    def __init__(self, dimension: int = 2048, model_name: str = "hash-bow") -> None:
        self.dimension = dimension
        self.model_name = model_name

    def tokenizer(self) -> None:
        """No tokenizer: the splitter counts characters / 4."""
        return None

    def _counts(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        return vec

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dimension,), unit length (all zeros for text without words)."""
        vector: np.ndarray = l2_normalise(self._counts(text)[None, :])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dimension), rows unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return l2_normalise(np.stack([self._counts(t) for t in texts]))


class _Collection:
    def __init__(self, description: str, model_name: str, dim: int) -> None:
        self.description = description
        self.generated = False
        self.model_name = model_name
        self.dim = dim
        self.rows: dict[str, tuple[Chunk, np.ndarray, int]] = {}  # id -> (chunk, vector, doc_chunks)


class MemoryStore:
    """A ``VectorStore`` in a dict: exact cosine search, dense only (hybrid and bm25 requests fall back to dense).

    Attributes:
        searches: every search as ``(collection, query text, top_k)``, for tests to assert on.
    """

    uri = "memory://"

    def __init__(self) -> None:
        self._collections: dict[str, _Collection] = {}
        self.searches: list[tuple[str, str, int]] = []

    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(dense=True, bm25=False, hybrid=False, engine="memory", index_type="FLAT")

    def _get(self, name: str) -> _Collection:
        validate_collection_name(name)
        if name not in self._collections:
            raise no_such_collection(name, self.list_collections())
        return self._collections[name]

    def list_collections(self) -> list[str]:
        return sorted(self._collections)

    def has_collection(self, name: str) -> bool:
        return validate_collection_name(name) in self._collections

    def create_collection(self, name: str, *, description: str, model_name: str, dim: int) -> None:
        self._collections[validate_collection_name(name)] = _Collection(description, model_name, dim)

    def drop_collection(self, name: str) -> None:
        self._get(name)
        del self._collections[name]

    def describe(self, name: str) -> CollectionInfo:
        col = self._get(name)
        return CollectionInfo(name, col.description, len(col.rows), col.model_name, col.dim, col.generated,
                              modes=["dense"], index_type="FLAT")

    def plan_search(self, name: str, mode: SearchMode) -> SearchPlan:
        self._get(name)
        return plan_search(name, mode, ["dense"], "the in-memory store searches dense vectors only")

    def set_description(self, name: str, description: str, *, generated: bool = False) -> None:
        col = self._get(name)
        col.description, col.generated = description, generated

    def sample(self, name: str, limit: int) -> list[Chunk]:
        return [c for c, _, _ in self._get(name).rows.values() if c.chunk_index == 0][:limit]

    def check_embedding(self, name: str, model_name: str, dim: int) -> None:
        col = self._get(name)
        if col.model_name != model_name or col.dim != dim:
            raise CollectionError(
                f"collection {name!r} was built with embedding model {col.model_name!r} (dim {col.dim}), but the "
                f"configured model is {model_name!r} (dim {dim})",
                hint="configure the same embedding model, use another collection, or rebuild it with "
                     "--force-new-collection")

    def count(self, name: str, filter_expr: str = "") -> int:
        if filter_expr:
            raise ValueError("MemoryStore.count takes no filter expression")
        return len(self._get(name).rows)

    def is_complete(self, name: str, source: str, doc_hash: str) -> bool:
        rows = [(c, n) for c, _, n in self._get(name).rows.values() if c.source == source and c.doc_hash == doc_hash]
        return bool(rows) and len(rows) >= rows[0][1]

    def stored_ids(self, name: str, ids: Sequence[str], doc_hash: str) -> set[str]:
        rows = self._get(name).rows
        return {cid for cid in ids if cid in rows and rows[cid][0].doc_hash == doc_hash}

    def upsert(self, name: str, chunks: Sequence[Chunk], vectors: np.ndarray, doc_chunks: dict[str, int]) -> int:
        col = self._get(name)
        for i, chunk in enumerate(chunks):
            vector = np.asarray(vectors[i], dtype=np.float32).reshape(-1)
            if vector.shape[0] != col.dim:
                raise ValueError(f"vector of dimension {vector.shape[0]} for a collection of dimension {col.dim}")
            col.rows[chunk.id] = (chunk, vector, doc_chunks[chunk.source])
        return len(chunks)

    def delete_stale(self, name: str, source: str, doc_hash: str) -> int:
        col = self._get(name)
        stale = [cid for cid, (c, _, _) in col.rows.items() if c.source == source and c.doc_hash != doc_hash]
        for cid in stale:
            del col.rows[cid]
        return len(stale)

    def sources(self, name: str) -> list[str]:
        return sorted({c.source for c, _, _ in self._get(name).rows.values()})

    def delete_source(self, name: str, source: str) -> int:
        col = self._get(name)
        gone = [cid for cid, (c, _, _) in col.rows.items() if c.source == source]
        for cid in gone:
            del col.rows[cid]
        return len(gone)

    def seal(self, name: str) -> None:
        self._get(name)

    def search(self, name: str, query_vector: np.ndarray | None, query_text: str, top_k: int,
               mode: SearchMode = "hybrid", *, where: SearchFilter | None = None) -> list[Hit]:
        col = self._get(name)
        self.searches.append((name, query_text, top_k))
        if query_vector is None:
            return []  # bm25 requested without a vector: this store has no full-text index
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        scored = [(float(np.dot(query, vector)), chunk) for chunk, vector, _ in col.rows.values()
                  if where is None or where.admits(chunk)]
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [Hit(chunk, score, name) for score, chunk in scored[:top_k]]

    def chunks_around(self, name: str, chunk: Chunk, window: int) -> list[Chunk]:
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        near = [c for c, _, _ in self._get(name).rows.values()
                if (c.source, c.page, c.doc_hash) == (chunk.source, chunk.page, chunk.doc_hash)
                and abs(c.chunk_index - chunk.chunk_index) <= window]
        return sorted(near, key=lambda c: c.chunk_index)

    def close(self) -> None:
        """Nothing to release."""

    # --- convenience for tests -----------------------------------------------------------------------------------
    def add(self, name: str, description: str, chunks: Sequence[Chunk], embedder: HashEmbedder) -> MemoryStore:
        """Create ``name`` (if needed) and upsert ``chunks`` embedded by ``embedder``; returns self."""
        if name not in self._collections:
            self.create_collection(name, description=description, model_name=embedder.model_name,
                                   dim=embedder.dimension)
        counts: dict[str, int] = {}
        for chunk in chunks:
            counts[chunk.source] = counts.get(chunk.source, 0) + 1
        stamped = [replace(c, doc_hash=c.doc_hash or "h") for c in chunks]
        self.upsert(name, stamped, embedder.embed_documents([c.text for c in stamped]), counts)
        return self
