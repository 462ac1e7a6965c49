"""The MCP server driven by the official SDK's own client: ``deepsearcher mcp`` as a subprocess over stdio (its LLM
and embedder a scripted OpenAI-compatible server on 127.0.0.1), and ``/mcp`` on the served app over Streamable HTTP
(a scripted LLM in process), including a refused call without the token off loopback."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the MCP tests need the extra `mcp` (pip install -e '.[mcp]')")
pytest.importorskip("fastapi", reason="the MCP-over-HTTP test needs the extra `server`")

from mcp import Client, StdioServerParameters  # noqa: E402

from deepsearcher.settings import load_settings  # noqa: E402
from tests.integration.scripted_openai import ScriptedOpenAI, subprocess_config  # noqa: E402
from tests.integration.server_support import (  # noqa: E402
    ANSWER, QUESTION, HashEmbedder, LiveServer, scripted_llm, write_corpus,
)

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TOKEN = "mcp-test-token-0123456789"


def run(coro_fn: Any) -> Any:
    return anyio.run(coro_fn)


def assert_report(result: Any) -> None:
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["question"] == QUESTION and data["agent"] == "deep_search"
    assert data["answer"] == ANSWER and data["citations"] == [1]
    assert data["sources"][0]["number"] == 1 and data["sources"][0]["source"].endswith("milvus.md")
    assert "embedded edition of the Milvus vector database" in data["sources"][0]["text"]
    assert data["report_markdown"].startswith(f"# {QUESTION}") and "## Sources" in data["report_markdown"]


# --- stdio: `deepsearcher mcp` in its own process ------------------------------------------------------------------
@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StdioServerParameters, Path, Path,
                                                                            ScriptedOpenAI]]:
    root = tmp_path_factory.mktemp("mcp_stdio")
    allowed, outside = write_corpus(root)
    with ScriptedOpenAI() as api:
        cfg = root / "config.yaml"
        cfg.write_text(subprocess_config(api, str(root / "milvus.db"), str(allowed)), encoding="utf-8")
        env = {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
        params = StdioServerParameters(command=sys.executable, env=env, cwd=str(root),
                                       args=["-m", "deepsearcher.cli", "--config", str(cfg), "mcp"])
        yield params, allowed, outside, api


def test_stdio_lists_tools_loads_retrieves_and_researches(stdio_server: Any) -> None:
    params, allowed, outside, api = stdio_server
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def session() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            loaded = await client.call_tool("load", {"inputs": [str(allowed / "docs")], "collection": "docs",
                                                     "description": "Notes on Milvus and RAG"})
            refused = await client.call_tool("load", {"inputs": [str(outside / "secret.txt")]})
            listed = await client.call_tool("list_collections", {})
            hits = await client.call_tool("retrieve", {"query": "embedded Milvus in one local file", "top_k": 2})
            only_rag = await client.call_tool("retrieve", {"query": "embedded Milvus in one local file", "top_k": 2,
                                                           "where": {"paths": ["*rag.md"]}})
            report = await client.call_tool("query", {"question": QUESTION, "agent": "deep_search"},
                                            progress_callback=on_progress)
            missing = await client.call_tool("query", {"question": QUESTION, "collections": ["nope"]})
            one = await client.call_tool("retrieve", {"query": "Milvus", "top_k": True})  # lax pydantic: 1 chunk
            return {"tools": tools, "loaded": loaded, "refused": refused, "listed": listed, "hits": hits,
                    "report": report, "missing": missing, "only_rag": only_rag, "one": one}

    out = run(session)
    tools = out["tools"]
    assert set(tools) == {"list_collections", "retrieve", "query", "load"}
    schema = tools["retrieve"].input_schema
    assert schema["required"] == ["query"] and schema["properties"]["top_k"]["maximum"] == 100
    assert "description" in schema["properties"]["query"] and tools["query"].output_schema is not None
    assert "citations" in tools["query"].output_schema["properties"]

    files = {Path(f["source"]).name: f["status"] for f in out["loaded"].structured_content["files"]}
    assert files == {"milvus.md": "loaded", "rag.md": "loaded"}  # the symlink out of the roots is not read
    assert out["refused"].is_error and "is outside the folders this server may read" in \
        out["refused"].content[0].text and str(allowed) in out["refused"].content[0].text
    assert out["listed"].structured_content["collections"] == [
        {"name": "docs", "description": "Notes on Milvus and RAG", "chunk_count": 2, "embedding_model": "hash-64"}]

    assert out["one"].is_error and "top_k" in out["one"].content[0].text, out["one"]  # a boolean is no number
    chunks = out["hits"].structured_content["chunks"]
    assert [c["rank"] for c in chunks] == [1, 2] and chunks[0]["source"].endswith("milvus.md")
    # where in the document (#23): the file, then its heading path
    assert chunks[0]["location"].startswith(chunks[0]["source"] + " › ") and chunks[0]["score"] >= chunks[1]["score"]

    # a filter (#23) keeps retrieve to the chunks it admits
    filtered = out["only_rag"].structured_content["chunks"]
    assert filtered and all(c["source"].endswith("rag.md") for c in filtered), filtered

    assert_report(out["report"])
    messages = [m for _, m in progress]
    assert [v for v, _ in progress] == list(range(1, len(progress) + 1))
    assert "Agent: deep_search (chosen by config)" in messages and f"Round 1: searching\n• {QUESTION}" in messages
    assert any(p.startswith("Answer the question below") and QUESTION in p for p in api.prompts)  # the model really wrote it

    missing = out["missing"]
    assert missing.is_error and "nope" in missing.content[0].text and "hint:" in missing.content[0].text


# --- Streamable HTTP: /mcp on the served app -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def http_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app as served off loopback (host 0.0.0.0 in its settings: the token is required, no Host check), listening
    on 127.0.0.1 for the test."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    root = tmp_path_factory.mktemp("mcp_http")
    allowed, _ = write_corpus(root)
    settings = load_settings(None, {
        "vector_db": {"uri": str(root / "milvus.db")}, "llm": None,
        "query": {"max_iter": 1, "agent": "deep_search"},
        "server": {"host": "0.0.0.0", "allowed_roots": [str(allowed)], "token_env": "DS_MCP_TEST_TOKEN"},
    })
    mp = pytest.MonkeyPatch()
    mp.setenv("DS_MCP_TEST_TOKEN", TOKEN)
    searcher = DeepSearcher(settings, llm=scripted_llm(threading.Event()), embedder=HashEmbedder(64, "test-hash-64"))
    try:
        searcher.load([str(allowed / "docs")], "docs", "Notes on Milvus and RAG")
        app = create_app(settings, searcher=searcher)
        assert not app.state.service.policy.loopback
        with LiveServer(app) as server:
            yield f"{server.url}/mcp"
    finally:
        mp.undo()
        searcher.close()


def http_client(url: str, token: str | None) -> Client:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)),
                  read_timeout_seconds=120)


def test_http_tools_with_the_token(http_site: str) -> None:
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def session() -> tuple[set[str], Any, Any]:
        async with http_client(http_site, TOKEN) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            hits = await client.call_tool("retrieve", {"query": "Milvus Lite local file", "top_k": 1})
            report = await client.call_tool("query", {"question": QUESTION}, progress_callback=on_progress)
            return names, hits, report

    names, hits, report = run(session)
    assert names == {"list_collections", "retrieve", "query"}  # load is off over HTTP (server.mcp_load)
    assert hits.structured_content["chunks"][0]["source"].endswith("milvus.md")
    assert_report(report)
    assert f"Round 1: searching\n• {QUESTION}" in progress


def test_http_refuses_a_call_without_the_token(http_site: str) -> None:
    import httpx

    async def session() -> None:
        async with http_client(http_site, None) as client:
            await client.call_tool("retrieve", {"query": "Milvus"})

    from mcp.shared.exceptions import MCPError

    with pytest.raises(BaseException) as caught:  # the SDK client raises the refusal inside its task group
        run(session)
    assert caught.group_contains(MCPError, match="error response", depth=None) \
        if isinstance(caught.value, BaseExceptionGroup) else isinstance(caught.value, MCPError)
    raw = httpx.post(http_site, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"Accept": "application/json, text/event-stream"})
    assert raw.status_code == 401 and raw.json()["detail"] == "missing bearer token"
    assert raw.headers["www-authenticate"] == "Bearer"
