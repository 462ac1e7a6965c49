"""Long reports with a scripted model (issue #12): outline (planned, from a file, fallback), sections sharing one
knowledge store, citations numbered globally across sections, the coherence pass with its contradictions section, and
its fallback."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Callable

import pytest

from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.agents.long_report.agent import section_agent, slug, table_of_contents, write_long_report
from deepsearcher.agents.long_report.outline import (
    Outline, Section, fallback_outline, outline_markdown, parse_outline, read_outline,
)
from deepsearcher.agents.tools import ResearchTools
from deepsearcher.errors import ConfigError
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import MILVUS_DOCS, make_ctx, memory_store, of_kind

Q = "How does Milvus Lite work and what limits apply?"
OUTLINE = Outline("Milvus Lite in practice", (Section("Running Milvus Lite", "How does Milvus Lite run?"),
                                              Section("Limits", "Which letters may collection names contain?")))


def prompt_of(messages: Any) -> str:
    return str(messages[-1]["content"])


def number_of(prompt: str, text: str) -> int:
    """The ``[n]`` a prompt shows for the item whose text starts with ``text``."""
    assert "\n" + text in prompt, f"the prompt does not show {text!r}"
    head = prompt.split("\n" + text)[0].rsplit("[", 1)[1]
    return int(head.split("]")[0])


Responder = Callable[[Any], str]


def deep_search_responder(section_texts: dict[str, Callable[[str], str]], coherence: Callable[[str], str]) -> Responder:
    """Replies for deep_search sections: one sub-query (the section question), every chunk relevant, no gaps; the
    section text from ``section_texts[title](prompt)``; the coherence pass from ``coherence(prompt)``."""

    def reply(messages: Any) -> str:
        p = prompt_of(messages)
        if p.startswith("Break the question"):
            question = p.split("Question: ", 1)[1].split("\n", 1)[0]
            return json.dumps({"sub_queries": [question]})
        if "numbered text chunks" in p:
            count = int(re.search(r"Below are (\d+) numbered", p).group(1))  # type: ignore[union-attr]
            return json.dumps({"relevant": list(range(1, count + 1))})
        if "Search queries already run" in p:
            return json.dumps({"gap_queries": []})
        if p.startswith("Write the section"):
            title = p.split('"', 2)[1]
            return section_texts[title](p)
        if p.startswith("Below is the draft"):
            return coherence(p)
        raise AssertionError(f"unexpected prompt: {p[:100]}")

    return reply


def draft_of(prompt: str) -> str:
    return prompt.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]


LITE = MILVUS_DOCS[0].text  # "Milvus Lite is the lightweight version ..."
FILE = MILVUS_DOCS[1].text  # "Milvus Lite stores data in a local file ..."
NAMES = MILVUS_DOCS[2].text  # "Collection names may contain only letters ..."


def test_sections_share_the_store_and_citations_are_numbered_globally() -> None:
    seen: dict[str, str] = {}

    def running(p: str) -> str:
        seen["running"] = p
        return f"Milvus Lite runs in-process [{number_of(p, LITE)}] on a local file [{number_of(p, FILE)}]."

    def limits(p: str) -> str:
        seen["limits"] = p
        return (f"Names are restricted [{number_of(p, NAMES)}]; as said, Milvus Lite is in-process "
                f"[{number_of(p, LITE)}].")

    def edit(p: str) -> str:
        seen["coherence"] = p
        return ("## Introduction\n\nThis report covers Milvus Lite [1].\n\n" + draft_of(p)
                + "\n\n## Conclusion\n\nMilvus Lite is small [2].\n\n## Contradictions and open questions\n\n"
                  "- Source [1] calls Milvus Lite lightweight, while [3] lists strict limits.")

    llm = ScriptedChatModel([deep_search_responder({"Running Milvus Lite": running, "Limits": limits}, edit)] * 12)
    events: list[Event] = []
    ctx = make_ctx(llm, Q, events=events)
    report = write_long_report(ctx, "deep_search", OUTLINE)

    # the chunk about Milvus Lite found in section 1 has the same store number in section 2's prompt
    assert number_of(seen["running"], LITE) == number_of(seen["limits"], LITE)
    body = report.answer
    running_text = body.split("## Running Milvus Lite\n\n", 1)[1].split("\n\n", 1)[0]
    limits_text = body.split("## Limits\n\n", 1)[1].split("\n\n", 1)[0]
    assert running_text == "Milvus Lite runs in-process [1] on a local file [2]."
    assert limits_text == "Names are restricted [3]; as said, Milvus Lite is in-process [1]."  # same number, global
    assert [s.chunk.text for s in report.sources] == [LITE, FILE, NAMES]
    # the coherence pass saw the globally numbered draft and the source list
    assert "[1] lite — /d/lite.md\n[2] lite — /d/lite.md\n[3] limits — /d/limits.md" in seen["coherence"]
    assert "## Running Milvus Lite\n\nMilvus Lite runs in-process [1] on a local file [2]." in seen["coherence"]
    # the contradiction is listed with its citations, resolving to the right sources
    assert "## Contradictions and open questions\n\n- Source [1] calls Milvus Lite lightweight, while [3] lists " \
           "strict limits." in body
    assert report.sources[2].chunk.source == "/d/limits.md"
    # one Markdown report with a table of contents
    assert body.startswith("## Contents\n\n1. [Introduction](#introduction)\n2. [Running Milvus Lite]"
                           "(#running-milvus-lite)\n3. [Limits](#limits)\n4. [Conclusion](#conclusion)\n"
                           "5. [Contradictions and open questions](#contradictions-and-open-questions)")
    md = report_markdown(report, title=True)
    assert md.startswith("# Milvus Lite in practice\n\n## Contents") and "## Sources\n\n- /d/lite.md: [1], [2]\n- /d/limits.md: [3]" in md
    assert report.title == "Milvus Lite in practice" and report.sections == ["Running Milvus Lite", "Limits"]
    outline_event = of_kind(events, "query.outline")[0]
    assert outline_event["source"] == "file" and [s["title"] for s in outline_event["sections"]] == \
        ["Running Milvus Lite", "Limits"]
    assert [(e["index"], e["status"]) for e in of_kind(events, "query.section")] == [
        (1, "research"), (1, "written"), (2, "research"), (2, "written"), (0, "editing")]


def test_a_sections_copy_of_a_chunk_cites_it_in_the_draft_and_the_report() -> None:
    seen: dict[str, str] = {}

    def copying(p: str) -> str:
        return f"Milvus Lite runs in-process [{number_of(p, LITE)}].\n\n{FILE}"  # the 1.5B model's habit: uncited

    def edit(p: str) -> str:
        seen["coherence"] = p
        return draft_of(p)

    llm = ScriptedChatModel([deep_search_responder({"Running Milvus Lite": copying, "Limits": copying}, edit)] * 12)
    report = write_long_report(make_ctx(llm, Q), "deep_search", OUTLINE)
    assert "Milvus Lite stores data in a local file and suits prototypes and notebooks [2]." in seen["coherence"]
    assert FILE.removesuffix(".") + " [2]." in report.answer
    assert FILE in [s.chunk.text for s in report.sources]


def test_a_search_run_for_one_section_is_not_run_again() -> None:
    store = memory_store()

    def text(p: str) -> str:
        return f"Milvus Lite is in-process [{number_of(p, LITE)}]."

    same = Outline("t", (Section("A", "What is Milvus Lite?"), Section("B", "What is Milvus Lite?")))
    llm = ScriptedChatModel([deep_search_responder({"A": text, "B": text},
                                                   lambda p: draft_of(p) + "\n\n## Contradictions and open "
                                                                           "questions\n\nNone.")] * 12)
    write_long_report(make_ctx(llm, Q, store=store), "deep_search", same)
    assert [t for _, t, _ in store.searches] == ["What is Milvus Lite?"]  # section B reused section A's search


def test_deep_research_sections_see_earlier_knowledge_and_skip_earlier_queries() -> None:
    checks = json.dumps({"definitive": True, "attribution": True})

    def reply(messages: Any) -> str:
        p = prompt_of(messages)
        if p.startswith("You are researching"):
            current = p.split("Current question: ", 1)[1].split("\n", 1)[0]
            if "Knowledge gathered so far (cite an item as [n]):\n(nothing yet)" in p:  # section 1, step 1
                return json.dumps({"action": "search", "queries": ["Milvus Lite"]})
            if "At step 1 you" not in p:  # section 2, step 1: knowledge from section 1 is shown already
                return json.dumps({"action": "search", "queries": ["milvus lite", "collection names"]})
            return json.dumps({"action": "answer", "answer": f"{current}: in-process [{number_of(p, LITE)}]."})
        if p.startswith("Decide which checks"):
            return checks
        if p.startswith("You are a strict reviewer"):
            return json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
        if p.startswith("Below is the draft"):
            return draft_of(p)  # keeps the sections; no contradictions section: one is added
        raise AssertionError(p[:80])

    llm = ScriptedChatModel([reply] * 20)
    events: list[Event] = []
    ctx = dataclasses.replace(make_ctx(llm, Q, events=events), research=ResearchTools())
    report = write_long_report(ctx, "deep_research", OUTLINE)
    section2_first = [p for p in llm.prompts if "Current question: Which letters may" in p][0]
    assert "Milvus Lite is the lightweight version" in section2_first  # found in section 1
    sub = of_kind(events, "query.sub_queries")
    assert sub[1]["duplicates"] == ["milvus lite"] and sub[1]["sub_queries"] == ["collection names"]
    assert "## Contradictions and open questions\n\nNo contradictions between the sources were found." in \
        report.answer
    assert report.agent == "deep_research" and report.sub_queries == ["Milvus Lite", "collection names"]
    assert report.answer.count("in-process [1]") == 2  # one source, one number, in both sections


def test_the_coherence_pass_falls_back_to_the_draft_when_it_loses_a_section() -> None:
    def text(p: str) -> str:
        return f"Milvus Lite is in-process [{number_of(p, LITE)}]."

    llm = ScriptedChatModel([deep_search_responder({"Running Milvus Lite": text, "Limits": text},
                                                   lambda p: "## Introduction\n\nShort.")] * 12)
    events: list[Event] = []
    report = write_long_report(make_ctx(llm, Q, events=events), "deep_search", OUTLINE)
    fallback = of_kind(events, "query.fallback")[-1]
    assert fallback["step"] == "coherence" and "lost section(s): Running Milvus Lite, Limits" in fallback["error"]
    assert "## Running Milvus Lite\n\nMilvus Lite is in-process [1]." in report.answer
    assert "## Contradictions and open questions\n\nThe sections were not compared" in report.answer


def test_the_outline_is_planned_by_the_model_or_falls_back() -> None:
    planned = {"title": "Milvus Lite", "sections": [{"title": f"S{i}", "question": f"Question {i}?"}
                                                     for i in range(1, 10)]}
    llm = ScriptedChatModel([json.dumps(planned)])
    from deepsearcher.agents.long_report.outline import plan_outline

    outline, fell_back = plan_outline(make_ctx(llm, Q))
    assert not fell_back and outline.title == "Milvus Lite" and len(outline.sections) == 8  # cut to 8
    assert llm.prompts[0].startswith("Plan the table of contents of a long report") and "from 3 to 8" in \
        llm.prompts[0]
    too_few = json.dumps({"title": "x", "sections": [{"title": "a", "question": "b?"}]})
    llm = ScriptedChatModel([too_few, too_few])
    outline, fell_back = plan_outline(make_ctx(llm, Q))
    assert fell_back and outline == fallback_outline(Q) and len(outline.sections) == 3


def test_outline_file_round_trip_and_errors(tmp_path: Any) -> None:
    assert parse_outline(outline_markdown(OUTLINE)) == OUTLINE
    text = ("<!-- edit me -->\n# Title\nnotes before the sections are ignored\n\n## One\nQuestion: What is\n"
            "Milvus Lite?\n\n## Two\nWhich limits?\n")
    assert parse_outline(text) == Outline("Title", (Section("One", "What is Milvus Lite?"),
                                                    Section("Two", "Which limits?")))
    with pytest.raises(ConfigError, match="line 3: the section 'Empty' has no research question"):
        parse_outline("# T\n\n## Empty\n\n## Full\nWhy?\n")
    with pytest.raises(ConfigError, match="has no sections"):
        parse_outline("# Only a title\n")
    with pytest.raises(ConfigError, match="at most 8"):
        parse_outline("".join(f"## S{i}\nQ{i}?\n" for i in range(9)))
    with pytest.raises(ConfigError, match="cannot read the outline file"):
        read_outline(tmp_path / "missing.md")


def test_only_deep_research_and_deep_search_write_long_reports() -> None:
    assert section_agent("auto") == "deep_research" and section_agent("deep_search") == "deep_search"
    with pytest.raises(ConfigError, match="not 'naive'"):
        section_agent("naive")


def test_table_of_contents_slugs() -> None:
    assert slug("Contradictions and open questions") == "contradictions-and-open-questions"
    assert slug("What's new? (2024)") == "whats-new-2024"
    assert table_of_contents("## A\n\ntext\n\n### not listed\n\n## B ##\n") == "## Contents\n\n1. [A](#a)\n2. [B](#b)"


# --- issue #20, item 2: sections without evidence, uncited sentences, synthesis sections ---------------------------
NOTHING_Q = "What does Milvus Lite cost per month?"


def nothing_for(question: str, reply: Responder) -> Responder:
    """``reply``, except that no chunk is relevant to ``question``."""

    def wrapped(messages: Any) -> str:
        p = prompt_of(messages)
        if "numbered text chunks" in p and p.startswith(f"Question: {question}\n"):
            return json.dumps({"relevant": []})
        return reply(messages)

    return wrapped


def test_a_section_without_evidence_says_so_and_its_question_stays_open() -> None:
    outline = Outline("Milvus Lite", (Section("Running", "How does Milvus Lite run?"),
                                      Section("Pricing", NOTHING_Q)))
    seen: dict[str, str] = {}

    def running(p: str) -> str:
        return (f"Milvus Lite runs in-process [{number_of(p, LITE)}]. It is loved by every developer on earth. "
                "Yes.")

    def pricing(p: str) -> str:
        return "Milvus Lite costs 9 dollars per month and is very popular."  # no source: must not survive

    def edit(p: str) -> str:
        seen["edit"] = p
        return draft_of(p) + "\n\n## Contradictions and open questions\n\nNone."

    llm = ScriptedChatModel([nothing_for(NOTHING_Q, deep_search_responder({"Running": running, "Pricing": pricing},
                                                                           edit))] * 12)
    report = write_long_report(make_ctx(llm, Q), "deep_search", outline)
    pricing_text = report.answer.split("## Pricing\n\n", 1)[1].split("\n\n", 1)[0]
    assert pricing_text == f"The sources hold nothing on “{NOTHING_Q}”."
    assert "9 dollars" not in report.answer
    statuses = {q.question: q.status for q in report.questions}
    assert statuses == {"How does Milvus Lite run?": "answered", NOTHING_Q: "nothing_found"}
    assert NOTHING_Q in report.gaps and f"- {NOTHING_Q}" in seen["edit"]  # listed as open for the editing pass
    # the uncited sentence of an answered section is marked; a cited one and a one-word one are not
    running_text = report.answer.split("## Running\n\n", 1)[1].split("\n\n", 1)[0]
    assert running_text == ("Milvus Lite runs in-process [1]. It is loved by every developer on earth. *(uncited)* "
                            "Yes.")
    md = report_markdown(report, title=True)
    assert "researched, nothing found" in md and NOTHING_Q in md.split("**Questions and verdicts.**")[1]


def test_a_german_report_says_nothing_was_found_in_german() -> None:
    outline = Outline("Milvus Lite", (Section("Betrieb", "Wie läuft Milvus Lite?"), Section("Preise", NOTHING_Q)))
    llm = ScriptedChatModel([nothing_for(NOTHING_Q, deep_search_responder(
        {"Betrieb": lambda p: f"Milvus Lite läuft im Prozess [{number_of(p, LITE)}]. Das ist wirklich sehr schön.",
         "Preise": lambda p: "Kostet nichts."},
        lambda p: draft_of(p) + "\n\n## Widersprüche und offene Fragen\n\nKeine."))] * 12)
    report = write_long_report(make_ctx(llm, "Wie funktioniert Milvus Lite und was kostet es?"), "deep_search",
                               outline)
    assert f"## Preise\n\nDie Quellen enthalten nichts zu „{NOTHING_Q}“." in report.answer
    assert "Das ist wirklich sehr schön. *(ohne Quelle)*" in report.answer


def test_synthesis_sections_are_written_from_the_others_and_never_researched() -> None:
    outline = Outline("Milvus Lite", (Section("Executive summary", "Sum up", True),
                                      Section("Running", "How does Milvus Lite run?"),
                                      Section("Limits", "Which letters may collection names contain?"),
                                      Section("Fazit", "Sum up the findings", True)))
    seen: dict[str, list[str]] = {"synthesis": [], "edit": []}

    def synthesis_or(reply: Responder) -> Responder:
        def wrapped(messages: Any) -> str:
            p = prompt_of(messages)
            if p.startswith("Write the section") and "This section sums up the other sections" in p:
                seen["synthesis"].append(p)
                lite = re.search(r"runs in-process \[(\d+)\]", p).group(1)  # type: ignore[union-attr]
                names = re.search(r"restricted \[(\d+)\]", p).group(1)  # type: ignore[union-attr]
                return f"Milvus Lite runs in-process [{lite}] and restricts names [{names}], costs nothing [2][7]."
            return reply(messages)
        return wrapped

    def edit(p: str) -> str:
        seen["edit"].append(p)
        return draft_of(p) + "\n\n## Contradictions and open questions\n\nNone."

    llm = ScriptedChatModel([synthesis_or(deep_search_responder(
        {"Running": lambda p: f"Milvus Lite runs in-process [{number_of(p, LITE)}].",
         "Limits": lambda p: f"Names are restricted [{number_of(p, NAMES)}]."}, edit))] * 20)
    events: list[Event] = []
    report = write_long_report(make_ctx(llm, Q, events=events), "deep_search", outline)
    prompts = llm.prompts
    # no search, relevance or decomposition for the synthesis sections' "questions"
    assert not [p for p in prompts if "Sum up" in p and not p.startswith(("Write the section", "Below is the draft"))]
    assert len(seen["synthesis"]) == 2
    first = seen["synthesis"][0]
    assert first.startswith('Write the section "Executive summary"') and \
        "## Running\n\nMilvus Lite runs in-process [" in first and "## Limits\n\nNames are restricted [" in first
    assert "## Fazit" not in first and "## Executive summary" not in first  # only the researched sections
    # a number no researched section cites is removed from the synthesis text, and counted
    summary = report.answer.split("## Executive summary\n\n", 1)[1].split("\n\n", 1)[0]
    assert summary == "Milvus Lite runs in-process [1] and restricts names [2], costs nothing."
    assert report.removed_citations == 4  # [2] (a store item no section cites) and [7], in each synthesis section
    assert [s.chunk.text for s in report.sources] == [LITE, NAMES]
    # the editing pass is told the synthesis sections frame the report (no second introduction / conclusion)
    assert 'add no introduction or conclusion: the sections "Executive summary", "Fazit" already sum up' in \
        seen["edit"][0]
    assert [q.question for q in report.questions] == ["How does Milvus Lite run?",
                                                      "Which letters may collection names contain?"]
    assert [(e["index"], e["status"]) for e in of_kind(events, "query.section")] == [
        (2, "research"), (2, "written"), (3, "research"), (3, "written"), (1, "synthesis"), (1, "written"),
        (4, "synthesis"), (4, "written"), (0, "editing")]
    assert of_kind(events, "query.outline")[0]["sections"][0] == {"title": "Executive summary",
                                                                   "question": "Sum up", "synthesis": "true"}


@pytest.mark.parametrize(("title", "synthesis"), [
    ("Executive summary", True), ("2. Conclusion", True), ("**Overview**", True), ("Zusammenfassung", True),
    ("Fazit:", True), ("Résumé", True), ("Conclusiones", True), ("Visão geral", True), ("Введение", True),
    ("结论", True), ("まとめ", True), ("결론", True), ("الخاتمة", True), ("IV. Summary", True),
    ("Introduction to Milvus Lite", False), ("Limits", False), ("Summary statistics of the index", False),
])
def test_synthesis_titles_in_several_languages(title: str, synthesis: bool) -> None:
    from deepsearcher.agents.long_report.outline import is_synthesis_title

    assert is_synthesis_title(title) is synthesis


def test_outline_files_mark_synthesis_sections() -> None:
    text = ("# T\n\n## Executive summary\n\n## Basics\nWhat is it?\n\n## Wrap-up\nSynthesis: the findings\n\n"
            "## Overview\nWhich editions of Milvus exist?\n")
    outline = parse_outline(text)
    assert outline.sections == (Section("Executive summary", "Sum up the other sections: Executive summary", True),
                                Section("Basics", "What is it?"), Section("Wrap-up", "the findings", True),
                                Section("Overview", "Which editions of Milvus exist?"))  # its author's question
    assert parse_outline(outline_markdown(outline)) == outline
    with pytest.raises(ConfigError, match=r"only synthesis sections \(Summary, Fazit\): nothing to research"):
        parse_outline("## Summary\n\n## Fazit\n")


def test_a_planned_outline_marks_synthesis_by_flag_or_title() -> None:
    from deepsearcher.agents.long_report.outline import plan_outline

    planned = {"title": "T", "sections": [{"title": "Executive summary", "question": "Sum it up"},
                                          {"title": "Basics", "question": "What is it?"},
                                          {"title": "Big picture", "question": "How does it fit?",
                                           "synthesis": True}]}
    outline, _ = plan_outline(make_ctx(ScriptedChatModel([json.dumps(planned)]), Q))
    assert [s.synthesis for s in outline.sections] == [True, False, True]


def test_an_outline_of_only_synthesis_sections_is_researched() -> None:
    from deepsearcher.agents.long_report.agent import researchable

    only = Outline("T", (Section("Summary", "What is Milvus Lite?", True), Section("Conclusion", "Limits?", True)))
    assert [s.synthesis for s in researchable(only).sections] == [False, False]
    mixed = Outline("T", (Section("Overview", "Sum up", True), Section("Basics", "What is Milvus Lite?")))
    assert researchable(mixed) == mixed
