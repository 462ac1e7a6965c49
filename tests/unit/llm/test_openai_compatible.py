"""The OpenAI-compatible provider against an in-process mock transport: retries, refused parameters, reasoning,
usage, streaming and error messages (no network)."""

from __future__ import annotations

import json
from typing import Callable

import httpx
import pytest
from openai import OpenAI
from pydantic import BaseModel, ValidationError

from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.llm.openai_compatible import OpenAICompatibleChat
from deepsearcher.llm.options import OpenAICompatibleLLMOptions
from deepsearcher.llm.server_info import ServerGate
from deepsearcher.types import StopReply

MSGS = [{"role": "user", "content": "Say hi in JSON"}]


class Reply(BaseModel):
    greeting: str


def completion(content: str, reasoning: str | None = None, usage: dict | None = None) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage is not None:
        body["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return body


def provider(handler: Callable[[httpx.Request], httpx.Response], **options: object) -> tuple[OpenAICompatibleChat,
                                                                                             list[dict]]:
    """A provider whose HTTP goes to ``handler``; returns it and the list of JSON bodies it sent."""
    sent: list[dict] = []

    def record(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/chat/completions"):
            sent.append(json.loads(request.content))
        return handler(request)

    chat = OpenAICompatibleChat(OpenAICompatibleLLMOptions(**{"model": "m", "base_url": "http://127.0.0.1:9/v1",
                                                              "max_retries": 2, **options}))  # type: ignore[arg-type]
    chat._client = OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0,
                          http_client=httpx.Client(transport=httpx.MockTransport(record)))
    chat.gate = ServerGate()  # not the process-wide gate of 127.0.0.1:9, which another test may have lowered
    return chat, sent


def queue(*responses: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    pending = list(responses)
    return lambda request: pending.pop(0)


NOW = {"retry-after": "0"}  # keeps the backoff instant in tests


def test_json_schema_request_reasoning_and_usage():
    chat, sent = provider(queue(httpx.Response(200, json=completion(
        '{"greeting": "hi"}', reasoning="think first", usage={"prompt_tokens": 12, "completion_tokens": 5}))))
    result = chat.chat(MSGS, schema=Reply)
    assert (result.text, result.reasoning, result.prompt_tokens, result.completion_tokens, result.attempts) == (
        '{"greeting": "hi"}', "think first", 12, 5, 1)
    fmt = sent[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Reply"
    assert fmt["json_schema"]["schema"]["required"] == ["greeting"]
    assert sent[0]["max_tokens"] == 4096 and sent[0]["temperature"] == 0.1


def test_retries_429_and_5xx_then_succeeds_counting_attempts():
    chat, sent = provider(queue(httpx.Response(429, headers=NOW, json={"error": {"message": "slow down"}}),
                                httpx.Response(503, headers=NOW, json={"error": {"message": "busy"}}),
                                httpx.Response(200, json=completion("ok"))))
    result = chat.chat(MSGS)
    assert result.text == "ok" and result.attempts == 3 and len(sent) == 3


def test_gives_up_after_max_retries_with_a_message():
    chat, sent = provider(lambda r: httpx.Response(500, headers=NOW, json={"error": {"message": "boom"}}),
                          max_retries=1)
    with pytest.raises(ProviderError, match="answered 500: boom"):
        chat.chat(MSGS)
    assert len(sent) == 2


def test_refused_json_schema_is_retried_without_it_and_remembered():
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        fmt = body.get("response_format")
        if fmt and fmt["type"] == "json_schema":
            return httpx.Response(400, json={"error": {"message": "response_format type json_schema is unavailable"}})
        if fmt and fmt["type"] == "json_object":
            return httpx.Response(400, json={"error": {"message": "This response_format type is unavailable now"}})
        return httpx.Response(200, json=completion('{"greeting": "hi"}'))

    chat, sent = provider(handler)
    assert chat.chat(MSGS, schema=Reply).text == '{"greeting": "hi"}'
    assert [b.get("response_format", {}).get("type") for b in sent] == ["json_schema", "json_object", None]
    chat.chat(MSGS, schema=Reply)
    assert "response_format" not in sent[-1] and len(sent) == 4  # remembered: no second refusal


def test_llama_cpp_python_500_validation_error_downgrades_to_json_object_with_schema():
    detail = ("1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
              "'msg': \"Input should be 'text' or 'json_object'\"}")

    def handler(request: httpx.Request) -> httpx.Response:
        fmt = json.loads(request.content).get("response_format", {})
        if fmt.get("type") == "json_schema":
            return httpx.Response(500, json={"error": {"message": detail}})
        return httpx.Response(200, json=completion('{"greeting": "hi"}'))

    chat, sent = provider(handler)
    chat.chat(MSGS, schema=Reply)
    assert len(sent) == 2  # not retried as a transient 500
    assert sent[1]["response_format"]["type"] == "json_object"
    assert sent[1]["response_format"]["schema"]["required"] == ["greeting"]


def test_a_400_that_is_not_a_refusal_is_not_remembered():
    chat, sent = provider(lambda r: httpx.Response(400, json={"error": {"message": "context length exceeded"}}))
    with pytest.raises(ProviderError, match="context length exceeded"):
        chat.chat(MSGS, schema=Reply)
    assert chat._format_level == 0


def test_max_tokens_renamed_for_reasoning_models():
    def handler(request: httpx.Request) -> httpx.Response:
        if "max_tokens" in json.loads(request.content):
            return httpx.Response(400, json={"error": {"message": "Unsupported parameter: 'max_tokens' is not "
                                                                  "supported with this model. Use "
                                                                  "'max_completion_tokens' instead."}})
        return httpx.Response(200, json=completion("ok"))

    chat, sent = provider(handler)
    chat.chat(MSGS)
    assert sent[-1]["max_completion_tokens"] == 4096 and "max_tokens" not in sent[-1]


def test_json_schema_never_sends_no_format():
    chat, sent = provider(queue(httpx.Response(200, json=completion("{}"))), json_schema="never")
    chat.chat(MSGS, schema=Reply)
    assert "response_format" not in sent[0]


def test_usage_is_estimated_when_the_server_sends_none():
    chat, _ = provider(queue(httpx.Response(200, json=completion("12345678"))))
    result = chat.chat([{"role": "user", "content": "abcdefgh"}])
    assert (result.prompt_tokens, result.completion_tokens) == (2, 2)


def sse(*chunks: dict) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def delta(**d: object) -> dict:
    return {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": d, "finish_reason": None}]}


def test_streaming_passes_content_and_collects_reasoning_and_usage():
    chat, sent = provider(queue(sse(delta(role="assistant", reasoning_content="let me "),
                                    delta(reasoning_content="think"), delta(content="Hello "),
                                    delta(content="[1]."),
                                    {**delta(), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                                    {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                                     "choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 4,
                                                              "total_tokens": 34}})))
    pieces: list[str] = []
    result = chat.chat(MSGS, on_token=pieces.append)
    assert pieces == ["Hello ", "[1]."]
    assert (result.text, result.reasoning, result.prompt_tokens, result.completion_tokens) == (
        "Hello [1].", "let me think", 30, 4)
    assert sent[0]["stream"] is True and sent[0]["stream_options"] == {"include_usage": True}


def test_a_reply_the_callback_stops_returns_the_text_so_far_with_no_retry():
    chat, sent = provider(queue(sse(*(delta(content=f"w{n} ") for n in range(50)))))

    def stop_at_three(piece: str) -> None:
        if piece == "w2 ":
            raise StopReply("enough")

    result = chat.chat(MSGS, on_token=stop_at_three)
    assert (result.text, result.finish_reason, result.attempts, len(sent)) == ("w0 w1 w2 ", "stop", 1, 1)


def test_auth_error_names_the_key_variable():
    chat, _ = provider(lambda r: httpx.Response(401, json={"error": {"message": "invalid api key"}}),
                       api_key_env="DEEPSEEK_API_KEY")
    with pytest.raises(ProviderError) as err:
        chat.chat(MSGS)
    assert "rejected the API key (invalid api key)" in str(err.value)
    assert "DEEPSEEK_API_KEY" in str(err.value.hint)


def test_unknown_model_says_so():
    chat, _ = provider(lambda r: httpx.Response(404, json={"error": {"message": "model not found"}}))
    with pytest.raises(ProviderError, match="has no model 'm'"):
        chat.chat(MSGS)


def test_check_reports_unreachable_server():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    chat, _ = provider(refuse)
    with pytest.raises(ProviderError) as err:
        chat.check()
    assert "cannot reach the LLM server at http://127.0.0.1:9/v1: [Errno 111] Connection refused" in str(err.value)
    assert "llm.base_url" in str(err.value.hint)


@pytest.mark.parametrize("base_url, error, hint", [
    ("https://api.openai.com/v1", "[Errno -2] Name or service not known",
     "the host name api.openai.com did not resolve: check this machine's network connection, DNS and proxy"),
    ("https://llm.example.org/v1", "[Errno 111] Connection refused",
     "check this machine's network connection, DNS and proxy (HTTPS_PROXY), and llm.base_url"),
    ("http://localhost:8080/v1", "[Errno 111] Connection refused", "start the server or fix llm.base_url"),
])
def test_an_unreachable_hosted_api_gets_the_network_hint_not_start_the_server(base_url: str, error: str, hint: str):
    # found by a new user: a bogus key, no internet: "start the server" for api.openai.com failing its DNS lookup
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(error, request=request)

    chat, _ = provider(fail, base_url=base_url)
    with pytest.raises(ProviderError) as err:
        chat.check()
    assert f"cannot reach the LLM server at {base_url}: {error}" in str(err.value)
    assert (err.value.hint or "").startswith(hint) and "docs/llm-providers.md" in (err.value.hint or "")


@pytest.mark.parametrize("base_url", ["127.0.0.1:9/v1", "localhost:8080/v1", "api.openai.com/v1"])
def test_a_base_url_without_its_scheme_is_a_config_error(base_url: str):
    with pytest.raises(ValidationError, match="must start with http:// or https://"):
        OpenAICompatibleLLMOptions(model="m", base_url=base_url)


def test_check_passes_when_models_endpoint_is_missing():
    chat, _ = provider(lambda r: httpx.Response(404, json={"error": {"message": "no such route"}}))
    chat.check()


def test_openai_without_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat = OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="gpt-4o-mini"))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        chat.check()
    monkeypatch.setenv("OPENAI_API_KEY", "")  # exported but empty: said so, not "not set"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is empty"):
        OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="gpt-4o-mini")).check()


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat = OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="x", base_url="http://127.0.0.1:8080/v1"))
    assert chat.client.api_key == "not-needed"


def test_stream_closed_with_no_output_is_a_cut_not_a_context_window_error():
    # a short prompt and no known window: a cut reply (llama-cpp-python interrupts one when another request
    # arrives), retried, never blamed on the context window
    from deepsearcher.errors import ContextWindowError

    chat, sent = provider(lambda request: sse())
    with pytest.raises(ProviderError, match="cut the streamed reply off") as err:
        chat.chat(MSGS, on_token=lambda piece: None)
    assert not isinstance(err.value, ContextWindowError) and len(sent) == 3


def test_context_length_400_is_a_context_window_error():
    from deepsearcher.errors import ContextWindowError

    body = {"error": {"message": "This model's maximum context length is 8192 tokens", "code":
                      "context_length_exceeded"}}
    chat, sent = provider(lambda r: httpx.Response(400, json=body))
    with pytest.raises(ContextWindowError, match="maximum context length") as err:
        chat.chat(MSGS, schema=Reply)
    assert err.value.limit == 8192  # the agents fit the next prompt to it (#11)
    assert len(sent) == 1  # not mistaken for a refused response_format and sent again


def test_max_tokens_per_call_and_schema_field_descriptions_are_sent():
    from deepsearcher.agents.replies import Relevance

    chat, sent = provider(queue(httpx.Response(200, json=completion('{"relevant": [1]}'))))
    chat.chat(MSGS, schema=Relevance, max_tokens=300)
    assert sent[0]["max_tokens"] == 300
    schema = sent[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["relevant"]["description"].startswith("The numbers of the helpful chunks")


def test_finish_reason_length_is_returned():
    body = completion('{"sub_queries": ["a", "b')
    body["choices"][0]["finish_reason"] = "length"
    chat, _ = provider(queue(httpx.Response(200, json=body)))
    assert chat.chat(MSGS).cut_off


def test_a_configured_context_window_wins_over_the_server():
    chat = OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="m", base_url="http://127.0.0.1:9/v1",
                                                           context_window=2048))
    assert chat.context_window() == (2048, "llm.context_window")
    assert chat.max_tokens == 4096


def test_concurrent_refusals_step_the_format_down_once():
    # the sub-queries of a round call at once (#11): two refusals of json_schema must not skip json_object
    import threading

    both = threading.Barrier(2, timeout=60)  # the bound only ends a failure (calls that never overlap)

    def handler(request: httpx.Request) -> httpx.Response:
        fmt = json.loads(request.content).get("response_format")
        if fmt and fmt["type"] == "json_schema":
            both.wait()
            return httpx.Response(400, json={"error": {"message": "response_format json_schema is unavailable"}})
        return httpx.Response(200, json=completion('{"greeting": "hi"}'))

    chat, sent = provider(handler)
    threads = [threading.Thread(target=chat.chat, args=(MSGS,), kwargs={"schema": Reply}) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(b.get("response_format", {}).get("type") or "none" for b in sent) == [
        "json_object", "json_object", "json_schema", "json_schema"]
