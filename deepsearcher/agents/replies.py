"""The reply schema of every structured step, one pydantic model each.

They are sent to servers that support JSON-schema output (``response_format``), so every field carries a
``description`` the server shows the model; and they validate what came back, accepting the shapes small models
actually write: a bare list instead of the object, numbers as strings (``"[2]"``), one true/false flag per chunk,
list items wrapped in one-field objects (``[{"query": "x"}]``, ``[{"id": 2}]``: ``json_extract.unwrap_items``).
A reply that names another key is invalid (retried), never taken as an empty answer.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from deepsearcher.agents import prompts
from deepsearcher.llm.json_extract import unwrap_items


def _wrap(key: str) -> Any:
    """A ``mode="before"`` validator accepting a bare list (or one string) for the single list field ``key``."""

    def wrap(cls: type, value: object) -> object:
        if isinstance(value, list):
            return {key: value}
        if isinstance(value, str):
            return {key: [value] if value.strip() else []}
        return value

    return model_validator(mode="before")(classmethod(wrap))  # type: ignore[arg-type]


def _unwrap(*fields: str) -> Any:
    """A ``mode="before"`` field validator applying ``unwrap_items`` to list ``fields``."""
    return field_validator(*fields, mode="before")(classmethod(lambda cls, value: unwrap_items(value)))


def no_placeholders(values: list[str]) -> list[str]:
    """Strip items; drop those that are no query (``prompts.not_a_query``: empty, "None", prose past
    ``MAX_QUERY_CHARS`` …); reject a list whose only items were copied template placeholders (``<query 1>``)."""
    texts = [str(v).strip() for v in values]
    kept = [t for t in texts if not prompts.not_a_query(t)]
    if not kept and any(t and prompts.is_placeholder(t) for t in texts):
        raise ValueError("the reply repeats the example placeholders instead of real queries")
    return kept


class Decomposition(BaseModel):
    """The question split into search queries."""

    sub_queries: list[str] = Field(
        min_length=1, description="Short, self-contained search queries that together cover the question; one for a "
                                  "simple question.")
    _bare = _wrap("sub_queries")
    _items = _unwrap("sub_queries")

    @field_validator("sub_queries")
    @classmethod
    def _real(cls, values: list[str]) -> list[str]:
        kept = no_placeholders(values)
        if not kept:
            raise ValueError("no sub-queries given")
        return kept


def chunk_numbers(value: object) -> object:
    """``[true, false, true]`` -> [1, 3]; ``"[2]"`` / ``"chunk 2"`` -> 2; other items unchanged."""
    value = unwrap_items(value)
    if not isinstance(value, list):
        return value
    if value and all(isinstance(v, bool) for v in value):
        return [i for i, flag in enumerate(value, start=1) if flag]
    out: list[object] = []
    for v in value:
        if isinstance(v, str):
            digits = re.search(r"\d+", v)
            if digits:
                out.append(int(digits.group()))
        elif not isinstance(v, bool):
            out.append(v)
    return out


class Relevance(BaseModel):
    """Which numbered chunks help to answer the question or the search query."""

    relevant: list[int] = Field(description="The numbers of the helpful chunks; [] when none helps.")
    _bare = _wrap("relevant")

    @field_validator("relevant", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        return chunk_numbers(value)


class Reflection(BaseModel):
    """What is still missing to answer the question."""

    gap_queries: list[str] = Field(description="New search queries for the missing information, different from the "
                                               "queries already run; [] when the information is sufficient.")
    _bare = _wrap("gap_queries")
    _items = _unwrap("gap_queries")

    @field_validator("gap_queries")
    @classmethod
    def _real(cls, values: list[str]) -> list[str]:
        return no_placeholders(values)


class RouteReply(BaseModel):
    """The collections to search for one search query (a bare list of names is accepted)."""

    collections: list[str] = Field(description="Names of the listed collections that may hold the information; [] "
                                               "when you cannot tell.")
    query: str = Field("", description="The search query, rewritten to find the information in the chosen "
                                       "collections, or repeated unchanged.")
    _items = _unwrap("collections")

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: object) -> object:
        if isinstance(value, list):
            return {"collections": value}
        if isinstance(value, str):
            return {"collections": [value]}
        return value

    @field_validator("query")
    @classmethod
    def _real_query(cls, value: str) -> str:
        return "" if prompts.is_placeholder(value) else value.strip()


def _bare_follow_up() -> Any:
    """A ``mode="before"`` validator reading a bare string (or a one-string list) as the ``follow_up``."""

    def bare(cls: type, value: object) -> object:
        if isinstance(value, str):
            return {"follow_up": value}
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return {"follow_up": value[0]}
        return value

    return model_validator(mode="before")(classmethod(bare))  # type: ignore[arg-type]


def _real_follow_up() -> Any:
    """A ``follow_up`` validator: stripped; "" for no query ("None", "No further questions."); the example
    placeholder copied is invalid (the step is asked again)."""

    def real(cls: type, value: str) -> str:
        if value.strip() and prompts.is_placeholder(value):
            raise ValueError("the reply repeats the example placeholder instead of a real question")
        return "" if prompts.not_a_query(value) else value.strip()

    return field_validator("follow_up")(classmethod(real))


class FollowUp(BaseModel):
    """Whether the research steps suffice, else the next follow-up question (a bare string is the question)."""

    enough: bool = Field(False, description="true when the steps so far answer the question.")
    follow_up: str = Field("", description="The next short, self-contained question about one missing fact; \"\" "
                                           "when enough is true.")

    _bare = _bare_follow_up()
    _real = _real_follow_up()


class FirstFollowUp(BaseModel):
    """The first simple question to search for, broken out of the question (``prompts.FIRST_FOLLOW_UP``; a bare
    string is the question)."""

    follow_up: str = Field(description="The first simple question to search for.")

    _bare = _bare_follow_up()
    _real = _real_follow_up()


class Intermediate(BaseModel):
    """A short answer to a follow-up question and the chunks it relies on."""

    answer: str = Field(description=f"A short answer from the chunks, or \"{prompts.NO_ANSWER}\".")
    supporting: list[int] = Field(default_factory=list, description="The numbers of the chunks the answer relies on.")

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: object) -> object:
        return {"answer": value} if isinstance(value, str) else value

    @field_validator("supporting", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        return chunk_numbers(value)

    @field_validator("answer")
    @classmethod
    def _real(cls, value: str) -> str:
        if value.strip() and prompts.is_placeholder(value):
            raise ValueError("the reply repeats the example placeholder instead of an answer")
        return value.strip()


_BOOL = TypeAdapter(bool)


def _all_required(schema: dict[str, Any]) -> None:
    schema["required"] = list(schema.get("properties", {}))


class IntermediateNext(Intermediate):
    """An intermediate answer with the chain's next decision in the same reply (``agents.chain_of_rag.one_call``):
    whether the chain is enough, else the next follow-up. A decision the reply leaves unusable (no ``enough``, an
    empty or placeholder ``follow_up``) costs the answer nothing: the agent asks for the follow-up separately."""

    #: the schema sent asks for every field (a grammar-constrained server may otherwise leave the decision out);
    #: the reply is read leniently all the same
    model_config = ConfigDict(json_schema_extra=_all_required)

    enough: bool = Field(False, description="true when the research steps so far and this answer answer the question.")
    follow_up: str = Field("", description="The next short, self-contained question about one missing fact; \"\" "
                                           "when enough is true.")

    @field_validator("enough", mode="before")
    @classmethod
    def _enough(cls, value: object) -> bool:
        # read as FollowUp reads it (pydantic's bool: 1, "yes", "on" …), but never failing the reply: the answer and
        # its chunks matter more than a malformed decision
        try:
            return _BOOL.validate_python(value)
        except ValidationError:
            return False

    @field_validator("follow_up", mode="before")
    @classmethod
    def _question(cls, value: object) -> str:
        text = value.strip() if isinstance(value, str) else ""
        return "" if prompts.not_a_query(text) else text

    def decided(self) -> bool:
        """True when the reply says the chain is enough or names a next follow-up."""
        return self.enough or bool(self.follow_up)
