"""A report whose short answer names neither of the two options its question offers is asked for once more, the
prompt naming both: the bundled 1.5B model answered "Who was born first out of Aivar Kuusmaa and Andy Summers?" with
"John Allen", a third page's name, in every 2WikiMultiHopQA run (docs/benchmarks.md)."""

from __future__ import annotations

import pytest

from deepsearcher.agents import naive_rag, prompts
from deepsearcher.agents.report import synthesise
from deepsearcher.agents.short_answer import unnamed_options
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import Hit
from tests.unit.query_fakes import MILVUS_DOCS, make_ctx, of_kind

KUUSMAA = "Who was born first out of Aivar Kuusmaa and Andy Summers?"
QUESTION = "Which keeps its data in a local file, Milvus Lite or Milvus Standalone?"


@pytest.mark.parametrize("short, question, options", [
    ("John Allen", KUUSMAA, ("Aivar Kuusmaa", "Andy Summers")),
    ("The Past of Mary Holmes", "Which film has the director who died first, The Goose Woman or You Can No Longer "
     "Remain Silent?", ("The Goose Woman", "You Can No Longer Remain Silent")),
    ("Milvus Cloud", QUESTION, None),  # "Milvus" is a word of both
    ("Andy Summers", KUUSMAA, None),
    ("Kuusmaa was born in 1964.", KUUSMAA, None),  # one word of an option names it
    ("The sources do not say.", KUUSMAA, None),  # says neither: an answer
    ("Neither", KUUSMAA, None),
    ("unclear", KUUSMAA, None),
    ("Yes", KUUSMAA, None),
    ("", KUUSMAA, None),
    ("John Allen", "Who was born first?", None),  # no options offered
    ("Paris", "What is the difference between Aivar Kuusmaa and Andy Summers?", None),
    # options that describe a person: the answer is the person's name
    ("Steven Spielberg", "Who was born first, the director of Jaws or the director of Alien?", None),
    ("Cotula", "Which plant is larger, the Pterocarya or the Cotula?", None),  # named
    ("Oak", "Which plant is larger, the Pterocarya or the Cotula?", ("the Pterocarya", "the Cotula")),
])
def test_options_named_by_none_of_the_short_answers_words(short: str, question: str,
                                                          options: tuple[str, str] | None) -> None:
    assert unnamed_options(short, question) == options


def test_a_short_answer_naming_neither_option_is_asked_for_again_with_both_named() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel(["Answer: Zilliz Cloud\n\nZilliz Cloud is a managed service [1].",
                             "Answer: Milvus Lite\n\nMilvus Lite stores data in a local file [2]."])
    report = naive_rag.run(make_ctx(llm, QUESTION, events=events))
    assert len(llm.prompts) == 2 and llm.prompts[0] + prompts.NAME_AN_OPTION.format(
        first="Milvus Lite", second="Milvus Standalone") == llm.prompts[1]
    assert llm.prompts[1].endswith(' The question offers two answers, "Milvus Lite" or "Milvus Standalone": the '
                                   'Answer line names the one the sources support.')
    assert report.short_answer == "Milvus Lite" and "Zilliz" not in report.answer
    assert "local file [" in report.answer
    fallback = of_kind(events, "query.fallback")
    assert [f["step"] for f in fallback] == ["synthesise"] and "names neither option" in fallback[0]["error"]
    assert report.usage.llm_calls == 2


def test_a_second_answer_naming_neither_keeps_the_first() -> None:
    llm = ScriptedChatModel(["Answer: Zilliz Cloud\n\nZilliz Cloud is a managed service [1].",
                             "Answer: Qdrant\n\nQdrant runs it [1]."])
    report = naive_rag.run(make_ctx(llm, QUESTION))
    assert len(llm.prompts) == 2 and report.short_answer == "Zilliz Cloud"


def test_a_second_answer_that_says_neither_is_kept() -> None:
    llm = ScriptedChatModel(["Answer: Zilliz Cloud\n\nZilliz Cloud is a managed service [1].",
                             "Answer: The sources do not say.\n\nNeither is described [1]."])
    report = naive_rag.run(make_ctx(llm, QUESTION))
    assert report.short_answer == "The sources do not say."


@pytest.mark.parametrize("reply", [
    "Answer: Milvus Lite\n\nMilvus Lite stores data in a local file [2].",  # names one
    "Answer: Neither\n\nThe sources name no such product [1].",  # says neither
])
def test_an_answer_naming_an_option_or_neither_is_asked_once(reply: str) -> None:
    llm = ScriptedChatModel([reply])
    naive_rag.run(make_ctx(llm, QUESTION))
    assert len(llm.prompts) == 1


def test_the_second_report_is_written_from_the_sources_without_the_research_notes() -> None:
    # chain_of_rag's intermediate answers had said "John Allen was born first out of Aivar Kuusmaa and Andy
    # Summers." and its report followed them, asked once more too; from the sources alone the model chose an option
    notes = prompts.CHAIN_NOTES.format(steps="1. Which keeps its data in a local file? → Zilliz Cloud")
    llm = ScriptedChatModel(["Answer: Zilliz Cloud\n\nZilliz Cloud keeps it [1].",
                             "Answer: Milvus Lite\n\nMilvus Lite stores data in a local file [2]."])
    ctx = make_ctx(llm, QUESTION)
    written = synthesise(ctx, [Hit(chunk, 1.0, "milvus") for chunk in MILVUS_DOCS[:3]], notes=notes)
    assert notes in llm.prompts[0] and "→ Zilliz Cloud" not in llm.prompts[1]
    assert llm.prompts[1].endswith(prompts.NAME_AN_OPTION.format(first="Milvus Lite", second="Milvus Standalone"))
    assert written.short_answer == "Milvus Lite"
