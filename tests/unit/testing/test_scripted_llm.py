"""ScriptedChatModel (the fake every query test uses) and the usage meter."""

from __future__ import annotations

import pytest

from deepsearcher.llm.base import ChatResult, MeteredChatModel
from deepsearcher.protocols import ChatModel
from deepsearcher.testing.scripted import ScriptedChatModel, ScriptExhaustedError


def test_replays_in_order_and_records_prompts():
    llm = ScriptedChatModel(["one"]).enqueue(lambda msgs: f"echo {msgs[-1]['content']}")
    assert isinstance(llm, ChatModel)
    assert llm.chat([{"role": "system", "content": "sys"}, {"role": "user", "content": "a"}]).text == "one"
    assert llm.chat([{"role": "user", "content": "b"}]).text == "echo b"
    assert llm.prompts == ["a", "b"]
    assert llm.history[0].system == "sys"
    assert llm.remaining == 0


def test_fails_loudly_when_the_queue_runs_dry():
    llm = ScriptedChatModel(["only"])
    llm.chat([{"role": "user", "content": "first"}])
    with pytest.raises(ScriptExhaustedError, match=r"after 1 calls; the next prompt was:\nsecond question"):
        llm.chat([{"role": "user", "content": "second question\nmore"}])


def test_streams_pieces_that_join_to_the_reply():
    pieces: list[str] = []
    result = ScriptedChatModel(["Milvus Lite  runs [1]."]).chat([{"role": "user", "content": "x"}],
                                                                  on_token=pieces.append)
    assert "".join(pieces) == "Milvus Lite  runs [1]." == result.text
    assert len(pieces) == 4


def test_meter_counts_calls_tokens_and_cost():
    llm = ScriptedChatModel([ChatResult("a", prompt_tokens=1000, completion_tokens=200),
                             ChatResult("b", prompt_tokens=500, completion_tokens=100, attempts=2)])
    meter = MeteredChatModel(llm, price_per_1m_input=0.15, price_per_1m_output=0.6)
    meter.chat([{"role": "user", "content": "x"}])
    meter.chat([{"role": "user", "content": "y"}])
    usage = meter.usage()
    assert (usage.llm_calls, usage.prompt_tokens, usage.completion_tokens) == (3, 1500, 300)
    assert usage.cost == pytest.approx(1500 * 0.15 / 1e6 + 300 * 0.6 / 1e6)
    assert MeteredChatModel(llm).usage().cost is None


def test_estimates_tokens_when_none_given():
    result = ScriptedChatModel(["12345678"]).chat([{"role": "user", "content": "abcd"}])
    assert (result.prompt_tokens, result.completion_tokens) == (1, 2)
