"""A key goes only to the service it belongs to (issue #21, low finding; the ``default_key`` check of
``../shared/cases/security3/secrets_probes.sh``): with ``llm.base_url`` on another server and ``llm.api_key_env``
left unset, ``deepsearcher query`` (the real CLI, a real OpenAI-compatible HTTP server on 127.0.0.1, Milvus Lite)
sends no ``$OPENAI_API_KEY``; naming the variable in the config sends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from tests.integration.http_site import Request, Route, Site, json_route

pytestmark = pytest.mark.integration
KEY = "sk-OPENAI-REAL-KEY-0123456789"


def completion(req: Request) -> Route:
    """One answer, as a chat completion or (``stream: true``) as its Server-Sent Events."""
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    text = "Milvus Lite is local [1]."
    if not req.json().get("stream"):
        return json_route({"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "usage": usage,
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": text}}]})
    chunks = [{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}]
    body = "".join(f"data: {json.dumps({'id': 'x', 'object': 'chat.completion.chunk', 'created': 0, 'model': 'f', **c})}"
                   "\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Route(body.encode(), headers={"Content-Type": "text/event-stream"})


@pytest.mark.parametrize(("named", "sent"), [(False, False), (True, True)])
def test_the_default_key_goes_to_openai_only(named: bool, sent: bool, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = Site({"/v1/chat/completions": Route(handler=completion), "/v1/models": json_route({"data": []})})
    llm = {"provider": "openai_compatible", "model": "fake", "base_url": server.url("/v1").rstrip("/"),
           "max_retries": 0, "context_window": 8192, **({"api_key_env": "OPENAI_API_KEY"} if named else {})}
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps({"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": llm,
                               "ingest": {"describe_with_llm": False}}), encoding="utf-8")
    (tmp_path / "lite.md").write_text("Milvus Lite keeps a vector database in one local file.", encoding="utf-8")
    run = CliRunner()
    try:
        loaded = run.invoke(main, ["--config", str(cfg), "load", str(tmp_path / "lite.md"), "-c", "docs", "-d", "d"])
        assert loaded.exit_code == 0, loaded.output
        asked = run.invoke(main, ["--config", str(cfg), "query", "--agent", "naive", "-c", "docs",
                                  "What is Milvus Lite?"])
        assert asked.exit_code == 0, asked.output
    finally:
        server.close()
    chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    auth = [{k.lower(): v for k, v in r.headers.items()}.get("authorization", "") for r in chats]
    assert chats and all((KEY in a) is sent for a in auth), auth
