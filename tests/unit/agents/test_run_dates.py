"""The run's own date in an answer, which only the system prompt gave (``agents.run_dates``).

The case that found it (2WikiMultihopQA with Qwen2.5-Coder-0.5B, 2026-12-02): "died on 2026-12-02 (Wednesday)".
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.agents.run_dates import dates_in, unsourced_dates
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import memory_app

RUN = {date(2026, 12, 2)}


@pytest.mark.parametrize("written", [
    "2026-12-02", "2026/12/02", "2026.12.2", "02.12.2026", "12/02/2026", "2/12/2026", "December 2, 2026",
    "Dec 2 2026", "dec. 2nd, 2026", "2 December 2026", "2nd of December, 2026", "02 Dec 2026",
])
def test_every_form_of_the_run_date_is_found(written: str) -> None:
    answer = f"The director died on {written} (Wednesday) [1]."
    assert unsourced_dates([answer], RUN, ["The director lived in Lyon."]) == [written]


@pytest.mark.parametrize("answer", [
    "He died on 1987-03-14 [1].",          # another date
    "Released in December 2026 [1].",      # a month, not a day
    "Version 2026.12.20 was tagged [1].",  # another day
    "Call 12/02/20265 or 2026-12-021.",    # digits running on: no date
    "Build 112/02/2026x",                  # a number before the day
])
def test_other_dates_and_numbers_are_not_the_run_date(answer: str) -> None:
    assert unsourced_dates([answer], RUN, []) == []


@pytest.mark.parametrize("written", ["December 2, 1926", "2 Dec 1926", "1926-12-02", "02.12.1926"])
def test_the_run_day_and_month_with_another_year_is_found_too(written: str) -> None:
    # measured: Qwen2.5-Coder-0.5B wrote "December 2, 1926" on 2026-12-02 for a date no document gave
    answer = f"Lambert died on {written} [1]."
    assert unsourced_dates([answer], RUN, ["Lambert of Tuscany died after 938."]) == [written]
    assert unsourced_dates([answer], RUN, ["He died on 2 December 1926 in Lucca."]) == []  # a source holds it
    assert unsourced_dates(["Lambert died on December 3, 1926 [1]."], RUN, []) == []  # another day


def test_the_run_date_in_the_question_or_a_source_is_supported_in_any_form() -> None:
    answer = "The release was on 2026-12-02 [1]."
    assert unsourced_dates([answer], RUN, ["What was released on December 2, 2026?"]) == []
    assert unsourced_dates([answer], RUN, ["Changelog: 02.12.2026 — version 3 released."]) == []
    assert unsourced_dates([answer, "2026-12-02"], RUN, ["Changelog: 3 December 2026."]) == ["2026-12-02"]


def test_an_impossible_numeric_date_is_read_in_its_one_possible_order() -> None:
    assert [d for _, d in dates_in("on 25/12/2026")] == [date(2026, 12, 25)]
    assert [d for _, d in dates_in("on 12/02/2026")] == [date(2026, 2, 12), date(2026, 12, 2)]
    assert list(dates_in("on 2026-13-45")) == []


def test_a_query_whose_answer_copies_the_prompt_date_says_so_in_the_report() -> None:
    today = datetime.now().astimezone().date().isoformat()
    llm = ScriptedChatModel([f"Milvus Lite was released on {today} (Wednesday) [1]."])
    report = memory_app(llm).query("When was Milvus Lite released?", agent="naive", collections=["milvus"])
    assert today in llm.history[0].system  # where the model read it: every prompt carries the date
    assert report.unsourced_dates == [today]
    assert report.to_dict()["unsourced_dates"] == [today]
    markdown = report_markdown(report)
    assert f"**Dates.** The answer gives “{today}”: the day and month of this run's date" in markdown
    assert f"released on {today}" in markdown  # the text stays: a reader sees what the model wrote


def test_a_query_that_names_the_date_itself_gets_no_date_note() -> None:
    today = datetime.now().astimezone().date().isoformat()
    llm = ScriptedChatModel([f"Nothing in the documents mentions {today} [1]."])
    report = memory_app(llm).query(f"What happened to Milvus Lite on {today}?", agent="naive",
                                   collections=["milvus"])
    assert report.unsourced_dates == []
    assert "**Dates.**" not in report_markdown(report)


def test_a_source_that_gives_the_date_in_a_form_not_parsed_or_in_one_reading_supports_it() -> None:
    # a numeric date is supported when either reading is
    assert unsourced_dates(["Sie starb am 12.02.1990."], RUN, ["12. Februar 1990 (1990-02-12)."]) == []
    # another year in a form dates_in does not read: the source names the year, so it is not flagged
    assert unsourced_dates(["He won on December 2, 1805 [1]."], RUN, ["the second of December 1805, Austerlitz"]) == []
    # the run's own date stays flagged whatever else the sources say about that year
    assert unsourced_dates(["It shipped on 2026-12-02 [1]."], RUN, ["Version 3 shipped in 2026."]) == ["2026-12-02"]
