"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests that run deepsearcher in another process
(``deepsearcher mcp`` as a subprocess): chat completions answered by ``server_support.responder`` (streamed or
not), embeddings by the hash embedder. A config pointing ``llm`` and ``embedding`` at ``base_url`` with the
``openai_compatible`` providers runs the real provider code against it."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from deepsearcher.testing import HashEmbedder
from tests.integration.server_support import responder

EMBED_DIM = 64


class ScriptedOpenAI:
    """Serve until the ``with`` block ends; ``prompts`` holds the last user message of every chat request."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.reply = responder()
        self.embedder = HashEmbedder(EMBED_DIM, "hash-64")
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._json({"error": {"message": "not found"}}, 404)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if self.path.endswith("/chat/completions"):
                    owner.chat(self, body)
                elif self.path.endswith("/embeddings"):
                    self._json(owner.embeddings(body))
                else:
                    self._json({"error": {"message": "not found"}}, 404)

            def _json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.handler = Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedOpenAI":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def chat(self, handler: Any, body: dict[str, Any]) -> None:
        messages = body["messages"]
        self.prompts.append(messages[-1]["content"])
        text = self.reply(messages)
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        base = {"id": "chatcmpl-scripted", "created": int(time.time()), "model": body.get("model", "scripted")}
        if not body.get("stream"):
            handler._json({**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        chunks = [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None},
                  {"index": 0, "delta": {}, "finish_reason": "stop"}]
        for choice in chunks:
            data = {**base, "object": "chat.completion.chunk", "choices": [choice]}
            handler.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        handler.wfile.write(f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n"
                            .encode())
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True

    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        as_b64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(v.tobytes()).decode() if as_b64 else v.tolist()}
                for i, v in enumerate(vectors)]
        return {"object": "list", "data": data, "model": body.get("model", "hash-64"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0}}


def subprocess_config(api: ScriptedOpenAI, db: str, allowed: str, **server: Any) -> str:
    """A config.yaml (JSON is YAML) with the LLM and the embedder on ``api``."""
    endpoint = {"provider": "openai_compatible", "base_url": api.base_url, "api_key_env": None, "max_retries": 0}
    return json.dumps({
        "llm": {**endpoint, "model": "scripted", "context_window": 32768},
        "embedding": {**endpoint, "model": "hash-64"},
        "vector_db": {"uri": db},
        "query": {"max_iter": 1, "agent": "deep_search"},
        "server": {"allowed_roots": [allowed], **server},
    })
