"""LLM output handling: reasoning in three shapes, tolerant JSON, validation, retry-with-error, fallback."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from deepsearcher.agents.deep_search import Decomposition, Reflection, Relevance
from deepsearcher.errors import LLMOutputError
from deepsearcher.llm.base import ChatResult
from deepsearcher.llm.output import (
    RETRY_TEMPLATE, ThinkStreamFilter, ask_structured, ask_text, extract_json, parse_reply, split_reasoning,
)
from deepsearcher.testing.scripted import ScriptedChatModel


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
    text = "pre</think><thinking>inner</thinking> final"
    assert split_reasoning(text, "field") == ("final", "field\n\npre\n\ninner")


QUOTED_TAGS = [
    "Reasoning models wrap their thoughts in <think> tags, and the server strips them [1].",
    "Qwen3 writes <think>…</think> before the answer; the parser removes it [1]. Later text stays.",
    "The template ends reasoning with `</think>` and the answer follows [2].",
    'A reply that quotes "</think>" keeps every word, and so does one with «<thinking>» [1].',
    "Модели пишут рассуждения внутри <think>, а ответ после него [1]. Остальной текст остаётся.",
    "推理模型把思考写在 <think> 标签里 [1]。后面的文字必须保留。",
    "DeepSeek-R1 が <reasoning> を書くことがある [1]。",
]


@pytest.mark.parametrize("answer", QUOTED_TAGS)
def test_a_tag_quoted_inside_the_answer_keeps_all_text(answer):
    assert split_reasoning(answer) == (answer, "")
    assert split_reasoning(f"<think>plan</think>\n\n{answer}") == (answer, "plan")
    flt = ThinkStreamFilter(prelude_chars=16)
    streamed = "".join(flt.feed(answer[i:i + 5]) for i in range(0, len(answer), 5)) + flt.flush()
    assert streamed == answer


def test_only_the_leading_block_is_reasoning_and_several_leading_blocks_all_are():
    assert split_reasoning("<think>a</think> <thinking>b</thinking>Answer with <think>x</think> kept.") == (
        "Answer with <think>x</think> kept.", "a\n\nb")


def test_unclosed_think_is_all_reasoning():
    assert split_reasoning("<think>I was cut off by max_tokens") == ("", "I was cut off by max_tokens")


@pytest.mark.parametrize("pieces, shown, hidden", [
    (list("<think>plan it</think>Milvus Lite [1]."), "Milvus Lite [1].", "plan it"),
    (["long reasoning ", "here", "</th", "ink>", "\nAnswer"], "Answer", "long reasoning here"),
    (["<think>sec", "ret</think>", "Answer with <b>bold</b> ", "and <thi", "nk>quoted</think> more"],
     "Answer with <b>bold</b> and <think>quoted</think> more", "secret"),
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


@pytest.mark.parametrize("none", ["None", "N/A", "?", "-", '""', "No further questions.", "nothing else", "null",
                                  "What " + "very " * 100 + "long?"])
def test_a_query_the_model_wrote_that_is_none_is_not_searched(none: str):
    # a helper's probe: each of these was searched as a follow-up; a 15,000-character one then broke the report prompt
    from deepsearcher.agents.replies import FollowUp, IntermediateNext, Reflection

    assert parse_reply(json.dumps({"gap_queries": [none, "Milvus Lite limits"]}), Reflection).gap_queries == [
        "Milvus Lite limits"]
    assert parse_reply(json.dumps({"gap_queries": [none]}), Reflection).gap_queries == []  # no gaps, not an error
    with pytest.raises(LLMOutputError, match="no sub-queries"):
        parse_reply(json.dumps({"sub_queries": [none]}), Decomposition)
    assert parse_reply(json.dumps({"enough": False, "follow_up": none}), FollowUp).follow_up == ""
    reply = parse_reply(json.dumps({"answer": "x", "supporting": [1], "enough": False, "follow_up": none}),
                        IntermediateNext)
    assert reply.answer == "x" and not reply.decided()


@pytest.mark.parametrize("query", ["Who is None?", "What is N/A in SQL?", "No, what year?", "Nothing Compares 2 U"])
def test_a_query_that_only_starts_like_none_is_a_query(query: str):
    from deepsearcher.agents.replies import FollowUp

    assert parse_reply(json.dumps({"follow_up": query}), FollowUp).follow_up == query


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


# --- issue #11 item 2: JSON is taken from where the model put it ----------------------------------------------------
@pytest.mark.parametrize("reply, schema, expected", [
    # the failing inputs
    ('Chunks [2] and [4] answer the question. {"relevant": [2, 4]}', Relevance, [2, 4]),
    ('Chunk [3] is off-topic, so: {"relevant": [1, 2]}', Relevance, [1, 2]),
    ('Looking at [the question], two parts: {"sub_queries": ["a", "b"]}', Decomposition, ["a", "b"]),
    ('{"sub_queries": [{"query": "x"}, {"query": "y"}]}', Decomposition, ["x", "y"]),
    ('{"relevant": [{"id": 2}, {"chunk": 4}]}', Relevance, [2, 4]),
    # the same kinds, other inputs
    ('{"relevant": [2]} Chunk [3] was off-topic.', Relevance, [2]),              # the object, not the later [3]
    ('I first thought {"relevant": [1]}, but on reflection: {"relevant": [1, 3]}', Relevance, [1, 3]),  # last
    ('Per [1] and [2]:\n```json\n{"gap_queries": ["milvus index types"]}\n```\nsee [5]', Reflection,
     ["milvus index types"]),
    ('Queries [a]: {"gap_queries": [{"query": "a", "reason": "missing"}, {"text": "b"}]}', Reflection, ["a", "b"]),
    ('{"relevant": [{"id": 2, "why": "names the limit"}, {"number": "[5]"}]}', Relevance, [2, 5]),
    ('Step [1] decompose → {"sub_queries": [{"sub_query": "Milvus Lite"}]}', Decomposition, ["Milvus Lite"]),
    ('["not", "this"] because {"sub_queries": ["this"]}', Decomposition, ["this"]),
])
def test_json_is_taken_from_where_the_model_put_it(reply, schema, expected):
    assert list(parse_reply(reply, schema).model_dump().values())[0] == expected


def test_a_bare_list_still_works_when_it_is_the_only_json():
    assert parse_reply("Here: [1, 3]", Relevance).relevant == [1, 3]


# --- issue #11 item 3: cut-off replies are never used as if complete ------------------------------------------------
class RoomyModel(ScriptedChatModel):
    """A scripted model that, like the agents' call gate, says how large a reply may be (``reply_room``)."""

    def __init__(self, replies, room: int, max_tokens: int = 100) -> None:
        super().__init__(replies, max_tokens=max_tokens)
        self.room = room

    def reply_room(self, messages) -> int:
        return self.room


PROMPT = [{"role": "user", "content": "split it"}]


def cut(text: str, reasoning: str = "") -> ChatResult:
    return ChatResult(text, reasoning=reasoning, finish_reason="length")


def test_a_cut_off_structured_reply_is_asked_again_with_more_room():
    llm = RoomyModel([cut('{"sub_queries": ["receipt upload", "receipt upload dead'),
                      '{"sub_queries": ["receipt upload", "receipt upload deadlines"]}'], room=1000)
    result = ask_structured(llm, PROMPT, Decomposition, Decomposition(sub_queries=["q"]))
    assert result.value.sub_queries == ["receipt upload", "receipt upload deadlines"]
    assert [c.max_tokens for c in llm.history] == [None, 356]  # twice the limit, at least 256 more, within the room
    assert llm.history[1].messages == PROMPT  # the same question, not a correction
    assert result.cut_off and result.cut_action == "retried with more room" and result.max_tokens == 100


def test_without_more_room_the_cut_off_last_item_is_dropped():
    llm = RoomyModel([cut('{"sub_queries": ["receipt upload", "receipt upload dead')], room=100)
    result = ask_structured(llm, PROMPT, Decomposition, Decomposition(sub_queries=["q"]))
    assert result.value.sub_queries == ["receipt upload"]
    assert result.cut_action == "dropped the cut-off last item" and len(llm.history) == 1


def test_still_cut_after_more_room_drops_the_last_item():
    llm = RoomyModel([cut('{"relevant": [1, 2, 1'), cut('{"relevant": [1, 2, 12, 1')], room=150)
    result = ask_structured(llm, PROMPT, Relevance, Relevance(relevant=[]))
    assert result.value.relevant == [1, 2, 12]
    assert result.cut_action == "retried with more room, then dropped the cut-off last item"
    assert llm.history[1].max_tokens == 150


def test_a_cut_off_answer_string_is_not_taken():
    from deepsearcher.agents.replies import Intermediate

    llm = RoomyModel([cut('{"answer": "The contract was signed in 19'),
                      cut('{"answer": "The contract was signed in 19')], room=100)
    result = ask_structured(llm, PROMPT, Intermediate, Intermediate(answer="", supporting=[1]))
    assert result.fell_back and result.value.answer == ""  # never "The contract was signed in 19"
    assert result.cut_off


@pytest.mark.parametrize("finish", ["stop", ""])
def test_a_string_left_open_is_not_taken_whatever_the_finish_reason(finish: str):
    # a helper's reply (2026-12-03): a follow-up cut inside its string, the finish reason "stop" or none, was repaired
    # to "What is the capital of" and searched
    from deepsearcher.agents.replies import IntermediateNext
    from deepsearcher.llm.json_extract import parse_reply

    reply = '{"answer": "Paris", "supporting": [1], "enough": false, "follow_up": "What is the capital of'
    llm = ScriptedChatModel([ChatResult(reply, "", 10, 10, 1, finish)])
    result = ask_structured(llm, PROMPT, IntermediateNext, IntermediateNext(answer="", supporting=[]))
    assert result.value.answer == "Paris" and result.value.supporting == [1]
    assert not result.value.decided()  # the cut follow-up is gone: the agent asks for the next one apart
    # an object left open outside any string keeps what it has: a missing closing brace is a slip, not a cut
    assert parse_reply('{"relevant": [1, 2]', Relevance).relevant == [1, 2]
    assert parse_reply('{"sub_queries": ["a", "b"', Decomposition).sub_queries == ["a", "b"]
    assert parse_reply('{"sub_queries": ["a \\" b", "c', Decomposition).sub_queries == ['a " b']
    single = "{'answer': 'Paris', 'supporting': [1], 'enough': false, 'follow_up': 'What is the capital of"
    assert not parse_reply(single, IntermediateNext).decided()  # single quotes, as json-repair reads them


def test_a_complete_value_before_cut_off_prose_is_kept_whole():
    llm = RoomyModel([cut('{"relevant": [1, 2]} Chunk 3 was off-top')], room=100)
    assert ask_structured(llm, PROMPT, Relevance, Relevance(relevant=[])).value.relevant == [1, 2]


def test_reasoning_that_used_up_the_limit_names_llm_max_tokens():
    llm = RoomyModel([cut("", reasoning="Let me think " * 50), cut("", reasoning="Still thinking " * 50)], room=100)
    result = ask_structured(llm, PROMPT, Decomposition, Decomposition(sub_queries=["q"]))
    assert result.fell_back
    assert result.error == ("the model spent its whole reply (llm.max_tokens = 100 tokens) reasoning and wrote no "
                            "answer; raise llm.max_tokens (reasoning models need several thousand tokens)")


def test_ask_text_reports_a_cut_off_reply():
    llm = ScriptedChatModel([cut("Receipts mu")], max_tokens=64)
    reply = ask_text(llm, PROMPT)
    assert reply.cut_off and reply.text == "Receipts mu" and reply.max_tokens == 64
