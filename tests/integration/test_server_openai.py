"""The OpenAI-compatible endpoint driven by the real ``openai`` SDK: uvicorn on 127.0.0.1, Milvus Lite in tmp, a
scripted LLM, a hash embedder."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need the extra `server` (pip install -e '.[server]')")
openai = pytest.importorskip("openai", reason="the OpenAI-compatible endpoint test needs the `openai` SDK")

import httpx  # noqa: E402

from deepsearcher.settings import load_settings  # noqa: E402
from tests.integration.server_support import (  # noqa: E402
    ANSWER, QUESTION, HashEmbedder, LiveServer, scripted_llm, write_corpus,
)

pytestmark = pytest.mark.integration
TOKEN = "chat-endpoint-test-token"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    """A server with a token (loopback servers require one when it is set), docs loaded into ``docs``."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    root = tmp_path_factory.mktemp("openai")
    allowed, _ = write_corpus(root)
    settings = load_settings(None, {
        "vector_db": {"uri": str(root / "milvus.db")}, "llm": None,
        "query": {"max_iter": 1, "agent": "deep_search"},
        "server": {"allowed_roots": [str(allowed)], "token_env": "DS_CHAT_TEST_TOKEN"},
    })
    mp = pytest.MonkeyPatch()
    mp.setenv("DS_CHAT_TEST_TOKEN", TOKEN)
    llm = scripted_llm(threading.Event())
    searcher = DeepSearcher(settings, llm=llm, embedder=HashEmbedder(64, "test-hash-64"))
    try:
        with LiveServer(create_app(settings, searcher=searcher)) as server:
            reply = httpx.post(f"{server.url}/api/load", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60,
                               json={"inputs": [str(allowed / "docs")], "collection": "docs",
                                     "description": "Notes on Milvus and RAG"})
            assert reply.status_code == 200, reply.text
            yield server.url, llm
    finally:
        mp.undo()
        searcher.close()


def client(url: str, key: str = TOKEN) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=60)


def assert_cited_report(markdown: str) -> None:
    assert markdown.startswith(f"# {QUESTION}\n")
    assert ANSWER in markdown  # the answer with its [1] citations
    assert "## Sources" in markdown and "milvus.md" in markdown.split("## Sources", 1)[1]


def test_models_lists_one_model_per_agent(live: tuple[str, Any]) -> None:
    ids = [model.id for model in client(live[0]).models.list()]
    assert ids[0] == "deepsearcher"
    assert {"deepsearcher-deep_search", "deepsearcher-naive", "deepsearcher-deep_research"} <= set(ids)


def test_chat_completion_returns_the_cited_report_and_the_steps_as_reasoning(live: tuple[str, Any]) -> None:
    completion = client(live[0]).chat.completions.create(
        model="deepsearcher-deep_search", messages=[{"role": "user", "content": QUESTION}])
    message = completion.choices[0].message
    assert completion.object == "chat.completion" and completion.choices[0].finish_reason == "stop"
    assert_cited_report(message.content)
    reasoning = message.model_extra["reasoning_content"]
    assert "Agent: deep_search (chosen by llm)" in reasoning or "Agent: deep_search" in reasoning
    assert f"• {QUESTION}" in reasoning  # the round's sub-query, as the CLI prints it
    assert completion.usage.total_tokens > 0


def test_streamed_chat_sends_reasoning_deltas_then_the_report(live: tuple[str, Any]) -> None:
    stream = client(live[0]).chat.completions.create(
        model="deepsearcher-deep_search", messages=[{"role": "user", "content": QUESTION}], stream=True)
    chunks = list(stream)
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    deltas = [chunk.choices[0].delta for chunk in chunks]
    reasoning = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    content = "".join(d.content or "" for d in deltas)
    first_content = next(i for i, d in enumerate(deltas) if d.content)
    last_reasoning = max(i for i, d in enumerate(deltas) if (d.model_extra or {}).get("reasoning_content"))
    assert last_reasoning < first_content  # the steps come first, as "thinking"
    assert f"• {QUESTION}" in reasoning
    assert_cited_report(content)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_stream_ends_with_done(live: tuple[str, Any]) -> None:
    with httpx.stream("POST", f"{live[0]}/v1/chat/completions", headers={"Authorization": f"Bearer {TOKEN}"},
                      json={"model": "deepsearcher", "stream": True,
                            "messages": [{"role": "user", "content": QUESTION}]}, timeout=60) as response:
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert response.status_code == 200
    assert data[-1] == "[DONE]" and '"finish_reason": "stop"' in data[-2]


def test_earlier_messages_reach_the_agent_as_context(live: tuple[str, Any]) -> None:
    url, llm = live
    before = len(llm.prompts)
    client(url).chat.completions.create(model="deepsearcher-deep_search", messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Tell me about vector databases."},
        {"role": "assistant", "content": "Milvus is one [1].\n\n## Sources\n\n- /docs/milvus.md: [1]"},
        {"role": "user", "content": "Und auf Deutsch?"},
        {"role": "assistant", "content": "Milvus ist eine [1].\n\n## Quellen\n\n- /docs/vektor.md: [1]"},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]}])
    decompose = next(p for p in llm.prompts[before:] if p.startswith("Break the question"))
    assert QUESTION in decompose
    assert "Earlier in this conversation" in decompose
    assert "User: Tell me about vector databases." in decompose
    assert "Assistant: Milvus is one [1]." in decompose and "/docs/milvus.md" not in decompose
    assert "Assistant: Milvus ist eine [1]." in decompose and "/docs/vektor.md" not in decompose  # any language
    assert "You are helpful" not in decompose


def test_refusals_use_the_api_rules(live: tuple[str, Any]) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(live[0], key="wrong").chat.completions.create(
            model="deepsearcher", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.NotFoundError, match="deepsearcher-deep_search"):
        client(live[0]).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.UnprocessableEntityError, match="no user message"):
        client(live[0]).chat.completions.create(model="deepsearcher",
                                                messages=[{"role": "system", "content": "hi"}])
