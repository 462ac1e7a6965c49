"""The MCP tools (official SDK, ``mcp`` >= 2: ``MCPServer``, the former FastMCP): ``deepsearcher mcp`` serves them
over stdio for desktop and IDE agents, and ``deepsearcher serve`` mounts them at ``/mcp`` over Streamable HTTP.

Tools (typed, described inputs; structured outputs, the pydantic models below):

- ``list_collections``: every collection with its description, chunk count and embedding model.
- ``retrieve``: ranked chunks for a query, no LLM (source, location, score, text).
- ``query``: research a question with an agent of choice; one progress notification per research step (the
  step in words, as the CLI prints it) while it runs; the report Markdown, the answer, the cited numbers and the
  sources.
- ``load``: folders, files and URLs, only inside ``server.allowed_roots`` and the server's address rule (the HTTP
  API's rules); over HTTP only when ``server.mcp_load`` is true.

Every tool runs on the ``Service`` the HTTP API uses: the same searcher, access policy and bounded queues (a full
query queue is an error naming it, like the API's 429). Errors are MCP tool errors (``is_error`` results) whose
text is the CLI's message with its hint.

The module does not postpone annotations: the tools' annotations name values known only when the server is built
(the registered agents), and the SDK reads them from the functions.
"""

import asyncio
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from deepsearcher.agents.citations import cited_numbers, location
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.errors import DeepSearcherError
from deepsearcher.events import EventCallback, QueryReport
from deepsearcher.filters import SearchFilter
from deepsearcher.server.security import Refused
from deepsearcher.server.service import Service
from deepsearcher.server.streaming import start_run
from deepsearcher.server.workers import Busy
from deepsearcher.types import Hit, Report, Source

INSTRUCTIONS = ("deepsearcher researches questions over the user's private document collections (Milvus) and writes "
                "cited reports. Call list_collections first to see what is there; retrieve for raw passages; query "
                "for a researched, cited answer (it takes a while and reports progress).")


class CollectionOut(BaseModel):
    name: str = Field(description="Collection name, to pass to retrieve and query.")
    description: str = Field(description="What the collection holds (used to route sub-queries).")
    chunk_count: int
    embedding_model: str


class Collections(BaseModel):
    collections: list[CollectionOut]


class ChunkOut(BaseModel):
    rank: int = Field(description="1 = best.")
    score: float = Field(description="The retrieval score (higher is better; scale depends on the mode).")
    collection: str
    source: str = Field(description="File path or URL of the document.")
    location: str = Field(description="Source with the page, as citations show it.")
    page: int | None
    title: str
    text: str


class Chunks(BaseModel):
    chunks: list[ChunkOut]


class SourceOut(BaseModel):
    number: int = Field(description="The citation number, [n] in the answer.")
    source: str
    location: str
    page: int | None
    title: str
    collection: str
    text: str = Field(description="The cited chunk's text.")


class QueryResult(BaseModel):
    question: str
    agent: str = Field(description="The agent that answered.")
    answer: str = Field(description="The answer in Markdown with [n] citations.")
    report_markdown: str = Field(description="The whole report: title, answer, checks and the Sources section.")
    citations: list[int] = Field(description="The citation numbers used in the answer, in order of first use.")
    sources: list[SourceOut]


class FileOut(BaseModel):
    source: str
    status: str = Field(description="loaded, unchanged or skipped.")
    reason: str
    chunks: int


class LoadResult(BaseModel):
    collection: str
    files: list[FileOut]
    chunks_written: int
    chunks_deleted: int


def build_mcp(service: Service, *, allow_load: bool) -> MCPServer:
    """The MCP server with its tools bound to ``service``.

    Args:
        service: the searcher, policy and queues to use.
        allow_load: offer the ``load`` tool (stdio: always; HTTP: ``server.mcp_load``).
    """
    server = MCPServer("deepsearcher", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    agents = list(service.searcher.registry.names("agent"))
    agent_doc = f"The agent: auto (chosen per question) or one of {', '.join(agents)}; default query.agent."

    @server.tool(description="List the document collections with their descriptions and sizes.")
    async def list_collections() -> Collections:
        infos = await _call(service.ready().collections)
        return Collections(collections=[CollectionOut(name=c.name, description=c.description,
                                                      chunk_count=c.chunk_count, embedding_model=c.embedding_model)
                                        for c in infos])

    @server.tool(description="Rank stored chunks for a query (no LLM): the passages, best first, with their source, "
                             "page and score.")
    async def retrieve(
        query: Annotated[str, Field(min_length=1, max_length=4000, description="What to search for.")],
        top_k: Annotated[int, Field(ge=1, le=100, strict=True, description="Chunks wanted.")] = 5,
        collections: Annotated[list[str] | None, Field(description="Collections to search; default all.")] = None,
        mode: Annotated[Literal["dense", "bm25", "hybrid"] | None,
                        Field(description="Default: hybrid when query.hybrid is set.")] = None,
        where: Annotated[SearchFilter | None, Field(description="Only chunks it admits: source path globs, file "
                                                                "types, a document date range, front-matter "
                                                                "values (all optional).")] = None,
    ) -> Chunks:
        hits = await _call(lambda: service.ready().retrieve(query, top_k=top_k, collections=collections, mode=mode,
                                                            where=where))
        return Chunks(chunks=[_chunk(rank, hit) for rank, hit in enumerate(hits, start=1)])

    @server.tool(description="Research a question over the collections with an agent and return a cited report. "
                             "Takes from seconds to minutes; sends a progress notification per research step.")
    async def query(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The question, any language.")],
        ctx: Context,
        agent: Annotated[str | None, Field(description=agent_doc)] = None,
        collections: Annotated[list[str] | None, Field(description="Collections in scope; default all.")] = None,
        max_iter: Annotated[int | None, Field(ge=1, le=10, strict=True,
                                              description="Search rounds at most.")] = None,
        report: Annotated[Literal["short", "long"], Field(description="One answer, or a long sectioned report.")]
        = "short",
        where: Annotated[SearchFilter | None, Field(description="Every search of the run keeps to the chunks it "
                                                                "admits (as retrieve's where).")] = None,
    ) -> QueryResult:
        if agent is not None and agent != "auto" and agent not in agents:
            raise ToolError(f"unknown agent {agent!r}; choose auto or one of: {', '.join(agents)}")
        await _call(lambda: _precheck(service, collections))

        def run(on_event: EventCallback) -> Report:
            return service.searcher.query(question, collections=collections, agent=agent, max_iter=max_iter,
                                          on_event=on_event, report=report, where=where,
                                          allow_private_urls=service.policy.allow_private_urls)

        return _result(await _research(service, run, ctx))

    if allow_load:
        @server.tool(description="Load files, folders (inside the server's allowed roots) and http(s) URLs into a "
                                 "collection, then answer per file.")
        async def load(
            inputs: Annotated[list[str], Field(min_length=1, max_length=1000,
                                               description="Absolute paths, folders, globs or URLs.")],
            collection: Annotated[str | None, Field(description="Target collection; default "
                                                                "vector_db.default_collection.")] = None,
            description: Annotated[str | None, Field(max_length=2000, description="What the collection holds "
                                                                                  "(set when it is created).")]
            = None,
        ) -> LoadResult:
            checked = await _call(lambda: service.check_inputs_with(service.policy, inputs))
            summary = await _queued(service.loads, lambda: service.load(checked, collection, description))
            return LoadResult(collection=summary.collection, chunks_written=summary.chunks_written,
                              chunks_deleted=summary.chunks_deleted,
                              files=[FileOut(source=f.source, status=f.status, reason=f.reason, chunks=f.chunks)
                                     for f in summary.files])

    return server


def mount_http(app: Any, service: Service) -> Any:
    """Add the tools at ``/mcp`` (Streamable HTTP, stateless: every request stands alone, progress streams in its
    answer) to ``app``; returns the SDK's session manager, whose ``run()`` the app's lifespan must enter.

    The app's ``RequestGuard`` applies first (loopback Host, token, JSON body, size), so the SDK's own Host check is
    off; ``load`` is offered only when ``server.mcp_load`` is true."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_mcp(service, allow_load=service.settings.server.mcp_load)
    mcp_app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True,
        max_request_body_size=int(service.settings.server.max_body_mb * 1_000_000),
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.router.routes.extend(mcp_app.routes)
    return server.session_manager


def _version() -> str:
    try:
        return version("deepsearcher")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "0+unknown"


def _precheck(service: Service, collections: list[str] | None) -> None:
    """A wrong collection or an unreachable LLM fails before the run is queued (as the API's precheck)."""
    service.ready().resolve_collections(collections)
    service.ready(llm=True).check_llm()


async def _research(service: Service, run: Any, ctx: Context) -> Report:
    """Run on the query queue; each event goes out as a progress notification with its words."""
    try:
        running = start_run(service.queries, run)
    except Busy as exc:
        raise ToolError(str(exc)) from exc
    step = 0
    try:
        async for event in running.events():
            if isinstance(event, QueryReport):
                return event.report
            step += 1
            await ctx.report_progress(step, None, "\n".join(event.describe()))
    except DeepSearcherError as exc:
        raise ToolError(str(exc)) from exc
    finally:
        running.stop()
    raise ToolError("the research ended without a report")  # pragma: no cover - events() always ends with one


async def _call(fn: Any) -> Any:
    """Run blocking library code on a thread; library and policy errors become tool errors with the CLI's text."""
    try:
        return await asyncio.to_thread(fn)
    except DeepSearcherError as exc:
        raise ToolError(str(exc)) from exc
    except Refused as exc:
        raise ToolError(exc.message + (f"\n  hint: {exc.hint}" if exc.hint else "")) from exc


async def _queued(queue: Any, fn: Any) -> Any:
    try:
        future = queue.submit(fn)
    except Busy as exc:
        raise ToolError(str(exc)) from exc
    try:
        return await asyncio.wrap_future(future)
    except DeepSearcherError as exc:
        raise ToolError(str(exc)) from exc


def _chunk(rank: int, hit: Hit) -> ChunkOut:
    chunk = hit.chunk
    return ChunkOut(rank=rank, score=hit.score, collection=hit.collection, source=chunk.source,
                    location=location(chunk), page=chunk.page, title=chunk.title, text=chunk.text)


def _source(source: Source) -> SourceOut:
    chunk = source.chunk
    return SourceOut(number=source.number, source=chunk.source, location=location(chunk), page=chunk.page,
                     title=chunk.title, collection=source.collection, text=chunk.text)


def _result(report: Report) -> QueryResult:
    return QueryResult(question=report.question, agent=report.agent, answer=report.answer,
                       report_markdown=report_markdown(report, title=True),
                       citations=list(dict.fromkeys(cited_numbers(report.answer))),
                       sources=[_source(s) for s in report.sources])
