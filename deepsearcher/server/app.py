"""The HTTP API and the web page: ``create_app(settings)`` builds a FastAPI app around one ``DeepSearcher``.

Endpoints (all JSON; ``/api/*``, ``/v1/*`` and ``/mcp`` need ``Authorization: Bearer <token>`` whenever a token is
configured, which it must be off loopback):

    GET  /api/health        liveness (no token needed)
    GET  /api/info          model names and query defaults (never keys or base URLs)
    GET  /api/collections   collections with description, chunk count, embedding model
    POST /api/load          files/folders inside server.allowed_roots, and URLs -> per-file results
                            (and server.watch: folders kept in sync from file-system events, server.watching)
    POST /api/retrieve      ranked chunks, no LLM
    POST /api/query         Server-Sent Events: the run's typed events, then ``query.report`` (or ``error``)
    POST /api/export        a report's Markdown -> .md / .html / .docx / .pdf (the page's download menu)
    POST /mcp               the MCP tools over Streamable HTTP (extra ``mcp``; ``mcp_tools``)
    GET  /v1/models         OpenAI-compatible: one model per agent (``openai_compat``)
    POST /v1/chat/completions  OpenAI-compatible chat: the report as the answer, the steps as reasoning
    GET  /                  the web page (static files from ``deepsearcher/web``)
    GET  /docs              OpenAPI docs (served offline when ``fastapi-offline`` is installed)

Every request first passes ``guard.RequestGuard`` (host, token, cross-site writes, body size), before its body is
read. Long jobs run on bounded queues of their own (``workers.WorkQueue``): loads one at a time with
``server.max_queued_loads`` waiting, queries ``server.max_concurrent_queries`` at a time with
``server.max_queued_queries`` waiting; one more is answered 429 with ``Retry-After``. Short calls use Starlette's
thread pool, which no waiting job holds, so health, collections and the page always answer. Nothing here changes
providers, keys or base URLs: those come from the config file the server was started with, and error answers name
them by setting (``<llm.base_url>``), never by value. Threat model and limits: docs/security.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from base64 import b64encode
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepsearcher.errors import (
    ConfigError, DeepSearcherError, ExportError, LLMOutputError, ProviderError, StoreInUseError,
)
from deepsearcher.agents.report_markdown import group_sources, report_markdown, report_notes, safe_report_answer
from deepsearcher.agents.safe_markdown import LinkRule
from deepsearcher.agents.citations import place
from deepsearcher.server.markdown import answer_html
from deepsearcher.server.models import (
    ERRORS, ExportRequest, Health, Info, LoadRequest, QueryRequest, ReportOut, RetrieveRequest,
)
from deepsearcher.server.guard import RequestGuard
from deepsearcher.server.openai_compat import add_chat_routes
from deepsearcher.server.security import AccessPolicy, Refused
from deepsearcher.server.streaming import error_payload, run_attended, stream_events
from deepsearcher.server.service import Service
from deepsearcher.server.watching import ServerWatches
from deepsearcher.server.workers import RETRY_AFTER_S, Busy
from deepsearcher.settings import Settings
from deepsearcher.events import EventCallback
from deepsearcher.types import CollectionInfo, Hit, LoadSummary, Report

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_bearer = HTTPBearer(auto_error=False, description="Required whenever the server has a token (always off loopback).")


def _version() -> str:
    try:
        return version("deepsearcher")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "0+unknown"


def create_app(settings: Settings, searcher: Any = None) -> FastAPI:
    """Build the API and web app.

    Args:
        settings: validated settings; ``server`` decides the token, allowed roots and concurrency.
        searcher: a ``DeepSearcher`` to serve (tests inject one with a scripted LLM); default: built from settings
            and closed on shutdown.

    Raises:
        ConfigError: the host is not loopback and the token variable is unset.
    """
    policy = AccessPolicy.from_settings(settings)
    owns_searcher = searcher is None
    if searcher is None:
        from deepsearcher.app import DeepSearcher

        searcher = DeepSearcher(settings)
    service = Service(settings, searcher, policy)
    watches = ServerWatches(service)  # checks server.watch before anything starts

    mcp_sessions: list[Any] = []

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(service.warm)
        watches.start()
        async with AsyncExitStack() as stack:
            for manager in mcp_sessions:
                await stack.enter_async_context(manager.run())
            yield
        await run_in_threadpool(watches.stop)  # before the store closes: a watch may be loading
        service.close(owns_searcher)

    app = FastAPI(title="deepsearcher", version=_version(), lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Load documents and URLs into Milvus collections, retrieve chunks, and research "
                              "questions with an agent that streams its steps and writes a cited report.")
    app.state.service = service
    app.state.watches = watches
    _add_error_handlers(app, policy)
    _add_docs(app)
    _add_meta_routes(app, service)
    _add_collection_routes(app, service)
    _add_search_routes(app, service)
    _add_export_route(app)
    add_chat_routes(app, service)
    mcp_sessions.extend(_add_mcp(app, service))
    _add_web(app)
    app.add_middleware(RequestGuard, policy=policy, max_body_bytes=int(settings.server.max_body_mb * 1_000_000))
    return app


_AUTH = [Depends(_bearer)]  # documents the scheme in OpenAPI; RequestGuard checks the token before the body


def _add_meta_routes(app: FastAPI, service: Service) -> None:
    """``/api/health`` and ``/api/info``."""
    settings, policy = service.settings, service.policy

    @app.get("/api/health", response_model=Health, tags=["meta"])
    def health() -> Health:
        """Liveness; says whether the other endpoints need a bearer token."""
        return Health(version=app.version, auth_required=policy.token is not None)

    @app.get("/api/info", response_model=Info, dependencies=_AUTH, responses=ERRORS, tags=["meta"])
    def info() -> Info:
        """Model names and query defaults, for display."""
        searcher = service.searcher
        return Info(version=app.version, llm_model=searcher.llm_name,
                    embedding_model=service.ready().embedder.model_name,
                    agent=settings.query.agent, agents=["auto", *searcher.registry.names("agent")],
                    max_iter=settings.query.max_iter, top_k=settings.query.top_k,
                    web_search=settings.web_search.provider if settings.web_search is not None else None,
                    loads_paths=bool(policy.roots))


def _add_collection_routes(app: FastAPI, service: Service) -> None:
    """``/api/collections`` and ``/api/load``."""

    @app.get("/api/collections", response_model=list[CollectionInfo], dependencies=_AUTH, responses=ERRORS,
             tags=["collections"])
    async def collections() -> list[CollectionInfo]:
        """Every collection, sorted by name."""
        return await run_in_threadpool(lambda: service.ready().collections())

    @app.post("/api/load", response_model=LoadSummary, dependencies=_AUTH, responses=ERRORS, tags=["collections"])
    async def load(body: LoadRequest) -> LoadSummary:
        """Load files, folders, globs (inside ``server.allowed_roots``) and http(s) URLs into a collection.

        Sources that cannot be read are reported per file (status ``skipped`` with a reason); the rest load. Loads
        run one at a time; when ``server.max_queued_loads`` already wait, the answer is 429 with ``Retry-After``.
        """
        inputs = await run_in_threadpool(_check_inputs, service.policy, body.inputs)
        return await asyncio.wrap_future(service.loads.submit(_load, service, body, inputs))


def _add_search_routes(app: FastAPI, service: Service) -> None:
    """``/api/retrieve`` and ``/api/query``."""

    @app.post("/api/retrieve", response_model=list[Hit], dependencies=_AUTH, responses=ERRORS, tags=["search"])
    async def retrieve(body: RetrieveRequest) -> list[Hit]:
        """Rank chunks for a query with no LLM."""
        return await run_in_threadpool(lambda: service.ready().retrieve(
            body.query, top_k=body.top_k, collections=body.collections, mode=body.mode, where=body.where))

    @app.post("/api/query", dependencies=_AUTH, tags=["search"], response_model=None,
              responses={**ERRORS, 200: {"model": ReportOut, "content": {"text/event-stream": {}},
                                         "description": "A ``text/event-stream`` of the run's events (see "
                                                        "docs/server.md), or the report as JSON when ``stream`` "
                                                        "is false."}})
    async def query(body: QueryRequest, request: Request) -> Any:
        """Research a question; stream every step as Server-Sent Events, ending with ``query.report``."""
        run = _query_run(service, body)

        def precheck() -> None:
            """Fail with a plain HTTP error, before any stream starts: a wrong collection, no LLM, LLM unreachable."""
            service.ready().resolve_collections(body.collections)
            service.ready(llm=True).check_llm()  # checks once per searcher; the run repeats it for free

        def finish(report: Report) -> dict[str, Any]:
            return finish_report(report, service.settings.query.report_links)

        place = service.queries.reserve()  # 429 at once when full, counted from arrival, not after the checks
        try:
            await run_in_threadpool(precheck)
            if not body.stream:
                report = await run_attended(place, run, request.receive)
                if report is None:  # the client left: nobody reads an answer
                    return Response(status_code=499)
                return JSONResponse(finish(report))
            return EventSourceResponse(stream_events(place, run, finish, service.policy.redact, body.lines),
                                       ping=15, headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        finally:
            place.cancel()  # frees the place only when no run was started in it


def _add_export_route(app: FastAPI) -> None:
    """``/api/export``: the page's download menu (HTML, DOCX, PDF from the report Markdown; ``report_export``)."""

    @app.post("/api/export", dependencies=_AUTH, responses=ERRORS, tags=["search"], response_class=Response,
              response_model=None)
    async def export_report(body: ExportRequest) -> Response:
        """The report as a file, made from its Markdown as ``query --output report.<format>`` makes it."""
        from deepsearcher.report_export import MEDIA_TYPES, export

        data = await run_in_threadpool(export, body.markdown, body.format)
        return Response(data, media_type=MEDIA_TYPES[body.format],
                        headers={"Content-Disposition": f'attachment; filename="report.{body.format}"',
                                 "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                                 "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"})


def _query_run(service: Service, body: QueryRequest) -> Callable[[EventCallback], Report]:
    """The run of one ``/api/query`` request: ``run(on_event) -> Report`` with the request's options and the
    server's address rule (for the pages read and ``save_to``)."""
    outline = None
    if body.outline is not None:
        from deepsearcher.agents.long_report.outline import Outline, Section

        outline = Outline(body.outline_title or "", tuple(Section(s.title, s.question) for s in body.outline))

    def run(on_event: EventCallback) -> Report:
        return service.searcher.query(body.question, collections=body.collections, agent=body.agent,
                                      max_iter=body.max_iter, on_event=on_event, report=body.report,
                                      outline=outline, web=body.web, save_to=body.save_to,
                                      allow_private_urls=service.policy.allow_private_urls, where=body.where)

    return run


def finish_report(report: Report, links: LinkRule = "cited") -> dict[str, Any]:
    """The report as JSON plus ``markdown`` (what the page copies and downloads: the same text as ``query --output``),
    ``answer_html`` (safe HTML, citations as links), ``notes_html`` (the notes under the answer) and ``source_groups`` (the sources by file or URL, each once, with
    the numbers and pages cited: ``report_markdown.group_sources``, as the Markdown's Sources list them). Both
    renderings start from ``report_markdown.safe_report_answer`` (no remote images, no raw HTML, links per
    ``links``)."""
    data = report.to_dict()
    data["markdown"] = report_markdown(report, title=True, links=links)
    data["source_groups"] = [{"source": g.source, "title": g.title, "collection": g.collection,
                              "sources": [{"number": src.number, "page": src.chunk.page,
                                           "place": place(src.chunk)} for src in g.sources]}
                             for g in group_sources(report.sources)]
    data["answer_html"] = answer_html(safe_report_answer(report, links), {src.number for src in report.sources})
    # the notes the Markdown has under the answer (copied dates, unsupported citations…), for the page to show too
    data["notes_html"] = answer_html("\n\n".join(report_notes(report)), set())
    return data


def _check_inputs(policy: AccessPolicy, inputs: list[str]) -> list[str]:
    """``Service.check_inputs`` on a worker thread (it resolves paths and host names)."""
    return Service.check_inputs_with(policy, inputs)


def _load(service: Service, body: LoadRequest, inputs: list[str]) -> LoadSummary:
    return service.load(inputs, body.collection, body.description, force_new=body.force_new,
                        keep_missing=body.keep_missing)


def _add_mcp(app: FastAPI, service: Service) -> list[Any]:
    """The MCP tools at ``/mcp`` when ``server.mcp`` is on and the extra ``mcp`` is installed (``mcp_tools``);
    returns the session managers the lifespan runs."""
    if not service.settings.server.mcp:
        return []
    try:
        from deepsearcher.server.mcp_tools import mount_http
    except ModuleNotFoundError as exc:
        log.info("MCP over HTTP is off: %s is not installed (pip install 'deepsearcher[mcp]')", exc.name)
        return []
    return [mount_http(app, service)]


# --- errors --------------------------------------------------------------------------------------------------------
def error_status(exc: DeepSearcherError) -> int:
    """HTTP status for a library error: the caller's mistake 4xx, the server's or a provider's 5xx."""
    if isinstance(exc, StoreInUseError | ConfigError | ExportError):
        return 503
    if isinstance(exc, LLMOutputError | ProviderError):
        return 502
    return 400  # CollectionError, IngestError, ...: the request names something that cannot be done


def _error(status: int, detail: str, type_: str, hint: str | None = None, headers: dict[str, str] | None = None,
           **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, "hint": hint, "type": type_, **extra}, status_code=status,
                        headers=headers)


def _add_error_handlers(app: FastAPI, policy: AccessPolicy) -> None:
    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"detail": exc.message, "hint": exc.hint, "type": "Refused"}, status_code=exc.status,
                            headers=headers)

    @app.exception_handler(Busy)
    async def busy(_: Request, exc: Busy) -> JSONResponse:
        return _error(429, str(exc), "Busy", f"retry after {RETRY_AFTER_S} s",
                      headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(DeepSearcherError)
    async def library_error(request: Request, exc: DeepSearcherError) -> JSONResponse:
        status = error_status(exc)
        if status >= 500:
            log.warning("%s %r failed: %s", request.method, request.url.path, exc)  # unredacted, for the operator
        return JSONResponse(error_payload(exc, policy.redact), status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]
        return _error(422, "invalid request: " + "; ".join(problems), "RequestValidationError",
                      "see /docs for the expected body", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": str(exc.detail), "hint": None, "type": "HTTPException"},
                            status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s %r", request.method, request.url.path, exc_info=exc)
        return _error(500, f"unexpected error ({type(exc).__name__}); see the server log", "InternalError",
                      "please report it with the server log")


# --- docs and web page -----------------------------------------------------------------------------------------------
def _add_docs(app: FastAPI) -> None:
    """Swagger UI at /docs with its assets and favicon from ``fastapi-offline`` (this tool runs offline), under a
    Content-Security-Policy: its one inline script allowed by hash, no framing (``frame-ancestors 'none'``)."""
    from fastapi.openapi.docs import get_swagger_ui_html

    try:
        static = Path(str(resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        static = None
    cdn = ""
    if static is not None and static.is_dir():
        app.mount("/docs-static", StaticFiles(directory=static), name="docs-static")
        js, css, icon = "/docs-static/swagger-ui-bundle.js", "/docs-static/swagger-ui.css", "/docs-static/favicon.png"
    else:  # pragma: no cover - without the assets package the page loads them from a CDN
        cdn = " https://cdn.jsdelivr.net"
        js = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js"
        css = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css"
        icon = "data:,"

    def page() -> Response:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title="deepsearcher API",
                                   swagger_js_url=js, swagger_css_url=css, swagger_favicon_url=icon)

    body = bytes(page().body).decode()
    hashes = " ".join(f"'sha256-{b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
                      for script in re.findall(r"<script>(.*?)</script>", body, flags=re.S))
    # Swagger UI sets style attributes from script, so styles need 'unsafe-inline'; scripts do not
    csp = (f"default-src 'none'; script-src 'self'{cdn} {hashes}; style-src 'self'{cdn} 'unsafe-inline'; "
           "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
           "frame-ancestors 'none'")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        response = page()
        response.headers.update({"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff",
                                 "Referrer-Policy": "no-referrer"})
        return response


def _add_web(app: FastAPI) -> None:
    """The web page: static files from ``deepsearcher/web``, with a strict Content-Security-Policy."""
    headers = {"Content-Security-Policy": PAGE_CSP, "X-Content-Type-Options": "nosniff",
               "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return FileResponse(WEB_DIR / "index.html", headers=headers)

    @app.middleware("http")
    async def page_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        if request.url.path.startswith("/static/"):
            response.headers.update(headers)
        return response

    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")
