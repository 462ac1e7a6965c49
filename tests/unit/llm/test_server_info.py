"""What each server family reports about its model: the context window and a tokenizer (``llm.server_info``).

The servers are answered by httpx's in-process mock transport with the response shapes of each family (vLLM,
llama.cpp's llama-server, llama-cpp-python, Ollama); the real llama-cpp-python server is exercised end to end in
tests/integration/test_llm_server_e2e.py.
"""

from __future__ import annotations

import json
from typing import Callable

import httpx

from deepsearcher.llm.server_info import OLLAMA_DEFAULT_CONTEXT, ServerInfo
from deepsearcher.llm.window import resolve_window

Routes = dict[tuple[str, str], Callable[[dict], httpx.Response]]


def info(routes: Routes, model: str = "m") -> tuple[ServerInfo, list[str]]:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(f"{request.method} {request.url.path}")
        body = json.loads(request.content) if request.content else {}
        answer = routes.get((request.method, request.url.path))
        return answer(body) if answer else httpx.Response(404, text="Not Found")

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return ServerInfo("http://127.0.0.1:8000/v1", model, client=client), asked


def ok(data: object) -> Callable[[dict], httpx.Response]:
    return lambda body: httpx.Response(200, json=data)


def test_vllm_reports_max_model_len_and_counts_tokens():
    server, asked = info({
        ("GET", "/v1/models"): ok({"data": [{"id": "other", "max_model_len": 32768},
                                            {"id": "m", "max_model_len": 8192}]}),
        ("POST", "/tokenize"): lambda body: httpx.Response(200, json={"count": len(body["prompt"].split()),
                                                                      "max_model_len": 8192, "tokens": []}),
    })
    assert server.context_window() == (8192, "server /v1/models max_model_len")
    assert server.count_tokens("three little words") == 3
    assert asked[0] == "GET /v1/models"


def test_llama_server_reports_n_ctx_in_props_and_tokenizes():
    server, _ = info({
        ("GET", "/v1/models"): ok({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]}),
        ("GET", "/props"): ok({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}),
        ("POST", "/tokenize"): lambda body: httpx.Response(200, json={"tokens": list(range(len(body["content"])))}),
    })
    assert server.context_window() == (4096, "server /props n_ctx")  # the running n_ctx, not the training length
    assert server.count_tokens("abcde") == 5


def test_llama_cpp_python_reports_no_window_but_counts_tokens():
    server, _ = info({
        ("GET", "/v1/models"): ok({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "me"}]}),
        ("POST", "/extras/tokenize/count"): lambda body: httpx.Response(200, json={"count": len(body["input"]) // 2}),
    })
    assert server.context_window() is None  # learned from its first refusal instead (Window.learn)
    assert server.count_tokens("abcdefgh") == 4


def test_ollama_num_ctx_or_its_default():
    with_param, _ = info({("POST", "/api/show"): ok({"modelfile": "FROM x", "parameters": "stop <eos>\nnum_ctx 8192"})})
    assert with_param.context_window() == (8192, "Ollama num_ctx")
    without, _ = info({("POST", "/api/show"): ok({"modelfile": "FROM x", "parameters": "stop <eos>"})})
    assert without.context_window()[0] == OLLAMA_DEFAULT_CONTEXT  # type: ignore[index]
    assert without.count_tokens("no tokenizer endpoint") is None


def test_a_server_that_reports_nothing_gives_the_default_window():
    class Model:
        name = "m"

        def context_window(self) -> None:
            return None

    window = resolve_window(Model())
    assert window.size == 8192 and window.source == "default" and not window.exact


def test_hosted_apis_get_their_documented_window_without_a_probe():
    from deepsearcher.llm.openai_compatible import OpenAICompatibleChat
    from deepsearcher.llm.options import OpenAICompatibleLLMOptions

    deepseek = ServerInfo("https://api.deepseek.com/v1", "deepseek-chat",
                          client=httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))))
    assert deepseek.context_window() == (65_536, "api.deepseek.com (documented minimum)")
    openai = OpenAICompatibleChat(OpenAICompatibleLLMOptions(model="gpt-4o-mini"))
    assert openai.context_window() == (128_000, "api.openai.com (documented minimum)")
