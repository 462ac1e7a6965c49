"""The steps every agent shares: asking a structured question (with reasoning and fallback events), retrieving per
collection, dropping near-duplicate sub-queries, and writing the cited report from the accepted chunks."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence, TypeVar

import numpy as np
from pydantic import BaseModel

from deepsearcher.agents import prompts
from deepsearcher.agents.state import QueryContext
from deepsearcher.errors import ContextWindowError
from deepsearcher.events import ChunkRef, QueryAnswerToken, QueryFallback, QueryReasoning
from deepsearcher.llm.output import Structured, TextReply, ask_structured
from deepsearcher.types import Hit, Source

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)


def ask(ctx: QueryContext, step: str, prompt: str, schema: type[T], fallback: T, fallback_text: str) -> Structured[T]:
    """Run one structured step: ask, retry once on a bad reply, else fall back; emit reasoning / fallback events."""
    result = ask_structured(ctx.llm, prompts.messages(prompt), schema, fallback)
    if result.reasoning:
        ctx.emit(QueryReasoning(step=step, text=result.reasoning))
    if result.fell_back:
        error = f"unusable reply after a retry: {result.error}"
        log.info("%s: %s; %s", step, error, fallback_text)
        ctx.emit(QueryFallback(step=step, error=error, fallback=fallback_text))
    return result


def retrieve(ctx: QueryContext, query: str, collections: Sequence[str]) -> list[Hit]:
    """Top-k hits per collection for ``query``, concatenated collection by collection (each list best first),
    without repeated chunks."""
    seen: set[str] = set()
    hits: list[Hit] = []
    for name in collections:
        for hit in ctx.search(query, name, ctx.settings.top_k):
            key = hit_key(hit)
            if key not in seen:
                seen.add(key)
                hits.append(hit)
    return hits


def hit_key(hit: Hit) -> str:
    """Identity of a hit within a run: ``collection/chunk id``."""
    return f"{hit.collection}/{hit.chunk.id}"


def chunk_ref(hit: Hit) -> ChunkRef:
    """How events name a chunk."""
    c = hit.chunk
    return ChunkRef(id=c.id, collection=hit.collection, source=c.source, page=c.page, title=c.title)


@dataclass(frozen=True)
class Deduped:
    """Result of ``dedup_queries``: the queries to keep and the ones dropped as duplicates."""

    kept: list[str]
    duplicates: list[str]


def dedup_queries(ctx: QueryContext, candidates: Sequence[str], earlier: Sequence[str]) -> Deduped:
    """Drop candidates that repeat an earlier query or an earlier candidate.

    Two queries are duplicates when they are equal after case/whitespace folding, or when the cosine similarity of
    their embeddings is at least ``query.dedup_threshold`` (embeddings are unit vectors, so cosine = dot product).
    Empty candidates are dropped silently.
    """
    kept: list[str] = []
    duplicates: list[str] = []
    vectors = [_embedding(ctx, q) for q in earlier]
    folded = {_fold(q) for q in earlier}
    for query in candidates:
        query = query.strip()
        if not query:
            continue
        if _fold(query) in folded:
            duplicates.append(query)
            continue
        vec = _embedding(ctx, query)
        if any(float(np.dot(vec, other)) >= ctx.settings.dedup_threshold for other in vectors):
            duplicates.append(query)
            continue
        kept.append(query)
        vectors.append(vec)
        folded.add(_fold(query))
    return Deduped(kept, duplicates)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?.!。？！ ")


def _embedding(ctx: QueryContext, text: str) -> np.ndarray:
    return np.asarray(ctx.embed(text), dtype=np.float32).reshape(-1)


def write_text(ctx: QueryContext, step: str, prompt: str, *, stream: bool = True) -> TextReply:
    """Run one free-text step (a cited answer, a report section, the coherence pass): ask, stream the visible text as
    ``query.answer_token`` when ``stream``, emit the reasoning. The one door for free-text calls besides
    ``synthesise``.

    Raises:
        ContextWindowError: the prompt is longer than the model's window (callers shrink it and retry).
        ProviderError: the server failed.
    """
    from deepsearcher.llm.output import ask_text

    on_token = (lambda text: ctx.emit(QueryAnswerToken(text=text))) if stream else None
    reply = ask_text(ctx.llm, prompts.messages(prompt), on_token=on_token)
    if reply.reasoning:
        ctx.emit(QueryReasoning(step=step, text=reply.reasoning))
    return reply


# --- synthesis, shared by every agent ------------------------------------------------------------------------------
NOTHING_FOUND = "No relevant information was found in the searched collections for this question."


def synthesise(ctx: QueryContext, hits: Sequence[Hit], notes: str = "") -> tuple[str, list[Source], int]:
    """Write the cited answer from ``hits`` (numbered 1..N in the prompt), streaming it as ``query.answer_token``.

    Returns:
        ``(answer, sources, removed_citations)``: the answer with citations verified and renumbered; the cited
        sources (all chunks, numbered as in the prompt, when the answer cites none); the count of removed
        citations. With no hits, a fixed "nothing found" answer and no LLM call.
    """
    from deepsearcher.agents.citations import cited_sources, consulted_sources, verify_citations
    from deepsearcher.llm.output import ask_text

    if not hits:
        return NOTHING_FOUND, [], 0
    while True:
        prompt = prompts.SYNTHESISE.format(language=ctx.language, notes=notes, question=ctx.question,
                                           chunks=prompts.chunk_list([h.chunk for h in hits]))
        try:
            reply = ask_text(ctx.llm, prompts.messages(prompt),
                             on_token=lambda text: ctx.emit(QueryAnswerToken(text=text)))
            break
        except ContextWindowError:
            if len(hits) <= 1:
                raise
            # too long for the model: keep the better-ranked half of the chunks and write the report from those
            hits = list(hits[:len(hits) // 2])
            ctx.emit(QueryFallback(step="synthesise", error="the prompt exceeds the model's context window",
                                   fallback=f"writing the report from the top {len(hits)} chunks"))
    if reply.reasoning:
        ctx.emit(QueryReasoning(step="synthesise", text=reply.reasoning))
    verified = verify_citations(reply.text, len(hits))
    if not verified.text:
        return "The model returned an empty answer.", consulted_sources(hits), verified.removed
    sources = cited_sources(verified, hits) if verified.cited else consulted_sources(hits)
    return verified.text, sources, verified.removed


def top_ranked(per_query: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
    """Interleave per-query rankings (every query's best, then every second-best, …) into at most ``k`` hits."""
    out: list[Hit] = []
    seen: set[str] = set()
    depth = max((len(r) for r in per_query), default=0)
    for rank in range(depth):
        for ranking in per_query:
            if rank < len(ranking) and hit_key(ranking[rank]) not in seen and len(out) < k:
                seen.add(hit_key(ranking[rank]))
                out.append(ranking[rank])
    return out


def answer_hits(ctx: QueryContext, accepted: Sequence[Hit], per_query: Sequence[Sequence[Hit]]) -> list[Hit]:
    """The chunks to write the report from: the accepted ones; if the model judged none relevant although chunks
    were retrieved, the ``top_k`` best-ranked retrieved chunks (reported as a ``relevance`` fallback), so the report
    still shows what the collections hold instead of an empty answer."""
    if accepted or not any(per_query):
        return list(accepted)
    best = top_ranked(per_query, ctx.settings.top_k)
    ctx.emit(QueryFallback(step="relevance", error="no retrieved chunk was judged relevant",
                           fallback=f"answering from the {len(best)} top-ranked retrieved chunks"))
    return best
