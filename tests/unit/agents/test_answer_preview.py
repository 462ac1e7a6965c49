"""The answer a preview streams (``query.answer_token``, taken back by ``query.answer_restart``) ends as the reply the
report is read from when a report reply is asked for again or stopped. Before, the second reply's text was appended
to the first's in the CLI's live view and on the page ("Answer: [1][2]Answer: a local file …")."""
from __future__ import annotations

import io
from typing import Sequence

from rich.console import Console

from deepsearcher.agents import naive_rag
from deepsearcher.agents.reply_guard import COPYING
from deepsearcher.cli.render import QueryProgress
from deepsearcher.events import Event, QueryAnswerRestart, QueryAnswerToken
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.agents.test_offered_options import QUESTION as OPTIONS_QUESTION
from tests.unit.agents.test_reply_guard import EXPLAINED, QUESTION, headers, pasting
from tests.unit.query_fakes import make_ctx, of_kind


def preview(events: Sequence[Event]) -> str:
    """The streamed answer as a consumer that applies both events shows it at the end."""
    shown = ""
    for event in events:
        if isinstance(event, QueryAnswerToken):
            shown += event.text
        elif isinstance(event, QueryAnswerRestart):
            assert 0 < event.dropped <= len(shown)
            shown = shown[:len(shown) - event.dropped]
    return shown


def test_a_reply_of_numbers_only_is_taken_back_before_the_words_stream():
    events: list[Event] = []
    words = "Answer: a local file\n\nMilvus Lite stores data in a local file [1]."
    llm = ScriptedChatModel(["Answer: [1][2]", words])
    naive_rag.run(make_ctx(llm, QUESTION, events=events))
    assert of_kind(events, "query.answer_restart") == [
        {"dropped": len("Answer: [1][2]"), "reason": "the reply held only source numbers"}]
    assert preview(events) == words


def test_a_report_asked_for_again_replaces_the_first_in_the_preview():
    events: list[Event] = []
    second = "Answer: Milvus Lite\n\nMilvus Lite stores data in a local file [2]."
    llm = ScriptedChatModel(["Answer: Zilliz Cloud\n\nZilliz Cloud is a managed service [1].", second])
    report = naive_rag.run(make_ctx(llm, OPTIONS_QUESTION, events=events))
    assert report.short_answer == "Milvus Lite"
    assert [r["reason"] for r in of_kind(events, "query.answer_restart")] == ["the report is asked for again"]
    assert preview(events) == second


def test_a_second_report_that_is_discarded_gives_the_preview_back_to_the_first():
    events: list[Event] = []
    first = "Answer: Zilliz Cloud\n\nZilliz Cloud is a managed service [1]."
    llm = ScriptedChatModel([first, "Answer: Zilliz Cloud, again\n\nIt is managed [2]."])
    report = naive_rag.run(make_ctx(llm, OPTIONS_QUESTION, events=events))
    assert report.short_answer == "Zilliz Cloud"
    assert [r["reason"] for r in of_kind(events, "query.answer_restart")] == [
        "the report is asked for again", "the first report is kept"]
    assert preview(events) == first


def test_a_reply_stopped_at_its_copy_of_the_sources_previews_what_was_kept():
    events: list[Event] = []
    llm = ScriptedChatModel([pasting(EXPLAINED, "More of the same. " * 40)], max_tokens=512)
    naive_rag.run(make_ctx(llm, QUESTION, events=events))
    assert [f["error"] for f in of_kind(events, "query.fallback")] == [COPYING]
    streamed = "".join(e.text for e in events if isinstance(e, QueryAnswerToken))
    shown = preview(events)
    (restart,) = of_kind(events, "query.answer_restart")
    assert restart["reason"] == "the reply was stopped"
    # the reply as it streamed until the guard stopped it, then the part kept, streamed again
    original = streamed[:len(streamed) - len(shown)]
    assert restart["dropped"] == len(original) and streamed == original + shown
    assert shown.startswith(f"Answer: {EXPLAINED}") and original.startswith(shown)
    second_header = headers(llm.prompts[0])[1][0]
    assert second_header in original and second_header not in shown  # the copy past the stop is gone


def test_a_reply_that_is_not_replaced_streams_without_a_restart():
    events: list[Event] = []
    reply = "Answer: a local file\n\nMilvus Lite stores data in a local file [1]."
    naive_rag.run(make_ctx(ScriptedChatModel([reply]), QUESTION, events=events))
    assert of_kind(events, "query.answer_restart") == [] and preview(events) == reply


def test_the_cli_live_view_takes_the_text_back_by_code_points():
    progress = QueryProgress(Console(file=io.StringIO()), quiet=True)
    progress.on_event(QueryAnswerToken(text="Stored in a file 📁 "))
    progress.on_event(QueryAnswerToken(text="[1][2]"))
    progress.on_event(QueryAnswerRestart(dropped=len("📁 [1][2]"), reason="the reply held only source numbers"))
    assert progress.answer == "Stored in a file "
    progress.on_event(QueryAnswerRestart(dropped=100, reason="the report is asked for again"))
    assert progress.answer == ""
