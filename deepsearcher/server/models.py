"""Request and response bodies of the HTTP API (validated; unknown keys are errors, like config.yaml).

Results reuse the library's dataclasses (``CollectionInfo``, ``Hit``, ``LoadSummary``, ``Report``), so the JSON the API
returns is the JSON the CLI's ``--json`` prints.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

from deepsearcher.filters import SearchFilter
from deepsearcher.options import NumbersNotBools

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
Input = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4096)]
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Body(NumbersNotBools):
    """A request body: an unknown key is a 422, and so is a boolean for a number (``"top_k": true`` is not 1)."""

    model_config = ConfigDict(extra="forbid")


class LoadRequest(_Body):
    """Load server-side files/folders (inside ``server.allowed_roots``) and http(s) URLs into a collection."""

    inputs: list[Input] = Field(..., min_length=1, max_length=1000,
                                description="Absolute paths, folders or glob patterns on the server, or http(s) URLs.")
    collection: Name | None = Field(None, description="Target collection (default: vector_db.default_collection).")
    description: Annotated[str, StringConstraints(max_length=2000)] | None = Field(
        None, description="What the collection holds (used to route sub-queries); set when it is created.")
    force_new: bool = Field(False, description="Drop the collection and rebuild it.")
    keep_missing: bool = Field(False, description="Keep the chunks of files gone from a loaded folder (or no longer "
                                                  "loadable); by default they are removed.")

    @field_validator("inputs")
    @classmethod
    def _no_control_characters(cls, inputs: list[str]) -> list[str]:
        """A NUL byte cannot be in a path (the OS refuses it) and no control character is in a path or URL meant."""
        for value in inputs:
            if CONTROL.search(value):
                raise PydanticCustomError("control_character", "control characters (such as a NUL byte) are not "
                                                               "allowed in a path or URL: {value}",
                                          {"value": repr(value)[:100]})
        return inputs


class RetrieveRequest(_Body):
    """Rank chunks for a query with no LLM."""

    query: Text = Field(..., description="The query text.")
    top_k: int | None = Field(None, ge=1, le=100, description="Results wanted (default: query.top_k).")
    collections: list[Name] | None = Field(None, max_length=100, description="Collections to search (default all).")
    mode: Literal["dense", "bm25", "hybrid"] | None = Field(None, description="Default: hybrid when query.hybrid.")
    where: SearchFilter | None = Field(None, description=(
        'Metadata filter, e.g. {"paths": ["contracts/2025/**"], "types": ["pdf"], "since": "2025-01-01", '
        '"meta": {"status": "final"}}.'))


class OutlineSection(_Body):
    """One section of a long report's outline."""

    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)] = Field(
        ..., description="Section title.")
    question: Text = Field(..., description="The research question the section answers.")


class QueryRequest(_Body):
    """Research a question and write a cited report."""

    question: Text = Field(..., description="The question.")
    collections: list[Name] | None = Field(None, max_length=100,
                                           description="Collections to search (default: routed over all).")
    agent: Name | None = Field(None, description="Agent: auto or a registered agent (deep_search, chain_of_rag, "
                                                "naive, plugins'); default: query.agent in the config.")
    max_iter: int | None = Field(None, ge=1, le=10, description="Reflection rounds at most (default: query.max_iter).")
    report: Literal["short", "long"] = Field("short", description=(
        "long: an outline of 3-8 sections researched one by one (agent deep_research, or deep_search), then one "
        "editing pass; one Markdown report with a table of contents."))
    outline: list[OutlineSection] | None = Field(None, min_length=1, max_length=8, description=(
        "Long report: the sections to write (default: planned by the model)."))
    outline_title: Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)] | None = Field(
        None, description="Long report: the title that goes with ``outline``.")
    web: bool | None = Field(None, description=(
        "Search the web too (deep_research): null = when the server's config has web_search, false = never."))
    save_to: Name | None = Field(None, description="Store the web pages read in this collection after the run.")
    where: SearchFilter | None = Field(None, description="Metadata filter every search of the run keeps (as in "
                                                         "/api/retrieve).")
    stream: bool = Field(True, description="Stream Server-Sent Events; false = wait and return the report as JSON.")
    lines: bool = Field(False, description=(
        "Streaming: each event's data also holds ``lines``, the event in words as the CLI prints them (the web "
        "page asks for them)."))

    @field_validator("agent")
    @classmethod
    def _registered(cls, value: str | None) -> str | None:
        from deepsearcher.registry import registry

        known = ["auto", *registry.names("agent")]
        if value is not None and value not in known:
            raise PydanticCustomError("literal_error", "Input should be {expected} (the registered agents)",
                                      {"expected": " or ".join(map(repr, known))})
        return value


class ErrorBody(BaseModel):
    """Every 4xx/5xx answer: one message that says what went wrong, and how to fix it when known."""

    detail: str = Field(..., description="What went wrong.")
    hint: str | None = Field(None, description="How to fix it.")
    type: str = Field(..., description="Error class, e.g. RequestValidationError, CollectionError, Refused.")
    errors: list[dict[str, Any]] | None = Field(None, description="Per-field problems (validation errors only).")


class Health(BaseModel):
    """Liveness, and whether API calls need a bearer token."""

    status: Literal["ok"] = "ok"
    version: str
    auth_required: bool


class Info(BaseModel):
    """Read-only facts the web page shows (never keys, base URLs or file paths)."""

    version: str
    llm_model: str | None
    embedding_model: str
    agent: str
    agents: list[str] = Field(..., description="The agents a query may name: auto and every registered agent.")
    max_iter: int
    top_k: int
    web_search: str | None = Field(None, description="The configured web search provider (deep_research may send "
                                                     "search queries to it), or null: web search is off.")
    loads_paths: bool = Field(..., description="True when server.allowed_roots lets the load endpoint read files.")


class ReportOut(BaseModel):
    """A finished report: ``Report.to_dict()`` plus ``markdown`` (to copy/download) and ``answer_html``."""

    model_config = ConfigDict(extra="allow")

    question: str
    short_answer: str = Field("", description="The answer in one line (a name, date, number, yes/no or one "
                                              "sentence); \"\" when nothing was found, and for a long report.")
    answer: str
    sources: list[dict[str, Any]]
    usage: dict[str, Any]
    markdown: str
    answer_html: str
    notes_html: str = Field("", description="The notes under the answer as safe HTML (a date copied from the "
                                            "prompt, cited sentences their sources do not hold, links removed…); "
                                            "\"\" when there are none.")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {400: "The request cannot be carried out (message says why).",
                       401: "Missing or wrong bearer token (checked before the body is read).",
                       403: "Refused: path outside the allowed roots, a non-public URL, or a cross-site request.",
                       413: "The body is larger than server.max_body_mb.",
                       415: "The body is not declared application/json.",
                       422: "The body is malformed.",
                       429: "Too many loads or queries waiting; retry after Retry-After seconds.",
                       502: "The LLM or another provider failed.",
                       503: "The server is misconfigured or its store is busy."}.items()
}


class ExportRequest(_Body):
    """A report's Markdown (the ``markdown`` field of a query's report) to turn into a file."""

    markdown: Annotated[str, StringConstraints(min_length=1, max_length=500_000)] = Field(
        ..., description="The report Markdown, as the query's report gives it.")
    format: Literal["md", "html", "docx", "pdf"] = Field(..., description="The file format wanted.")
