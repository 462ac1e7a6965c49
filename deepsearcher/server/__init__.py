"""HTTP API with Server-Sent Events and the web page (extra ``server``: fastapi, uvicorn, sse-starlette)."""

from deepsearcher.server.app import create_app

__all__ = ["create_app"]
