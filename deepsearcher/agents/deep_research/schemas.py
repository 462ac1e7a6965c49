"""Reply schemas of DeepResearch: the step's action choice (built per set of allowed actions), the evaluator's
choice of checks and its verdict. Field descriptions go to servers that take a JSON schema; the validators accept
the loose shapes small models write (a nested ``{"search": {"queries": …}}``, a bare string for a list, "Search").
"""

from __future__ import annotations

import functools
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from deepsearcher.agents import prompts
from deepsearcher.agents.deep_research.state import Action

MAX_QUERIES = 3
MAX_ITEMS = 3
MAX_QUESTIONS = 3
CHECKS = ("definitive", "freshness", "plurality", "completeness", "attribution")
#: the reply field each action must fill
ACTION_FIELD: dict[Action, str] = {"search": "queries", "read": "items", "reflect": "questions", "answer": "answer"}


class StepBase(BaseModel):
    """``{"action": …, "think": …, <the action's field>}``; subclassed per set of allowed actions (``step_model``)."""

    think: str = Field("", description="One short sentence: why this action now.")

    @model_validator(mode="before")
    @classmethod
    def _loose(cls, value: object) -> object:
        if not isinstance(value, dict):
            return value
        value = dict(value)
        action = value.get("action")
        if isinstance(action, str):
            action = action.strip().casefold()
            action = {"visit": "read", "open": "read"}.get(action, action)
            value["action"] = action
            nested = value.pop(action, None)  # {"action": "search", "search": {"queries": [...]}} (Jina's shape)
            if isinstance(nested, dict):
                value = {**nested, **value}
            elif nested is not None and action in ACTION_FIELD:
                value.setdefault(ACTION_FIELD[action], nested)
        for key in ("queries", "questions", "items"):
            if isinstance(value.get(key), (str, int)):
                value[key] = [value[key]]
        return {k: v for k, v in value.items() if k in cls.model_fields}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The schema sent to servers: one object per allowed action (``anyOf``), each requiring the action,
        ``think`` and the action's own field, non-empty, in the order the step prompt shows them.

        With the plain object (only ``action`` required) a server that turns the schema into a grammar (llama.cpp,
        Ollama, vLLM) let a small model stop after ``think``: measured with Qwen2.5-Coder-0.5B on llama-cpp-python,
        6 of 7 steps of one question chose "answer" or "reflect" and wrote the answer or the question into
        ``think`` only, twice each (the retry at temperature 0 repeated it), so every step fell back. Validation
        is unchanged: replies are still read loosely (``_loose``) and checked by ``_field_of_the_action``.
        """
        base = super().model_json_schema(*args, **kwargs)
        props = base["properties"]
        action = props["action"]
        actions = action["enum"] if "enum" in action else [action["const"]]
        think = {k: v for k, v in props["think"].items() if k != "default"}
        branches = []
        for name in actions:
            field = {k: v for k, v in props[ACTION_FIELD[name]].items() if k != "default"}
            if field.get("type") == "array":
                field["minItems"] = 1
                if field.get("items", {}).get("type") == "string":
                    field["items"] = {**field["items"], "minLength": 1}
            else:
                field["minLength"] = 1
            branches.append({"type": "object", "title": f"{name} step",
                             "properties": {"action": {"const": name, "type": "string",
                                                       "description": action.get("description", "")},
                                            "think": think, ACTION_FIELD[name]: field},
                             "required": ["action", "think", ACTION_FIELD[name]], "additionalProperties": False})
        # the root says "object" too: OpenAI refuses a response_format schema whose root has no type "object"
        return {"title": base.get("title", cls.__name__), "type": "object", "anyOf": branches}

    @model_validator(mode="after")
    def _field_of_the_action(self) -> "StepBase":
        action = getattr(self, "action")
        name = ACTION_FIELD[action]
        value = getattr(self, name, None)
        if isinstance(value, str) and is_bracketed(value) and not is_example(value):
            # measured: Qwen2.5-Coder-0.5B wrote real answers in the example's brackets ("<Bill Myers>",
            # "<NASCAR Revolution>"): the brackets go, the answer stays
            value = value.strip()[1:-1].strip()
            setattr(self, name, value)
        if isinstance(value, str) and value.strip() and prompts.is_placeholder(value):
            # measured: Qwen2.5-Coder-0.5B filled "answer" with the prompt's "<answer with [n] citations>"
            raise ValueError(f'the "{name}" field only repeats the example {value.strip()!r}: write the {name} '
                             "itself")
        if not (value.strip() if isinstance(value, str) else value):
            raise ValueError(f'the "{action}" action needs a non-empty "{name}" field')
        return self


def is_bracketed(text: str) -> bool:
    t = text.strip()
    return len(t) > 2 and t.startswith("<") and t.endswith(">")


def _normalised(text: str) -> str:
    inner = text.strip().strip("<>").strip().casefold()
    inner = re.sub(r"\[\s*\w*\s*\]", "[n]", re.sub(r"^(?:the|an?)\s+", "", inner))
    return " ".join(re.sub(r"\d+", "n", inner).split())


@functools.cache
def _examples() -> frozenset[str]:
    """The placeholders of the step prompts ("<answer with [n] citations>", "<item number>"), normalised."""
    from deepsearcher.agents.deep_research import prompts as step_prompts

    texts = [v for v in vars(step_prompts).values() if isinstance(v, str)] + list(step_prompts.ACTION_TEXT.values())
    return frozenset(_normalised(m) for t in texts for m in re.findall(r"<[^<>]+>", t))


def is_example(text: str) -> bool:
    """``<…>`` text that is one of the step prompts' placeholders (digits and ``[1]`` read as ``n``, a leading article
    dropped): "<answer with [1] citations>", "<The answer with [n] citations>"."""
    return is_bracketed(text) and _normalised(text) in _examples()


def _real_texts(values: list[str]) -> list[str]:
    return [v.strip() for v in values if isinstance(v, str) and not prompts.is_placeholder(v)]


_FIELDS: dict[str, Any] = {
    "queries": (list[str], Field(default_factory=list, description=f"search: up to {MAX_QUERIES} short search "
                                                                   "expressions (keywords).")),
    "items": (list[int], Field(default_factory=list, description=f"read: up to {MAX_ITEMS} numbers of knowledge "
                                                                 "items to open in full.")),
    "questions": (list[str], Field(default_factory=list, description=f"reflect: up to {MAX_QUESTIONS} new gap "
                                                                     "questions.")),
    "answer": (str, Field("", description="answer: the answer to the current question, citing items as [n].")),
}


@functools.lru_cache(maxsize=32)
def step_model(allowed: tuple[Action, ...]) -> type[StepBase]:
    """The step's reply schema: ``action`` is one of ``allowed``; only the fields of allowed actions exist."""
    action_type: Any = Literal[allowed]
    fields = {ACTION_FIELD[a]: _FIELDS[ACTION_FIELD[a]] for a in allowed}
    validators: dict[str, Any] = {}
    if "queries" in fields or "questions" in fields:
        names = [n for n in ("queries", "questions") if n in fields]
        validators["_texts"] = field_validator(*names)(classmethod(lambda cls, v: _real_texts(v)))
    if "items" in fields:
        validators["_numbers"] = field_validator("items", mode="before")(classmethod(_numbers))
    return create_model(
        "ResearchStep", __base__=StepBase, __validators__=validators,
        action=(action_type, Field(..., description="The action to take now.")), **fields)


def _numbers(cls: type, value: object) -> object:
    """``["[3]", "5"]`` -> [3, 5] (models often quote item numbers)."""
    if not isinstance(value, list):
        return value
    out: list[object] = []
    for v in value:
        if isinstance(v, str):
            digits = "".join(ch if ch.isdigit() else " " for ch in v).split()
            out.extend(int(d) for d in digits[:1])
        else:
            out.append(v)
    return out


class CheckChoice(BaseModel):
    """Which checks a question needs (``{"definitive": true, …}``; missing keys are false)."""

    definitive: bool = Field(False, description="Needs a direct, confident answer.")
    freshness: bool = Field(False, description="Asks about something recent or current.")
    plurality: bool = Field(False, description="Asks for several items.")
    completeness: bool = Field(False, description="Names several aspects that must all be covered.")
    attribution: bool = Field(False, description="Every statement must rest on the cited knowledge.")

    @model_validator(mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        if isinstance(value, list):  # ["definitive", "attribution"]
            return {str(v).strip().casefold(): True for v in value}
        if isinstance(value, dict) and isinstance(value.get("checks"), list):
            return {str(v).strip().casefold(): True for v in value["checks"]}
        return value

    @property
    def chosen(self) -> list[str]:
        return [c for c in CHECKS if getattr(self, c)]


class VerdictBase(BaseModel):
    """The evaluator's reply: one boolean per chosen check, a critique and an improvement plan."""

    critique: str = Field("", description="What is wrong with the answer; empty when every check passes.")
    plan: str = Field("", description="How to fix the answer; empty when every check passes.")

    def results(self) -> dict[str, bool]:
        return {name: bool(getattr(self, name)) for name in CHECKS if name in type(self).model_fields}


@functools.lru_cache(maxsize=64)
def verdict_model(checks: tuple[str, ...]) -> type[VerdictBase]:
    """The verdict schema for ``checks``: each is a required boolean."""
    fields: dict[str, Any] = {c: (bool, Field(..., description=f"Does the answer pass the {c} check?"))
                              for c in checks}
    return create_model("Verdict", __base__=VerdictBase, **fields)
