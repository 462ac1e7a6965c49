"""In-memory stand-ins for the query unit tests: a deterministic hash embedder and a tiny vector store.

The real Milvus Lite store and MiniLM embedder are exercised by tests/integration; here they would only slow the
agent-loop tests down without being the point.
"""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np

from deepsearcher.agents.context import QueryContext
from deepsearcher.errors import CollectionError
from deepsearcher.llm.base import MeteredChatModel
from deepsearcher.llm.scripted import ScriptedChatModel
from deepsearcher.settings import QuerySettings
from deepsearcher.types import Chunk, CollectionInfo, Event, Hit

DIM = 2048


class HashEmbedder:
    """Bag of hashed lower-case words, L2-normalised: equal word sets give cosine 1, disjoint ones 0."""

    model_name = "hash-bow"
    dimension = DIM
    max_tokens = None

    def tokenizer(self) -> None:
        return None

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.zeros(DIM, dtype=np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
        norm = np.linalg.norm(vec)
        return vec / norm if norm else vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts])


def chunk(text: str, source: str, page: int | None = None, index: int = 0) -> Chunk:
    cid = hashlib.md5(f"{source}/{index}/{text}".encode()).hexdigest()
    return Chunk(id=cid, text=text, source=source, title=source.rsplit("/", 1)[-1].split(".")[0], page=page,
                 chunk_index=index, doc_hash="h", metadata={})


class MemoryStore:
    """Collections of chunks searched by cosine over ``HashEmbedder`` vectors (the ``MilvusStore`` calls query uses)."""

    uri = "memory://"

    def __init__(self, collections: dict[str, tuple[str, list[Chunk]]]) -> None:
        self.data = collections
        self.embedder = HashEmbedder()
        self.searches: list[tuple[str, str, int]] = []

    def list_collections(self) -> list[str]:
        return sorted(self.data)

    def describe(self, name: str) -> CollectionInfo:
        if name not in self.data:
            raise CollectionError(f"no collection named {name!r}")
        desc, chunks = self.data[name]
        return CollectionInfo(name, desc, len(chunks), HashEmbedder.model_name, DIM)

    def check_embedding(self, name: str, model_name: str, dim: int) -> None:
        assert model_name == HashEmbedder.model_name and dim == DIM

    def search(self, name: str, vector: np.ndarray | None, text: str, top_k: int, mode: str = "hybrid") -> list[Hit]:
        self.searches.append((name, text, top_k))
        _, chunks = self.data[name]
        scored = [(float(np.dot(vector, self.embedder.embed_query(c.text))), c) for c in chunks]
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [Hit(c, s, name) for s, c in scored[:top_k]]

    def close(self) -> None:
        pass


MILVUS_DOCS = [
    chunk("Milvus Lite is the lightweight version of Milvus that runs inside your Python process.", "/d/lite.md"),
    chunk("Milvus Lite stores data in a local file and suits prototypes and notebooks.", "/d/lite.md", index=1),
    chunk("Collection names may contain only letters, digits and underscores.", "/d/limits.md"),
    chunk("Milvus supports strong, bounded, session and eventually consistency levels.", "/d/consistency.md"),
    chunk("Sparse vectors store term weights for full-text search with BM25.", "/d/sparse.pdf", page=2),
]
RECIPES = [
    chunk("Bake the bread at 220 degrees for thirty minutes.", "https://example.org/bread"),
    chunk("Pasta water should be salted like the sea.", "https://example.org/pasta"),
]


def memory_store() -> MemoryStore:
    return MemoryStore({"milvus": ("Milvus vector database documentation", list(MILVUS_DOCS)),
                        "recipes": ("Cooking recipes from the web", list(RECIPES))})


def make_ctx(llm: ScriptedChatModel, question: str = "What is Milvus Lite and what are its limits?", *,
             collections: Sequence[str] = ("milvus",), store: MemoryStore | None = None,
             events: list[Event] | None = None, **settings: object) -> QueryContext:
    """A QueryContext over the memory store; ``settings`` override QuerySettings (top_k defaults to 3)."""
    store = store or memory_store()
    embedder = store.embedder
    qs = QuerySettings(**{"top_k": 3, **settings})  # type: ignore[arg-type]
    sink = events if events is not None else []
    return QueryContext(question=question, llm=MeteredChatModel(llm), collections=[store.describe(n) for n in
                                                                                  collections],
                        search=lambda q, name, k: store.search(name, embedder.embed_query(q), q, k),
                        embed=embedder.embed_query, settings=qs, emit=sink.append)


def kinds(events: Sequence[Event]) -> list[str]:
    return [e.kind for e in events if e.kind != "query.answer_token"]


def of_kind(events: Sequence[Event], kind: str) -> list[dict]:
    return [e.data for e in events if e.kind == kind]


def memory_app(llm: object, **query: object):
    """A ``DeepSearcher`` over the memory store and hash embedder with ``llm`` injected (no Milvus, no torch)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    app = DeepSearcher(load_settings(None, {"llm": None, "query": {"top_k": 3, **query}}), llm=llm)
    app._store = memory_store()
    app._embedder = app._store.embedder
    return app
