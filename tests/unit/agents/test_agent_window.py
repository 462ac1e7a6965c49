"""Issue #11 item 1: every step fits the model's context window; long questions are refused before any call."""

from __future__ import annotations

import json
import re
from typing import Callable, Sequence

import pytest

from deepsearcher.agents import deep_search
from deepsearcher.agents.report import synthesise
from deepsearcher.vectordb.fusion import top_ranked
from deepsearcher.errors import ContextWindowError, QuestionError
from deepsearcher.events import Event
from deepsearcher.llm.base import Message
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.llm.window import EXCERPT_STEPS, Window, limit_in_message, upper_bound_tokens
from deepsearcher.testing import HashEmbedder, MemoryStore
from deepsearcher.types import Hit
from tests.unit.query_fakes import DIM, chunk, make_ctx, memory_app, of_kind

FILLER = ("Every receipt must be uploaded within thirty days, with the project code, the amount in the original "
          "currency and a short note on the business purpose; approvers check the policy limits first. ")


def long_store(per_collection: int = 12) -> MemoryStore:
    """Two collections of ~1,000-character chunks (the size of a 240-token chunk)."""
    embedder = HashEmbedder(DIM)
    store = MemoryStore()
    for name, topic in (("expenses", "receipts"), ("travel", "trips")):
        chunks = [chunk(f"{topic} rule {i}: " + FILLER * 5, f"/d/{name}-{i}.md", index=i)
                  for i in range(per_collection)]
        store.add(name, f"Company {name} policy", chunks, embedder)
    return store


def server(window: int, respond: Callable[[str], str]) -> Callable[[Sequence[Message]], str]:
    """A reply function that behaves like a llama.cpp server with ``window`` tokens: a longer prompt is refused
    with the server's message; otherwise ``respond(prompt)`` answers."""

    def reply(messages: Sequence[Message]) -> str:
        tokens = sum(upper_bound_tokens(m["content"]) for m in messages)
        if tokens >= window:
            raise ContextWindowError(f"This model's maximum context length is {window} tokens. However, you "
                                     f"requested {tokens} tokens", limit=window)
        return respond(messages[-1]["content"])

    return reply


def steps_reply(prompt: str) -> str:
    """Sensible replies by step: two sub-queries, route by keyword, every other chunk helpful, no gaps."""
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": ["receipts rules", "trips rules"]})
    if prompt.startswith("Choose the collections"):
        query = prompt.split("Search query: ", 1)[1]
        return json.dumps({"collections": ["expenses"] if "receipt" in query else ["travel", "expenses"]})
    if "numbered text chunks" in prompt:
        count = int(re.search(r"Below are (\d+) numbered", prompt).group(1))  # type: ignore[union-attr]
        return json.dumps({"relevant": list(range(1, count + 1, 2))})
    if prompt.startswith("Question:"):
        return json.dumps({"gap_queries": []})
    return "Receipts are due within thirty days [1]; trips follow the same rule [2]."


def test_llama_cpp_defaults_top_k_10_two_collections_fit_every_prompt():
    # the input: n_ctx 4096, max_tokens 1024, top_k 10, two collections -> ContextWindowError at relevance
    llm = ScriptedChatModel([server(4096, steps_reply)] * 20, context_window=4096, max_tokens=1024)
    events: list[Event] = []
    ctx = make_ctx(llm, "What are the rules for receipts and for trips?", collections=("expenses", "travel"),
                   store=long_store(), events=events, top_k=10)
    report = deep_search.run(ctx)
    assert report.answer.startswith("Receipts are due within thirty days [1]")
    assert len(report.sources) == 2
    room = ctx.window.prompt_room()
    assert all(ctx.window.count_messages(call.messages) <= room for call in llm.history)
    assert all(call.max_tokens is not None and call.max_tokens <= 1024 for call in llm.history)
    trimmed = of_kind(events, "query.trimmed")
    assert trimmed and trimmed[0]["step"] == "relevance" and trimmed[0]["window"] == 4096
    relevance = [c.prompt for c in llm.history if "numbered text chunks" in c.prompt][0]
    assert trimmed[0]["kept"] == int(re.search(r"Below are (\d+) numbered", relevance).group(1))  # type: ignore


def test_excerpts_are_shortened_before_chunks_are_dropped():
    window = Window(4096, 1024)
    texts = [f"chunk {i} " + "word " * 300 for i in range(6)]

    def render(kept: Sequence[str], cap: int | None) -> list[Message]:
        return [Message(role="user", content="\n".join(t if cap is None else t[:cap] for t in kept))]

    fit = window.fit(render, texts)
    assert fit.dropped == 0 and fit.excerpt_chars in EXCERPT_STEPS
    many = texts * 8
    fit = window.fit(render, many, priority=list(range(len(many)))[::-1])  # 48 chunks: some must go
    assert fit.excerpt_chars == EXCERPT_STEPS[-1] and fit.dropped > 0
    assert fit.items == many[fit.dropped:]  # the lowest priority numbers (kept first) are the last items
    assert fit.tokens <= window.prompt_room()


def test_chunk_lists_are_cut_by_fused_rank_so_every_sub_query_keeps_its_best():
    # the input: the report step's fallback kept the first half in acceptance order, losing sub-query B
    a = [chunk(f"Aspect A detail {i}: " + FILLER * 4, f"/d/a{i}.md", index=i) for i in range(4)]
    b = [chunk(f"Aspect B detail {i}: " + FILLER * 4, f"/d/b{i}.md", index=i) for i in range(2)]
    rank_a = [Hit(c, 1 - i / 10, "docs") for i, c in enumerate(a)]
    rank_b = [Hit(c, 1 - i / 10, "docs") for i, c in enumerate(b)]
    accepted = rank_a + rank_b  # acceptance order: all of A first
    refused = {"calls": 0}

    def small_server(messages: Sequence[Message]) -> str:
        if not refused["calls"]:
            refused["calls"] += 1
            raise ContextWindowError("This model's maximum context length is 1000 tokens.", limit=1000)
        b0 = re.search(r"\[(\d+)\] b0 \(/d/b0.md\)", messages[-1]["content"])
        return f"A [1] and B [{b0.group(1) if b0 else 9}]."

    llm = ScriptedChatModel([small_server, small_server], max_tokens=200)
    events: list[Event] = []
    ctx = make_ctx(llm, "Compare aspect A and aspect B", events=events)
    written = synthesise(ctx, accepted, [rank_a, rank_b], ["aspect A", "aspect B"])
    shown = [h.chunk.source for h in accepted if h.chunk.text[:30] in llm.prompts[-1]]
    assert 2 <= len(shown) < 6
    assert set(shown) == {h.chunk.source for h in top_ranked([rank_a, rank_b], len(shown))}
    assert "/d/a0.md" in shown and "/d/b0.md" in shown  # both aspects' best chunks survive
    assert ctx.window.size == 1000  # learned from the server's message
    assert [s.chunk.source for s in written.sources] == ["/d/a0.md", "/d/b0.md"]
    assert of_kind(events, "query.fallback")[0]["step"] == "synthesise"


def test_the_window_learned_from_a_server_error_is_used_from_then_on():
    # a server that reports no window (llama-cpp-python's): the default 8,192 is assumed until it refuses a prompt
    llm = ScriptedChatModel([server(2048, steps_reply)] * 20, max_tokens=256)
    events: list[Event] = []
    ctx = make_ctx(llm, "What are the rules for receipts and for trips?", collections=("expenses", "travel"),
                   store=long_store(), events=events, top_k=10)
    report = deep_search.run(ctx)
    assert ctx.window.size == 2048 and ctx.window.source == "learned from the server's error"
    assert report.answer.startswith("Receipts are due")
    assert of_kind(events, "query.trimmed")
    # reflect's items are chunks in full and a line per chunk found: its event does not call them all chunks (a
    # helper read "left out 3 of 42 chunks" of a run that had found 21)
    units = {e.data["step"]: e for e in events if e.kind == "query.trimmed"}
    assert units["relevance"].data["unit"] == "chunks" and "kept every chunk" in units["relevance"].describe()[0]
    assert "left out 9 of 20 items (new chunks in full, one line per chunk found)" in units["reflect"].describe()[0]


@pytest.mark.parametrize("chars", [20_000, 105_000])
def test_a_question_over_the_limit_is_refused_before_any_call(chars):
    llm = ScriptedChatModel([])
    question = ("Why is my receipt rejected? " * (chars // 28 + 1))[:chars]
    with pytest.raises(QuestionError) as err:
        memory_app(llm).query(question)
    assert "the limit is query.max_question_tokens = 3,000 tokens" in str(err.value)
    assert "raise query.max_question_tokens" in str(err.value)
    assert llm.history == []


def test_a_question_too_long_for_the_window_is_refused_naming_the_window():
    llm = ScriptedChatModel([], context_window=2048, max_tokens=512)
    with pytest.raises(QuestionError) as err:
        memory_app(llm).query("Why is my receipt rejected? " * 280)  # ~2,600 tokens: under the limit
    assert "too long for the model's context window" in str(err.value) and "2048-token window" in str(err.value)
    assert llm.history == []


def test_the_question_limit_is_a_setting():
    llm = ScriptedChatModel([])
    with pytest.raises(QuestionError, match="query.max_question_tokens = 10 tokens"):
        memory_app(llm, max_question_tokens=10).query("What is Milvus Lite and how is it different from Milvus?")


@pytest.mark.parametrize("message, limit", [
    ("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens", 2048),
    ("Requested tokens (5000) exceed context window of 4096", 4096),
    ("the request exceeds the available context size (8192 tokens), try increasing it", 8192),
    ("Internal server error", None),
])
def test_limit_in_server_messages(message, limit):
    assert limit_in_message(message) == limit


def test_upper_bound_counts_high_for_any_script():
    assert upper_bound_tokens("Milvus Lite runs in-process.") >= 7  # 28 characters; ~6 real tokens
    assert upper_bound_tokens("向量数据库") == 5
    assert upper_bound_tokens("") == 0
