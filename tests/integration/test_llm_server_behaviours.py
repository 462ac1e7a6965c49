"""Each local server family's wire behaviour, reproduced by a scripted HTTP server on 127.0.0.1
(``fake_llm_server``), against the real OpenAI-compatible provider: what the server is and how many requests it
serves at once, replies cut off mid-stream, a busy single-slot server, errors inside a 200 stream, replies delivered
in ``reasoning_content``, and JSON that never ends. The real llama-cpp-python server is in
test_llm_server_concurrency.py.
"""

from __future__ import annotations

import json
import logging
import threading

import pytest
from pydantic import BaseModel

from deepsearcher.errors import ContextWindowError, ProviderError
from deepsearcher.llm.output import ask_structured, ask_text
from deepsearcher.llm.openai_compatible import OpenAICompatibleChat
from deepsearcher.llm.options import OpenAICompatibleLLMOptions
from tests.integration.fake_llm_server import (
    CUT_STREAM, FakeLLMServer, Reply, Seen, chunk, completion, full_stream, ok, stream,
)

MSGS = [{"role": "user", "content": "Say hi"}]
LLAMA_CPP_PYTHON_OPENAPI = {"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API", "version": "0.3.16"}}


class Greeting(BaseModel):
    greeting: str
    names: list[str] = []


def provider(server: FakeLLMServer, **options: object) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(OpenAICompatibleLLMOptions(**{"model": "m", "base_url": server.base_url, "api_key_env": None,
                                                       "max_retries": 2, **options}))  # type: ignore[arg-type]


def sink() -> tuple[list[str], object]:
    pieces: list[str] = []
    return pieces, pieces.append


# --- llama-cpp-python: a streamed reply interrupted by the next request ----------------------------------------------
def test_a_cut_stream_is_retried_and_the_server_then_gets_one_request_at_a_time(caplog: pytest.LogCaptureFixture):
    with FakeLLMServer(chats=[Reply(sse=CUT_STREAM), Reply(sse=full_stream("Hello [1]."))]) as server:
        chat = provider(server)
        pieces, on_token = sink()
        with caplog.at_level(logging.WARNING):
            result = chat.chat(MSGS, on_token=on_token)  # type: ignore[arg-type]
    assert (result.text, result.finish_reason, result.attempts) == ("Hello [1].", "stop", 2)
    assert pieces == ["Hello [1]."]
    assert chat.gate.limit == 1
    warnings = [r.getMessage() for r in caplog.records if "cut a streamed reply off" in r.getMessage()]
    assert len(warnings) == 1 and "--interrupt_requests False" in warnings[0]
    assert "context window" not in warnings[0]


def test_cut_streams_under_concurrency_all_complete_and_are_then_serialised(caplog: pytest.LogCaptureFixture):
    # four streamed requests; the first three replies are cut as llama-cpp-python cuts them, the rest are whole
    replies: list[Reply | object] = [Reply(sse=CUT_STREAM)] * 3 + [Reply(sse=full_stream("ok"))]
    with FakeLLMServer(chats=replies) as server:  # type: ignore[arg-type]
        chat = provider(server)
        results: list[str] = []
        errors: list[Exception] = []

        def ask() -> None:
            try:
                results.append(chat.chat(MSGS, on_token=lambda piece: None).text)
            except Exception as exc:  # collected: the test asserts there are none
                errors.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        later = server.chat_requests[4:]  # the retries: each sent after a cut lowered the gate to one
    assert not errors and results == ["ok"] * 4
    assert chat.gate.limit == 1
    assert all(s.in_flight == 1 for s in later), [s.in_flight for s in later]
    assert sum("cut a streamed reply off" in r.getMessage() for r in caplog.records) == 1


def test_llama_cpp_python_is_recognised_up_front_and_sent_one_request_at_a_time():
    with FakeLLMServer(routes={("GET", "/openapi.json"): ok(LLAMA_CPP_PYTHON_OPENAPI)},
                       chats=[Reply(body=completion("hi"))]) as server:
        chat = provider(server)
        assert chat.chat(MSGS).text == "hi"
    assert chat.gate.limit == 1
    assert chat.server_info is not None and chat.server_info.identify().name == "llama-cpp-python"


def test_a_cut_stream_with_a_prompt_near_the_window_is_a_context_window_error():
    props = {"default_generation_settings": {"n_ctx": 600}, "total_slots": 4}
    with FakeLLMServer(routes={("GET", "/props"): ok(props)}, chats=[Reply(sse=CUT_STREAM)]) as server:
        chat = provider(server)
        long_prompt = [{"role": "user", "content": "word " * 500}]  # ~625 estimated tokens in a 600-token window
        with pytest.raises(ContextWindowError, match="near the model's 600-token context window"):
            chat.chat(long_prompt, on_token=lambda piece: None)
        assert len(server.chat_requests) == 1  # not retried: the same prompt would overflow again
    assert chat.gate.limit == 4  # llama-server's slots, not lowered to 1


def test_a_cut_stream_every_time_names_the_interruption_not_the_window():
    with FakeLLMServer(chats=[Reply(sse=CUT_STREAM)]) as server:
        chat = provider(server, max_retries=1)
        with pytest.raises(ProviderError) as err:
            chat.chat(MSGS, on_token=lambda piece: None)
        assert len(server.chat_requests) == 2
    assert not isinstance(err.value, ContextWindowError)
    assert "cut the streamed reply off" in str(err.value) and "--interrupt_requests False" in str(err.value.hint)


# --- llama.cpp's llama-server: slots and window ----------------------------------------------------------------------
def test_llama_server_slots_bound_the_requests_sent_at_once():
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 2}
    with FakeLLMServer(routes={("GET", "/props"): ok(props)}, chats=[Reply(body=completion("hi"))]) as server:
        chat = provider(server)
        chat.chat(MSGS)
        assert chat.context_window() == (8192, "server /props n_ctx")
    kind = chat.server_info.identify()  # type: ignore[union-attr]
    assert (kind.name, kind.slots, chat.gate.limit) == ("llama.cpp", 2, 2)


# --- a busy single-slot server ----------------------------------------------------------------------------------------
def test_a_busy_server_is_waited_for_and_said_to_be_busy(caplog: pytest.LogCaptureFixture):
    second = threading.Event()

    def first(seen: Seen) -> Reply:  # held until the client has given up on it and asked again
        return Reply(body=completion("late"), wait=second)

    def again(seen: Seen) -> Reply:
        second.set()
        return Reply(body=completion("hi"))

    with FakeLLMServer(chats=[first, again]) as server:  # type: ignore[list-item]
        chat = provider(server, timeout_s=0.5, max_retries=1)
        with caplog.at_level(logging.WARNING):
            result = chat.chat(MSGS)
    assert (result.text, result.attempts) == ("hi", 2)
    assert any("is busy: it accepted the connection" in r.getMessage() for r in caplog.records)


def test_a_server_busy_past_every_retry_says_busy_not_unreachable():
    release = threading.Event()
    with FakeLLMServer(chats=[Reply(body=completion("late"), wait=release)]) as server:
        chat = provider(server, timeout_s=0.3, max_retries=0)
        try:
            with pytest.raises(ProviderError) as err:
                chat.chat(MSGS)
        finally:
            release.set()
    assert "is busy: it accepted the connection but sent no reply within llm.timeout_s = 0.3 s" in str(err.value)
    assert "cannot reach" not in str(err.value)


def test_check_on_a_busy_server_warns_instead_of_failing(caplog: pytest.LogCaptureFixture):
    release = threading.Event()
    with FakeLLMServer(routes={("GET", "/v1/models"): lambda seen: Reply(body={"data": []}, wait=release)}) as server:
        chat = provider(server)
        try:
            with caplog.at_level(logging.WARNING):
                chat.check(timeout_s=0.3)
        finally:
            release.set()
    assert any("is busy" in r.getMessage() and "GET /models" in r.getMessage() for r in caplog.records)


def test_a_closed_port_is_unreachable():
    with FakeLLMServer() as server:
        url = server.base_url
    chat = OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="m", base_url=url, api_key_env=None, max_retries=0))
    with pytest.raises(ProviderError, match="cannot reach the LLM server"):
        chat.check(timeout_s=2)


# --- errors inside a 200 stream (llama.cpp's wire shapes) -----------------------------------------------------------
EXCEED = {"code": 400, "message": "the request exceeds the available context size, try increasing it",
          "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}


@pytest.mark.parametrize("raw", [
    f"data: {json.dumps({'error': EXCEED})}\n\n",  # llama-server 2025
    f"error: {json.dumps({'error': EXCEED})}\n\n",  # llama-server before: an `error:` line the SDK's parser drops
    f"event: error\ndata: {json.dumps(EXCEED)}\n\n",  # an SSE error event
])
def test_in_stream_context_errors_name_the_window(raw: str):
    with FakeLLMServer(chats=[Reply(sse=stream(chunk(role="assistant"), raw=raw, done=False))]) as server:
        chat = provider(server)
        with pytest.raises(ContextWindowError, match="exceeds the available context size") as err:
            chat.chat(MSGS, on_token=lambda piece: None)
    assert err.value.limit == 4096


def test_an_in_stream_error_string_is_reported_in_the_servers_words():
    raw = f"data: {json.dumps({'error': 'slot unavailable'})}\n\n"
    with FakeLLMServer(chats=[Reply(sse=stream(raw=raw, done=False))]) as server:
        with pytest.raises(ProviderError, match="reported an error inside its reply: slot unavailable"):
            provider(server).chat(MSGS, on_token=lambda piece: None)


# --- vLLM and other reasoning parsers: the reply in reasoning_content ----------------------------------------------
def test_a_json_reply_delivered_in_reasoning_content_is_used():
    vllm_models = {"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 4096}]}
    with FakeLLMServer(routes={("GET", "/v1/models"): ok(vllm_models)},
                       chats=[Reply(body=completion("", reasoning='{"greeting": "hi", "names": ["Ada"]}'))]) as server:
        chat = provider(server)
        got = ask_structured(chat, MSGS, Greeting, Greeting(greeting="fallback"))
        assert len(server.chat_requests) == 1
    assert not got.fell_back and got.value == Greeting(greeting="hi", names=["Ada"])
    assert chat.server_info.identify().name == "vllm"  # type: ignore[union-attr]


def test_a_text_reply_delivered_in_reasoning_is_the_answer():
    with FakeLLMServer(chats=[Reply(sse=stream(chunk(role="assistant", content=""),
                                               chunk(reasoning_content="Milvus Lite is embedded [1]."),
                                               chunk(finish="stop")))]) as server:
        reply = ask_text(provider(server), MSGS, on_token=lambda piece: None)
    assert reply.text == "Milvus Lite is embedded [1]."


# --- JSON replies that never end ----------------------------------------------------------------------------------
def test_every_list_in_the_schema_sent_is_bounded_and_trailing_whitespace_is_not_a_cut():
    reply = completion('{"greeting": "hi", "names": ["a"]}' + "\n" * 200, finish="length")
    with FakeLLMServer(chats=[Reply(body=reply)]) as server:
        got = ask_structured(provider(server), MSGS, Greeting, Greeting(greeting="fallback"))
        sent = server.chat_requests[0].body
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["names"]["maxItems"] == 50
    assert got.value == Greeting(greeting="hi", names=["a"]) and not got.fell_back and not got.cut_off
    assert len(server.chat_requests) == 1  # a complete object is not asked again with more room


# --- Ollama: the window the model is loaded with; prompts it cuts silently -----------------------------------------
def ollama_routes(loaded_ctx: int) -> dict:
    return {("GET", "/api/version"): ok({"version": "0.6.2"}),
            ("GET", "/v1/models"): ok({"object": "list", "data": [{"id": "m", "object": "model",
                                                                  "owned_by": "library"}]}),
            ("GET", "/api/ps"): ok({"models": [{"name": "m", "model": "m", "context_length": loaded_ctx}]}),
            ("POST", "/api/show"): ok({"modelfile": "FROM m", "parameters": "num_ctx 2048"})}


def test_ollama_window_is_the_loaded_one_and_a_silent_cut_is_said(caplog: pytest.LogCaptureFixture):
    with FakeLLMServer(routes=ollama_routes(8192), chats=[Reply(body=completion("hi"))]) as server:
        chat = provider(server)
        assert chat.context_window() == (8192, "Ollama /api/ps context_length (the window the model is loaded with)")
        with caplog.at_level(logging.WARNING):
            chat.chat([{"role": "user", "content": "word " * 500}])  # ~625 tokens; the server counted 10
    assert chat.server_info.identify().name == "ollama"  # type: ignore[union-attr]
    said = [r.getMessage() for r in caplog.records if "Ollama" in r.getMessage()]
    assert len(said) == 1 and "read only 10 tokens of a prompt of ~625" in said[0]
    assert "OLLAMA_CONTEXT_LENGTH" in said[0]


def test_text_shown_before_a_cut_is_not_shown_twice():
    cut_midway = stream(chunk(role="assistant"), chunk(content="Milvus "))  # [DONE] with no finish reason
    with FakeLLMServer(chats=[Reply(sse=cut_midway), Reply(sse=full_stream("Milvus Lite is embedded."))]) as server:
        pieces, on_token = sink()
        result = provider(server).chat(MSGS, on_token=on_token)  # type: ignore[arg-type]
    assert result.text == "Milvus Lite is embedded." and "".join(pieces) == "Milvus Lite is embedded."
