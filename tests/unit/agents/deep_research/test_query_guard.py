"""``query_guard.query_refusal``: which web search queries may leave the machine (issue #21, finding 1). The
end-to-end check through the CLI is tests/integration/test_agentic_security.py."""

from __future__ import annotations

import pytest

from deepsearcher.agents.deep_research.query_guard import query_refusal

PRIVATE = ["It is paid from the treasury account SECRET-IBAN-DE44-5001-0517 held at the cooperative bank in the old "
           "harbour district.", "/home/ana/docs/payroll-2026.md"]
QUESTION = "How does our chief executive salary compare with 2026 benchmarks?"


def refusal(query: str, run_words: int = 8) -> str | None:
    return query_refusal(query, PRIVATE, QUESTION, max_chars=200, run_words=run_words)


@pytest.mark.parametrize("query", [QUESTION, "executive salary benchmarks 2026", "cooperative bank harbour district",
                                   "milvus lite 2.5 release notes"])
def test_short_own_words_pass(query: str) -> None:
    assert refusal(query) is None


@pytest.mark.parametrize(("query", "why"), [
    ("x" * 201, "it is 201 characters long (at most 200: a search is a short expression)"),
    ("two\nlines", "it spans lines or holds control characters (a search is one short line)"),
    ("account held at the cooperative bank in the old", "it repeats 8 or more words in a row from a "
                                                                   "private document"),
    ("SECRET-IBAN-DE44-5001-0517 owner", "it holds an identifier, number or path copied from a private document"),
    ("who wrote /home/ana/docs/payroll-2026.md", "it holds an identifier, number or path copied from a private "
                                                  "document"),
])
def test_private_or_unbounded_queries_are_refused(query: str, why: str) -> None:
    assert refusal(query) == why


def test_the_users_own_question_may_repeat_private_words() -> None:
    question = "who holds the treasury account held at the cooperative bank in the old harbour district"
    assert query_refusal(question, PRIVATE, question, max_chars=200, run_words=8) is None


def test_zero_words_checks_identifiers_only() -> None:
    assert refusal("treasury account held at the cooperative bank in the old", run_words=0) is None
    assert refusal("SECRET-IBAN-DE44-5001-0517", run_words=0) is not None
