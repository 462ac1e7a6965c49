"""Query unit-test fixtures over the fakes of ``deepsearcher.testing``: the hash embedder and the in-memory store.

The real Milvus Lite store and MiniLM embedder are exercised by tests/integration; here they would only slow the
agent-loop tests down without being the point.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Sequence

from deepsearcher.agents.state import QueryContext
from deepsearcher.events import Event
from deepsearcher.llm.base import MeteredChatModel
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.settings import QuerySettings
from deepsearcher.testing import HashEmbedder, MemoryStore
from deepsearcher.types import Chunk

DIM = 2048
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def chunk(text: str, source: str, page: int | None = None, index: int = 0) -> Chunk:
    cid = hashlib.md5(f"{source}/{index}/{text}".encode()).hexdigest()
    return Chunk(id=cid, text=text, source=source, title=source.rsplit("/", 1)[-1].split(".")[0], page=page,
                 chunk_index=index, doc_hash="h", metadata={})


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
    embedder = HashEmbedder(DIM)
    return (MemoryStore().add("milvus", "Milvus vector database documentation", MILVUS_DOCS, embedder)
            .add("recipes", "Cooking recipes from the web", RECIPES, embedder))


def make_ctx(llm: ScriptedChatModel, question: str = "What is Milvus Lite and what are its limits?", *,
             collections: Sequence[str] = ("milvus",), store: MemoryStore | None = None,
             events: list[Event] | None = None, **settings: object) -> QueryContext:
    """A QueryContext over the memory store; ``settings`` override QuerySettings (top_k defaults to 3; concurrency to
    1, so queued replies are consumed in the order the steps ask; tests of concurrency set it and answer by prompt;
    relevance_check to False, so a scripted ``{"relevant": [n]}`` numbers the retrieved chunks alone — the check
    passage's tests turn it on; relevance_keep_top to 0, so the scripted reply alone decides what deep_search keeps —
    its tests turn it on). ``now`` is fixed (2026-11-30 09:00 UTC) unless given."""
    store = store or memory_store()
    embedder = HashEmbedder(DIM)
    now = settings.pop("now", NOW)
    window = settings.pop("window", None)
    qs = QuerySettings(**{"top_k": 3, "concurrency": 1, "relevance_check": False, "relevance_keep_top": 0,
                           **settings})  # type: ignore[arg-type]
    sink = events if events is not None else []
    return QueryContext(question=question, llm=MeteredChatModel(llm), collections=[store.describe(n) for n in
                                                                                  collections],
                        search=lambda q, name, k: store.search(name, embedder.embed_query(q), q, k),
                        embed=embedder.embed_query, settings=qs, emit=sink.append,
                        embedding_model=embedder.model_name, now=now, window=window)  # type: ignore[arg-type]


def kinds(events: Sequence[Event]) -> list[str]:
    return [e.kind for e in events if e.kind != "query.answer_token"]


def of_kind(events: Sequence[Event], kind: str) -> list[dict]:
    return [e.data for e in events if e.kind == kind]


def memory_app(llm: object, **query: object):
    """A ``DeepSearcher`` over the memory store and hash embedder with ``llm`` injected (no Milvus, no torch)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    return DeepSearcher(load_settings(None, {"llm": None, "query": {"top_k": 3, "concurrency": 1, **query}}),
                        llm=llm,  # type: ignore
                        store=memory_store(), embedder=HashEmbedder(DIM))
