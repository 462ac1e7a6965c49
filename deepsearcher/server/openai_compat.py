"""An OpenAI-compatible chat endpoint, so any chat UI or SDK that speaks the Chat Completions API can research with
deepsearcher: ``GET /v1/models`` and ``POST /v1/chat/completions``.

- **Models**: one per registered agent, ``deepsearcher-<agent>`` (``deepsearcher-deep_search``, ...), plus
  ``deepsearcher`` for the configured ``query.agent``.
- **Question and follow-ups**: the last user message is the question. Earlier messages (at most
  ``HISTORY_MESSAGES``, each cut to ``HISTORY_CHARS``, an assistant's Sources section dropped) go after it under
  "Earlier in this conversation", so the agent's prompts see them when it decomposes, searches and writes; the
  question comes first, so it is what the report answers.
- **Answer**: the report's Markdown with its Sources (the text ``query --output`` writes), as the message content.
- **Research steps**: each event in words (``Event.describe``, as the CLI prints them) as ``reasoning_content``
  deltas of the stream, and as ``message.reasoning_content`` when not streaming: the field DeepSeek's API introduced
  and that Open WebUI, LibreChat and most OpenAI-compatible clients show as the model's collapsible "thinking".
- **Same rules as the API**: the token (``guard.RequestGuard`` covers ``/v1/``), body limit, and the query queue
  (``server.max_concurrent_queries`` running, ``max_queued_queries`` waiting, then 429 with ``Retry-After``).

Request fields other than ``model``, ``messages`` and ``stream`` (temperature, max_tokens, tools, ...) are accepted
and ignored: the agent's own settings decide them.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any, AsyncIterator, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.agents.scaffold import WORDS
from deepsearcher.events import Event, EventCallback, QueryReport
from deepsearcher.server.streaming import error_payload, log_failure, start_run
from deepsearcher.types import Report

MODEL_PREFIX = "deepsearcher"
HISTORY_MESSAGES = 6
"""Earlier messages passed on as context for a follow-up (the most recent ones)."""
HISTORY_CHARS = 1500
"""Each earlier message is cut to this many characters: context, not a second question."""


class ChatMessage(BaseModel):
    """One message; ``content`` is text or a list of parts, of which the text parts are read."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(str(part.get("text", "")) for part in self.content or [] if part.get("type") == "text")


class ChatRequest(BaseModel):
    """The Chat Completions request; only ``model``, ``messages`` and ``stream`` are used."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(MODEL_PREFIX, max_length=255, description="deepsearcher-<agent>, or deepsearcher for the "
                                                                  "configured agent (GET /v1/models lists them).")
    messages: list[ChatMessage] = Field(..., min_length=1, max_length=200)
    stream: bool = False


def model_names(agents: list[str]) -> list[str]:
    """The model ids served: the default, then one per agent."""
    return [MODEL_PREFIX, *(f"{MODEL_PREFIX}-{name}" for name in agents)]


def agent_for(model: str, agents: list[str]) -> str | None:
    """The agent a model id names (None = the configured default).

    Raises:
        HTTPException: 404 for a model this server does not serve, naming the ones it does.
    """
    if model == MODEL_PREFIX:
        return None
    name = model.removeprefix(f"{MODEL_PREFIX}-")
    if model.startswith(f"{MODEL_PREFIX}-") and name in agents:
        return name
    raise HTTPException(404, f"model {model!r} not found; this server serves: {', '.join(model_names(agents))}")


def question_with_context(messages: list[ChatMessage]) -> str:
    """The last user message, followed by the earlier conversation (recent messages, cut) as context.

    Raises:
        HTTPException: 422 when no user message has text.
    """
    users = [i for i, m in enumerate(messages) if m.role == "user" and m.text().strip()]
    if not users:
        raise HTTPException(422, "invalid request: messages holds no user message with text; the last user message "
                                 "is the question")
    last = users[-1]
    question = messages[last].text().strip()
    earlier = [m for m in messages[:last] if m.role in {"user", "assistant"} and m.text().strip()]
    if not earlier:
        return question
    lines = []
    for message in earlier[-HISTORY_MESSAGES:]:
        text = _SOURCES.split(message.text(), 1)[0].strip()  # our own answers: the text, not the list
        text = text if len(text) <= HISTORY_CHARS else text[:HISTORY_CHARS] + " …"
        lines.append(f"{message.role.capitalize()}: {text}")
    return question + "\n\nEarlier in this conversation (context for the question above):\n" + "\n".join(lines)


#: the Sources heading of our own answers, in every report language (``agents.scaffold``)
_SOURCES = re.compile("\n## (?:" + "|".join(sorted({re.escape(w[k]) for w in WORDS.values() for k in ("sources",
                      "sources_consulted") if k in w}, key=len, reverse=True)) + ")")


def add_chat_routes(app: FastAPI, service: Any) -> None:
    """``GET /v1/models`` and ``POST /v1/chat/completions`` on ``app``, running queries on ``service.queries``."""

    def agents() -> list[str]:
        return list(service.searcher.registry.names("agent"))

    @app.middleware("http")
    async def openai_errors(request: Request, call_next: Any) -> Response:
        """Error bodies under ``/v1/`` also carry OpenAI's ``error`` object, whose message the SDKs show."""
        response: Response = await call_next(request)
        if not request.url.path.startswith("/v1/") or response.status_code < 400:
            return response
        raw = b"".join([part async for part in response.body_iterator])  # type: ignore[attr-defined]
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"detail": raw.decode(errors="replace"), "hint": None, "type": "Error"}
        message = str(body.get("detail")) + (f" ({body['hint']})" if body.get("hint") else "")
        body["error"] = {"message": message, "type": body.get("type"), "code": response.status_code}
        headers = {k: v for k, v in response.headers.items() if k.lower() not in {"content-length", "content-type"}}
        return JSONResponse(body, status_code=response.status_code, headers=headers)

    @app.get("/v1/models", tags=["openai"])
    def models() -> dict[str, Any]:
        """The models (agents) served, in the OpenAI list format."""
        created = int(time.time())
        return {"object": "list", "data": [{"id": name, "object": "model", "created": created,
                                            "owned_by": MODEL_PREFIX} for name in model_names(agents())]}

    @app.post("/v1/chat/completions", tags=["openai"], response_model=None)
    async def chat(body: ChatRequest) -> Any:
        """Research the last user message; the answer is the cited report in Markdown, the steps its reasoning."""
        agent = agent_for(body.model, agents())
        question = question_with_context(body.messages)

        def precheck() -> None:
            service.ready().resolve_collections(None)
            service.ready(llm=True).check_llm()

        place = service.queries.reserve()  # 429 at once when full, counted from arrival, not after the checks
        try:
            await run_in_threadpool(precheck)
        except BaseException:
            place.cancel()
            raise

        def run(on_event: EventCallback) -> Report:
            return service.searcher.query(question, agent=agent, on_event=on_event,
                                          allow_private_urls=service.policy.allow_private_urls)

        completion = Completion(body.model)
        running = start_run(place, run)
        if body.stream:
            return EventSourceResponse(completion.chunks(running.events(), service.policy.redact), ping=15,
                                       headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        steps: list[str] = []
        try:
            async for event in running.events():
                if isinstance(event, QueryReport):
                    return JSONResponse(completion.whole(event.report, steps))
                steps.extend(event.describe())
        finally:
            running.stop()
        raise AssertionError("events() always ends with a report")  # pragma: no cover


class Completion:
    """The OpenAI shapes of one answer: the whole ``chat.completion`` or its ``chat.completion.chunk``s."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def whole(self, report: Report, steps: list[str]) -> dict[str, Any]:
        message = {"role": "assistant", "content": report_markdown(report, title=True),
                   "reasoning_content": "\n".join(steps)}
        return {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": _usage(report)}

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> ServerSentEvent:
        data = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return ServerSentEvent(data=json.dumps(data, ensure_ascii=False))

    async def chunks(self, events: AsyncIterator[Event], redact: Any) -> AsyncIterator[ServerSentEvent]:
        """A role chunk, one ``reasoning_content`` chunk per event, the report as ``content``, a ``stop`` chunk with
        the usage, then ``[DONE]``; a failed run ends with an ``error`` object (which the openai SDK raises)."""
        yield self.chunk({"role": "assistant", "content": ""})
        try:
            async for event in events:
                if isinstance(event, QueryReport):
                    yield self.chunk({"content": report_markdown(event.report, title=True)})
                    yield self.chunk({}, "stop", usage=_usage(event.report))
                else:
                    yield self.chunk({"reasoning_content": "\n".join(event.describe()) + "\n"})
        except Exception as exc:
            log_failure(exc)
            error = error_payload(exc, redact)
            message = error["detail"] + (f" ({error['hint']})" if error["hint"] else "")
            yield ServerSentEvent(data=json.dumps({"error": {"message": message, "type": error["type"]}}))
        finally:
            await events.aclose()  # type: ignore[attr-defined]
        yield ServerSentEvent(data="[DONE]")


def _usage(report: Report) -> dict[str, int]:
    usage = report.usage
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens}
