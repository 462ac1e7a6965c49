"""HTTP API with Server-Sent Events and the web page (extra ``server``: fastapi, uvicorn, sse-starlette), the
OpenAI-compatible chat endpoint, and the MCP tools (extra ``mcp``).

``create_app`` is imported on first use, so the framework-free parts (``security``, ``workers``, ``service``) load
without the ``server`` extra (``deepsearcher mcp`` over stdio needs only ``mcp``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from deepsearcher.server.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
