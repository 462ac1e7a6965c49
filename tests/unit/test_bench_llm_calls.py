"""scripts/bench_llm_calls.py's scripted model reads the prompt's chunks: it never names the check passage the
relevance and intermediate prompts show (a model that copies the example does, and then every chunk is kept with no
further relevance call: the call counts would be a copying model's, not the agent's usual path)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from deepsearcher.agents import prompts
from deepsearcher.agents.relevance_check import check_passage, with_check
from deepsearcher.types import Chunk

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_llm_calls.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_llm_calls", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def chunk(i: int) -> Chunk:
    return Chunk(id=f"c{i}", text=f"Milvus fact number {i} [{i}] about collections.", source=f"docs/{i}.md",
                 title=f"Doc {i}", page=None, chunk_index=0, doc_hash="")


@pytest.mark.parametrize("position", [1, 3])
def test_relevance_reply_skips_the_check_passage(bench, position):
    question = "What limits apply to Milvus collections?"
    shown = with_check([chunk(i) for i in range(1, 5)], check_passage(question, question), position)
    prompt = prompts.RELEVANCE.format(question=question, query=question, count=len(shown),
                                      chunks=prompts.chunk_list(shown))
    numbers = bench.chunk_numbers(prompt)
    assert numbers == [n for n in range(1, 6) if n != position]
    reply = bench.responder(bench.Scenario("t", ["milvus_docs"], 1, 0))([{"role": "user", "content": prompt}])
    assert json.loads(reply)["relevant"] == numbers[::2] and position not in json.loads(reply)["relevant"]


def test_intermediate_reply_supports_with_real_chunks(bench):
    query = "What is Milvus Lite?"
    shown = with_check([chunk(i) for i in range(1, 4)], check_passage(query, query), 1)
    prompt = prompts.INTERMEDIATE.format(query=query, chunks=prompts.chunk_list(shown))
    reply = bench.agent_responder("chain_of_rag")([{"role": "user", "content": prompt}])
    assert json.loads(reply)["supporting"] == [2, 3]


def test_intermediate_reply_decides_the_next_step_when_asked(bench):
    # agents.chain_of_rag.one_call: the scripted chain names its two follow-ups in the answers' replies, then stops
    query = "What is Milvus Lite?"
    prompt = prompts.INTERMEDIATE_NEXT.format(context="", query=query, chunks=prompts.chunk_list(
        [chunk(i) for i in range(1, 4)]))
    respond = bench.agent_responder("chain_of_rag")
    replies = [json.loads(respond([{"role": "user", "content": prompt}])) for _ in range(3)]
    assert [(r["enough"], r["follow_up"]) for r in replies] == [
        (False, bench.SUB_QUERIES[0]), (False, bench.SUB_QUERIES[1]), (True, "")]
    assert all(r["supporting"] == [1, 2] for r in replies)
