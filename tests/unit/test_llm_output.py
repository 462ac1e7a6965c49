"""LLM output handling: reasoning in three shapes, tolerant JSON, validation, retry-with-error, fallback."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from deepsearcher.agents.deep_search import Decomposition, Reflection, Relevance
from deepsearcher.errors import LLMOutputError
from deepsearcher.llm.base import ChatResult
from deepsearcher.llm.output import (
    RETRY_TEMPLATE, ThinkStreamFilter, ask_structured, ask_text, extract_json, parse_reply, split_reasoning,
)
from deepsearcher.llm.scripted import ScriptedChatModel


# --- reasoning -----------------------------------------------------------------------------------------------------
def test_think_block_is_removed():
    assert split_reasoning("<think>The user wants X.\nSo Y.</think>\n\nThe answer is 42.") == (
        "The answer is 42.", "The user wants X.\nSo Y.")


def test_prelude_with_only_closing_tag_is_removed():
    answer, reasoning = split_reasoning("Okay, let me think about Milvus.\nIt is a DB.\n</think>\n\n[\"a\"]")
    assert answer == '["a"]'
    assert reasoning == "Okay, let me think about Milvus.\nIt is a DB."


def test_separate_reasoning_field_is_returned_as_reasoning():
    assert split_reasoning('{"x": 1}', "first I consider the schema") == ('{"x": 1}', "first I consider the schema")


def test_all_three_shapes_together_and_thinking_tag():
    text = "pre</think>mid<thinking>inner</thinking> final"
    assert split_reasoning(text, "field") == ("mid final", "field\n\ninner\n\npre")


def test_unclosed_think_is_all_reasoning():
    assert split_reasoning("<think>I was cut off by max_tokens") == ("", "I was cut off by max_tokens")


@pytest.mark.parametrize("pieces, shown, hidden", [
    (list("<think>plan it</think>Milvus Lite [1]."), "Milvus Lite [1].", "plan it"),
    (["long reasoning ", "here", "</th", "ink>", "\nAnswer"], "Answer", "long reasoning here"),
    (["Answer with <b>bold</b> ", "and <thi", "nk>secret</think> more"], "Answer with <b>bold</b> and  more", "secret"),
])
def test_stream_filter_hides_reasoning_across_deltas(pieces, shown, hidden):
    flt = ThinkStreamFilter(prelude_chars=40)
    out = "".join(flt.feed(p) for p in pieces) + flt.flush()
    assert out == shown
    assert flt.reasoning.strip() == hidden


def test_stream_filter_passes_plain_text_after_prelude_window():
    flt = ThinkStreamFilter(prelude_chars=10)
    assert flt.feed("Plain answer, no reasoning at all.") == "Plain answer, no reasoning at all."


# --- JSON extraction -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, value", [
    ('{"sub_queries": ["a", "b"]}', {"sub_queries": ["a", "b"]}),
    ('```json\n{"sub_queries": ["a"]}\n```', {"sub_queries": ["a"]}),
    ('```\n["a", "b"]\n```\nHope this helps!', ["a", "b"]),
    ('Sure! Here are the queries: {"sub_queries": ["x [1]", "y"]} Let me know.', {"sub_queries": ["x [1]", "y"]}),
    ("{'sub_queries': ['what is it', \"it's fast\"]}", {"sub_queries": ["what is it", "it's fast"]}),
    ("['Milvus Lite', 'limits']", ["Milvus Lite", "limits"]),
    ('[“Milvus 是什么”，“Milvus 的限制”]', ["Milvus 是什么", "Milvus 的限制"]),
    ('｛"relevant"：［1，3］｝', {"relevant": [1, 3]}),
    ('{"relevant": [1, 2,]}', {"relevant": [1, 2]}),
    ('{"enough": True, "follow_up": None}', {"enough": True, "follow_up": None}),
    ('{"gap_queries": ["a", "b"', {"gap_queries": ["a", "b"]}),
])
def test_extract_json_shapes(reply, value):
    assert extract_json(reply) == value


def test_extract_json_without_json_is_a_retryable_error():
    with pytest.raises(LLMOutputError) as err:
        extract_json("I cannot help with that.")
    assert err.value.retryable and err.value.raw == "I cannot help with that."


@pytest.mark.parametrize("reply, schema, expected", [
    ("<think>hmm</think>['a', 'b']", Decomposition, ["a", "b"]),
    ('```json\n{"relevant": ["2", "[3]"]}\n```', Relevance, [2, 3]),
    ('{"relevant": [true, false, true]}', Relevance, [1, 3]),
    ('{"gap_queries": []}', Reflection, []),
    ('"only one query"', Decomposition, ["only one query"]),
])
def test_parse_reply_validates_and_normalises(reply, schema, expected):
    answer, _ = split_reasoning(reply)
    value = parse_reply(answer, schema)
    assert list(value.model_dump().values())[0] == expected


def test_parse_reply_rejects_copied_placeholders():
    with pytest.raises(LLMOutputError, match="example placeholders"):
        parse_reply('{"sub_queries": ["<query 1>", "<query 2>"]}', Decomposition)


def test_parse_reply_wrong_shape_names_the_field():
    with pytest.raises(LLMOutputError, match="sub_queries"):
        parse_reply('{"queries": ["a"]}', Decomposition)


# --- retry and fallback --------------------------------------------------------------------------------------------
class Answer(BaseModel):
    value: int


def test_ask_structured_retries_once_showing_the_error():
    llm = ScriptedChatModel(["no idea", '<think>try again</think>{"value": 7}'])
    result = ask_structured(llm, [{"role": "user", "content": "give"}], Answer, Answer(value=-1))
    assert result.value == Answer(value=7)
    assert not result.fell_back
    assert result.reasoning == "try again"
    retry = llm.history[1].messages
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert retry[1]["content"] == "no idea"
    assert retry[2]["content"] == RETRY_TEMPLATE.format(
        error="the reply contains no JSON object or array")
    assert llm.history[0].schema is Answer


def test_ask_structured_falls_back_after_second_failure():
    llm = ScriptedChatModel(['{"value": "seven"}', '{"value": [1]}'])
    result = ask_structured(llm, [{"role": "user", "content": "give"}], Answer, Answer(value=-1))
    assert result.value == Answer(value=-1)
    assert result.fell_back
    assert "value" in result.error
    assert llm.remaining == 0 and len(llm.history) == 2


def test_ask_text_streams_without_reasoning_and_strips_field():
    llm = ScriptedChatModel([ChatResult(text="<think>x</think>Final [1].", reasoning="field")])
    pieces: list[str] = []
    reply = ask_text(llm, [{"role": "user", "content": "write"}], on_token=pieces.append)
    assert "".join(pieces) == "Final [1]."
    assert reply.text == "Final [1]."
    assert reply.reasoning == "field\n\nx"
