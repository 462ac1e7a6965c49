"""One scripted DeepResearch model for the tests that check what a rejected-answer run reports (statuses, verdicts,
the best rejected answer): the CLI test in-process (``tests/cli/test_cli_answer_trust.py``) and the black-box one
against the scripted HTTP server (``tests/integration/test_trust_cli.py``)."""

from __future__ import annotations

import json
from typing import Callable

#: the two gap questions the first step reflects
GAPS = ["Where does Milvus Lite store data?", "Which names may collections have?"]
ANSWER = "Milvus Lite runs in your Python process [{n}]."


def research_script(query: str, cite: Callable[[str], int | None]) -> Callable[[str], str]:
    """A reply function of the last user prompt: reflect ``GAPS`` first, then answer ``ANSWER`` citing ``cite(prompt)``
    whenever an answer is allowed and ``cite`` finds an item (else search ``query``); every answer is judged
    definitive-only and rejected as "Too vague."; the forced final answer is empty."""

    def reply(prompt: str) -> str:
        if prompt.startswith("You are researching"):
            if "(cite an item as [n]):\n(nothing yet)" in prompt and "reflected" not in prompt:
                return json.dumps({"action": "reflect", "questions": GAPS})
            n = cite(prompt) if '"answer":' in prompt else None
            if n is not None:
                return json.dumps({"action": "answer", "answer": ANSWER.format(n=n)})
            return json.dumps({"action": "search", "queries": [query]})
        if prompt.startswith("Decide which checks"):
            return json.dumps({"definitive": True, "attribution": True})
        if prompt.startswith("You are a strict reviewer"):
            return json.dumps({"definitive": False, "attribution": True, "critique": "Too vague.", "plan": "Be exact."})
        if prompt.startswith("Research time is over"):
            return ""
        raise AssertionError(f"unexpected prompt: {prompt[:300]}")

    return reply
