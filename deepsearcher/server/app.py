"""The HTTP API and the web page: ``create_app(settings)`` builds a FastAPI app around one ``DeepSearcher``.

Endpoints (all JSON; ``/api/*`` need ``Authorization: Bearer <token>`` whenever a token is configured, which it must be
off loopback):

    GET  /api/health        liveness (no token needed)
    GET  /api/info          model names and query defaults (never keys or base URLs)
    GET  /api/collections   collections with description, chunk count, embedding model
    POST /api/load          files/folders inside server.allowed_roots, and URLs -> per-file results
    POST /api/retrieve      ranked chunks, no LLM
    POST /api/query         Server-Sent Events: the run's typed events, then ``query.report`` (or ``error``)
    GET  /                  the web page (static files from ``deepsearcher/web``)
    GET  /docs              OpenAPI docs (served offline when ``fastapi-offline`` is installed)

Blocking work runs on threads: queries on a small pool of their own (``server.max_concurrent_queries``), everything
else on Starlette's thread pool, so a long query never blocks the rest. Nothing here changes providers, keys or base
URLs: those come from the config file the server was started with.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepsearcher.errors import ConfigError, DeepSearcherError, LLMOutputError, ProviderError, StoreInUseError
from deepsearcher.agents.citations import report_markdown
from deepsearcher.server.markdown import answer_html
from deepsearcher.server.models import (
    ERRORS, Health, Info, LoadRequest, QueryRequest, ReportOut, RetrieveRequest,
)
from deepsearcher.server.security import AccessPolicy, Refused, is_loopback_host
from deepsearcher.server.streaming import stream_events
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


class Service:
    """The app's state: one DeepSearcher, the access policy, the query pool and the load lock."""

    def __init__(self, settings: Settings, searcher: Any, policy: AccessPolicy) -> None:
        self.settings = settings
        self.searcher = searcher
        self.policy = policy
        self.queries = ThreadPoolExecutor(settings.server.max_concurrent_queries,
                                          thread_name_prefix="deepsearcher-query")
        self._warm_lock = threading.Lock()
        self._warm = False
        # one load at a time: two loads into one collection would race on the same sources
        self.load_lock = threading.Lock()

    def ready(self, llm: bool = False) -> Any:
        """The searcher with its providers built once, so concurrent first requests never open the Lite file (or
        load a local model) twice.

        Args:
            llm: also build the chat model (queries); raises ConfigError when none is configured.
        """
        if not self._warm or llm:
            with self._warm_lock:
                if not self._warm:
                    self.searcher.store.list_collections()  # opens the store (a Lite file in use fails here)
                    _ = self.searcher.embedder
                    self._warm = True
                if llm:
                    _ = self.searcher.llm  # built once, then cached by DeepSearcher
        return self.searcher

    def close(self, close_searcher: bool) -> None:
        self.queries.shutdown(wait=False, cancel_futures=True)
        if close_searcher:
            self.searcher.close()


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

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        service.close(owns_searcher)

    app = FastAPI(title="deepsearcher", version=_version(), lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Load documents and URLs into Milvus collections, retrieve chunks, and research "
                              "questions with an agent that streams its steps and writes a cited report.")
    app.state.service = service
    _add_error_handlers(app)
    _add_docs(app)
    if policy.loopback:
        _add_host_check(app)

    def authorized(request: Request, _: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> None:
        policy.check_token(request.headers.get("authorization"))

    auth = [Depends(authorized)]

    @app.get("/api/health", response_model=Health, tags=["meta"])
    def health() -> Health:
        """Liveness; says whether the other endpoints need a bearer token."""
        return Health(version=app.version, auth_required=policy.token is not None)

    @app.get("/api/info", response_model=Info, dependencies=auth, responses=ERRORS, tags=["meta"])
    def info() -> Info:
        """Model names and query defaults, for display."""
        return Info(version=app.version, llm_model=searcher.llm_name,
                    embedding_model=service.ready().embedder.model_name,
                    agent=settings.query.agent, agents=["auto", *searcher.registry.names("agent")],
                    max_iter=settings.query.max_iter, top_k=settings.query.top_k,
                    web_search=settings.web_search.provider if settings.web_search is not None else None,
                    loads_paths=bool(policy.roots))

    @app.get("/api/collections", response_model=list[CollectionInfo], dependencies=auth, responses=ERRORS,
             tags=["collections"])
    async def collections() -> list[CollectionInfo]:
        """Every collection, sorted by name."""
        return await run_in_threadpool(lambda: service.ready().collections())

    @app.post("/api/load", response_model=LoadSummary, dependencies=auth, responses=ERRORS, tags=["collections"])
    async def load(body: LoadRequest) -> LoadSummary:
        """Load files, folders, globs (inside ``server.allowed_roots``) and http(s) URLs into a collection.

        Sources that cannot be read are reported per file (status ``skipped`` with a reason); the rest load.
        """
        return await run_in_threadpool(_load, service, body)

    @app.post("/api/retrieve", response_model=list[Hit], dependencies=auth, responses=ERRORS, tags=["search"])
    async def retrieve(body: RetrieveRequest) -> list[Hit]:
        """Rank chunks for a query with no LLM."""
        return await run_in_threadpool(lambda: service.ready().retrieve(
            body.query, top_k=body.top_k, collections=body.collections, mode=body.mode))

    @app.post("/api/query", dependencies=auth, tags=["search"], response_model=None,
              responses={**ERRORS, 200: {"model": ReportOut, "content": {"text/event-stream": {}},
                                         "description": "A ``text/event-stream`` of the run's events (see "
                                                        "docs/server.md), or the report as JSON when ``stream`` "
                                                        "is false."}})
    async def query(body: QueryRequest) -> Any:
        """Research a question; stream every step as Server-Sent Events, ending with ``query.report``."""

        outline = None
        if body.outline is not None:
            from deepsearcher.agents.research.outline import Outline, Section

            outline = Outline(body.outline_title or "", tuple(Section(s.title, s.question) for s in body.outline))

        def run(on_event: EventCallback) -> Report:
            return service.searcher.query(body.question, collections=body.collections, agent=body.agent,
                                         max_iter=body.max_iter, on_event=on_event, report=body.report,
                                         outline=outline, web=body.web, save_to=body.save_to)

        def precheck() -> None:
            """Fail with a plain HTTP error, before any stream starts: a wrong collection, no LLM, LLM unreachable."""
            service.ready().resolve_collections(body.collections)
            service.ready(llm=True).check_llm()  # checks once per searcher; the run repeats it for free

        await run_in_threadpool(precheck)
        if not body.stream:
            loop = asyncio.get_running_loop()
            report = await loop.run_in_executor(service.queries, run, _ignore)
            return JSONResponse(finish_report(report))
        return EventSourceResponse(stream_events(service.queries, run, finish_report), ping=15,
                                   headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    _add_web(app)
    return app


def finish_report(report: Report) -> dict[str, Any]:
    """The report as JSON plus ``markdown`` (what the page copies and downloads: the same text as ``query --output``)
    and ``answer_html`` (safe HTML, citations as links)."""
    data = report.to_dict()
    data["markdown"] = report_markdown(report, title=True)
    data["answer_html"] = answer_html(report.answer, {src.number for src in report.sources})
    return data


def _ignore(_: Any) -> None:
    """An on_event callback that drops events (non-streaming query)."""


def _load(service: Service, body: LoadRequest) -> LoadSummary:
    """Check every input against the policy and load through the one ingestion entry point; expanded files that
    escape the roots (symlinks) are skipped and listed."""
    from deepsearcher.ingest.sources import is_url

    policy = service.policy
    urls = [policy.check_url(i) for i in body.inputs if is_url(i)]
    paths = [str(policy.check_path(i)) for i in body.inputs if not is_url(i)]
    outside = "outside server.allowed_roots (symlink)"

    def within_roots(path: Path) -> str | None:
        return None if policy.inside_roots(path) else outside

    with service.load_lock:
        summary = service.ready().load(paths + urls, body.collection, body.description, force_new=body.force_new,
                                       path_filter=within_roots)
    if not urls and summary.files and all(f.reason == outside for f in summary.files):
        raise Refused(403, "every file resolves outside the folders this server may read",
                      hint=f"allowed roots: {', '.join(map(str, policy.roots))}")
    return summary


# --- errors --------------------------------------------------------------------------------------------------------
def error_status(exc: DeepSearcherError) -> int:
    """HTTP status for a library error: the caller's mistake 4xx, the server's or a provider's 5xx."""
    if isinstance(exc, StoreInUseError | ConfigError):
        return 503
    if isinstance(exc, LLMOutputError | ProviderError):
        return 502
    return 400  # CollectionError, IngestError, ...: the request names something that cannot be done


def _error(status: int, detail: str, type_: str, hint: str | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, "hint": hint, "type": type_, **extra}, status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"detail": exc.message, "hint": exc.hint, "type": "Refused"}, status_code=exc.status,
                            headers=headers)

    @app.exception_handler(DeepSearcherError)
    async def library_error(_: Request, exc: DeepSearcherError) -> JSONResponse:
        return _error(error_status(exc), exc.args[0] if exc.args else str(exc), type(exc).__name__, exc.hint)

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
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, f"unexpected error ({type(exc).__name__}); see the server log", "InternalError",
                      "please report it with the server log")


def _add_host_check(app: FastAPI) -> None:
    """On loopback, answer only requests addressed to a loopback name (blocks DNS-rebinding pages in a browser)."""

    @app.middleware("http")
    async def host_check(request: Request, call_next: Any) -> Response:
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if host and not is_loopback_host(name):
            return JSONResponse({"detail": f"host {host!r} is not a loopback name", "type": "Refused",
                                 "hint": "open the page as http://127.0.0.1:<port>/ or http://localhost:<port>/"},
                                status_code=403)
        return await call_next(request)


# --- docs and web page -----------------------------------------------------------------------------------------------
def _add_docs(app: FastAPI) -> None:
    """Swagger UI at /docs; its assets come from ``fastapi-offline`` when installed (this tool runs offline)."""
    from fastapi.openapi.docs import get_swagger_ui_html

    try:
        static = Path(str(resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        static = None
    if static is not None and static.is_dir():
        app.mount("/docs-static", StaticFiles(directory=static), name="docs-static")
        js, css = "/docs-static/swagger-ui-bundle.js", "/docs-static/swagger-ui.css"
    else:  # pragma: no cover - without the assets package the page loads them from a CDN
        js = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js"
        css = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css"

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title="deepsearcher API",
                                   swagger_js_url=js, swagger_css_url=css)


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
