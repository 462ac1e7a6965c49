"""The relevance step's check passage (agents/relevance_check.py): a reply that picks it keeps every chunk of its
call, and after ``relevance_check_strikes`` such replies (default 2) the rest of the run keeps every chunk; a model
that reads is unaffected and its numbers still name the right chunks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from deepsearcher.agents import deep_search, prompts
from deepsearcher.agents.relevance_check import PASSAGES, check_passage, check_position, chunk_numbers_without
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import Chunk
from tests.unit.query_fakes import make_ctx, of_kind

Q = "What is Milvus Lite and what are its limits?"
SUBS = ["Milvus Lite local file", "collection name rules"]


def j(**value: object) -> str:
    return json.dumps(value)


def blocks(prompt: str) -> dict[int, str]:
    """The numbered chunks of a relevance prompt: number -> its title line and text."""
    body = prompt.split("found by the search.", 1)[1]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"(?ms)^\[(\d+)\] (.*?)(?=^\[\d+\] |\n\nReply with)", body)}


def script(relevance: Any) -> Any:
    """A model for deep_search: two sub-queries, ``relevance(prompt)`` for each relevance prompt, no gaps, a report."""
    def reply(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Break the question"):
            return j(sub_queries=SUBS)
        if "numbered text chunks" in p:
            return j(relevant=relevance(p))
        if "Search queries already run" in p:
            return j(gap_queries=[])
        return "Answer: a file\n\nIt keeps a local file [1]."
    return reply


def relevance_prompts(llm: ScriptedChatModel) -> list[str]:
    return [p for p in llm.prompts if "numbered text chunks" in p]


@pytest.mark.parametrize("strikes", [2, 1])
def test_a_model_that_marks_every_chunk_fails_the_check_and_the_rest_of_the_run_keeps_every_chunk_without_asking(
        strikes: int):
    llm = ScriptedChatModel([script(lambda p: sorted(blocks(p)))] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True, relevance_check_strikes=strikes))
    asked = relevance_prompts(llm)
    assert len(asked) == strikes  # the question's chunks (and one sub-query's); the rest were kept without a call
    checked = [[n for n, text in blocks(p).items() if any(title in text for title, _, _ in PASSAGES)] for p in asked]
    assert all(len(c) == 1 for c in checked)
    assert len(blocks(asked[0])) == 4  # 3 retrieved (top_k 3) + the check passage
    fallbacks = of_kind(events, "query.fallback")
    assert len(fallbacks) == strikes and {f["step"] for f in fallbacks} == {"relevance"}
    assert all(f"marked the check passage [{n}]" in f["error"] for f, [n] in zip(fallbacks, checked))
    assert [f["fallback"] for f in fallbacks] == [
        "keeping every chunk of this call (2 such replies in a run keep every retrieved chunk from then on)"
    ][:strikes - 1] + ["keeping every retrieved chunk for the rest of this run"]
    accepted = [a for a in of_kind(events, "query.accepted") if a["retrieved"]]  # (a query with nothing new: none)
    assert len(accepted) >= 2 and all(a["accepted"] == a["retrieved"] and a["fell_back"] for a in accepted)
    assert sum(a["accepted"] for a in accepted) == sum(a["retrieved"] for a in accepted) > 3


def test_a_model_that_slips_once_keeps_its_judgement_on_every_other_call():
    # recorded with the bundled 1.5B model on HotpotQA: {"relevant": [1, 2]} with the check at 2 for the question
    # and the right chunk alone on the run's other calls; stopping at that one catch kept every chunk of the run
    calls: list[int] = []

    def slips_on_the_first(prompt: str) -> list[int]:
        calls.append(1)
        shown = blocks(prompt)
        if len(calls) == 1:
            return sorted(shown)[:2]  # the first two numbers: the check (at 1 or 2) among them
        return [n for n, text in shown.items() if "Lite" in text]

    llm = ScriptedChatModel([script(slips_on_the_first)] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True))
    asked = relevance_prompts(llm)
    assert len(asked) == 2  # the question and the sub-query that found a new chunk: both asked, both checked
    assert all(any(title in p for title, _, _ in PASSAGES) for p in asked)
    fallbacks = of_kind(events, "query.fallback")
    assert len(fallbacks) == 1 and "marked the check passage" in fallbacks[0]["error"]
    assert fallbacks[0]["fallback"].startswith("keeping every chunk of this call (2 such replies in a run")
    accepted = [a for a in of_kind(events, "query.accepted") if a["retrieved"]]
    assert [a["fell_back"] for a in accepted] == [True, False]  # judged again after the slip, nothing re-admitted
    assert accepted[0]["accepted"] == accepted[0]["retrieved"] == 3
    assert accepted[1]["accepted"] == 0 < accepted[1]["retrieved"]  # "Collection names may contain only …": judged


def test_a_reading_model_never_picks_the_check_and_its_numbers_still_name_the_chunks_it_chose():
    chosen: list[str] = []

    def reading(prompt: str) -> list[int]:
        picked = [n for n, text in blocks(prompt).items() if "Lite" in text]
        chosen.extend(blocks(prompt)[n] for n in picked)
        return picked

    llm = ScriptedChatModel([script(reading)] * 10)
    events: list[Event] = []
    report = deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True))
    assert not of_kind(events, "query.fallback")
    asked = relevance_prompts(llm)
    assert asked and all(len(blocks(p)) == int(p.split("Below are ")[1].split()[0]) for p in asked)
    for prompt in asked:  # the check passage sits where check_position says, for this prompt's query and count
        query = prompt.split("Search query: ", 1)[1].split("\n", 1)[0]
        shown = blocks(prompt)
        position = check_position(query, len(shown) - 1)
        assert shown[position].startswith(check_passage(Q, query).title)
    kept = {s.chunk.text for s in report.sources}
    accepted = sum(a["accepted"] for a in of_kind(events, "query.accepted"))
    assert accepted == len(chosen) > 0
    assert all("Lite" in text for text in kept)
    assert not any(title in text for text in chosen for title, _, _ in PASSAGES)


def test_off_the_prompt_has_no_check_passage():
    llm = ScriptedChatModel([script(lambda p: [1])] * 10)
    deep_search.run(make_ctx(llm, Q, relevance_check=False))
    assert relevance_prompts(llm)
    assert not any(title in p for p in relevance_prompts(llm) for title, _, _ in PASSAGES)


def test_the_check_passage_shares_no_words_with_the_question_and_sits_where_a_pattern_starts():
    assert check_passage("How do I keep a sourdough starter alive?", "sourdough starter feeding").title != \
        "Sourdough starter"
    assert check_passage("Why do sea anemones close at low tide?", "anemones tide pools").title != "Tide pools"
    positions = {check_position(q, 5) for q in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]}
    assert positions == {1, 2}  # a reply by pattern starts at the first numbers (the 0.5B model: [1, 2, 4])
    assert "[1, 3]" not in prompts.RELEVANCE  # an example with numbers is copied (the 1.5B model, 2 of 3 MuSiQue)
    assert check_position("a", 0) == check_position("b", 0) == 1


def test_a_model_that_answers_by_a_pattern_fails_the_check_on_every_prompt_it_is_asked():
    llm = ScriptedChatModel([script(lambda p: [1, 2, 4])] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True))
    assert len(relevance_prompts(llm)) == 2  # caught on both: the run stops asking
    assert all("marked the check passage" in f["error"] for f in of_kind(events, "query.fallback"))


def test_the_numbers_after_the_check_passage_move_down_by_one():
    assert chunk_numbers_without({1, 3, 4, 6}, 3) == {1, 3, 5}
    assert chunk_numbers_without({2}, 1) == {1}


def test_once_the_check_fails_the_chunks_earlier_replies_left_out_are_accepted_too():
    calls: list[int] = []

    def first_keeps_one_then_picks_the_check(prompt: str) -> list[int]:
        calls.append(1)
        numbers = sorted(blocks(prompt))
        readable = [n for n in numbers if not any(title in blocks(prompt)[n] for title, _, _ in PASSAGES)]
        if len(calls) == 1:
            return readable[:1]  # a judgment that drops the other chunks
        return numbers  # every number: the check passage too

    llm = ScriptedChatModel([script(first_keeps_one_then_picks_the_check)] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True, relevance_check_strikes=1))
    assert len(calls) == 2
    accepted = of_kind(events, "query.accepted")
    assert accepted[0]["accepted"] == 1 and accepted[0]["retrieved"] == 3
    again = [a for a in accepted if a["sub_query"] == accepted[0]["sub_query"]][1]  # the re-admitted two, listed
    assert again["accepted"] == 2 and again["fell_back"] and len(again["chunks"]) == 2
    fallbacks = of_kind(events, "query.fallback")
    assert len(fallbacks) == 2 and "marked the check passage" in fallbacks[0]["error"]
    assert fallbacks[1]["error"] == ("earlier relevance replies of this run came from the model that picked the check "
                                     "passage")
    assert fallbacks[1]["fallback"] == "accepted the 2 chunk(s) they did not keep"
    report_prompt = llm.prompts[-1]
    for text in blocks(relevance_prompts(llm)[0]).values():  # the chunks the first reply left out reach the report
        if not any(title in text for title, _, _ in PASSAGES):
            assert text.split("\n", 1)[1][:40] in report_prompt


def test_once_the_check_fails_the_chunks_the_window_kept_out_of_earlier_prompts_are_accepted_too():
    from tests.unit.agents.test_agent_window import long_store, server, steps_reply

    calls: list[int] = []

    def respond(prompt: str) -> str:
        if "numbered text chunks" not in prompt:
            return steps_reply(prompt)
        calls.append(1)
        numbers = sorted(blocks(prompt))
        readable = [n for n in numbers if not any(title in blocks(prompt)[n] for title, _, _ in PASSAGES)]
        return j(relevant=readable[:1] if len(calls) == 1 else numbers)

    llm = ScriptedChatModel([server(2560, respond)] * 20, context_window=2560, max_tokens=1024)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, "What are the rules for receipts and for trips?", collections=("expenses", "travel"),
                             store=long_store(), events=events, top_k=10, relevance_check=True,
                             relevance_check_strikes=1))
    first = of_kind(events, "query.accepted")[0]
    shown = len(blocks(relevance_prompts(llm)[0])) - 1  # without the check passage
    assert shown < first["retrieved"]  # the window fitter left some out of the first prompt
    assert of_kind(events, "query.trimmed")[0]["step"] == "relevance"
    readmitted = [f for f in of_kind(events, "query.fallback") if f["fallback"].startswith("accepted the")]
    # every retrieved chunk the first call did not keep, those never shown too: a later call keeps them all
    assert readmitted[0]["fallback"] == f"accepted the {first['retrieved'] - 1} chunk(s) they did not keep"
    later = [a for a in of_kind(events, "query.accepted")[1:] if a["retrieved"] and not a["sub_query"] ==
             first["sub_query"]]
    assert all(a["accepted"] == a["retrieved"] for a in later)  # after the failure: every retrieved chunk


# ChainOfRAG's intermediate step picks supporting chunks by number: the same check, at its own example's numbers

FOLLOW_UPS = ["Where does Milvus Lite store data?", "Which characters may collection names use?"]


def intermediate_blocks(prompt: str) -> dict[int, str]:
    body = prompt.split("Follow-up question: ", 1)[1].split("\n", 1)[1]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"(?ms)^\[(\d+)\] (.*?)(?=^\[\d+\] |\n\nReply with)", body)}


def chain_script(supporting: Any) -> Any:
    """A model for chain_of_rag: two follow-ups, ``supporting(prompt)`` for each intermediate prompt, a report."""
    asked: list[str] = []

    def reply(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Question:") and "Research steps so far" in p:
            left = [f for f in FOLLOW_UPS if f not in asked]
            if not left:
                return j(enough=True, follow_up="")
            asked.append(left[0])
            return j(enough=False, follow_up=left[0])
        if p.startswith("Answer the follow-up question"):
            return j(answer="In a local file.", supporting=supporting(p))
        return "Answer: a local file\n\nIt keeps a local file [1]."
    return reply


def intermediate_prompts(llm: ScriptedChatModel) -> list[str]:
    return [p for p in llm.prompts if p.startswith("Answer the follow-up question")]


def test_chain_of_rag_a_model_that_copies_the_example_lists_the_check_and_every_retrieved_chunk_is_kept():
    from deepsearcher.agents import chain_of_rag

    llm = ScriptedChatModel([chain_script(lambda p: [1, 2])] * 10)  # prompts.INTERMEDIATE's example reply
    events: list[Event] = []
    report = chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    first, *later = intermediate_prompts(llm)
    checked = [n for n, text in intermediate_blocks(first).items() if any(t in text for t, _, _ in PASSAGES)]
    assert len(checked) == 1 and checked[0] in (1, 2)  # where the example points
    assert checked[0] == check_position(Q, 3, (1, 2))  # the first step searches the question itself
    second, *after = later
    assert any(t in second for t, _, _ in PASSAGES)  # caught once: the next step is checked again
    assert after and not any(t in p for p in after for t, _, _ in PASSAGES)  # after the second catch: no check
    fallbacks = of_kind(events, "query.fallback")
    assert len(fallbacks) == 2 and {f["step"] for f in fallbacks} == {"intermediate"}
    assert f"listed the check passage [{checked[0]}]" in fallbacks[0]["error"]
    assert fallbacks[1]["fallback"] == "keeping every retrieved chunk for the rest of this run"
    accepted = of_kind(events, "query.accepted")
    assert len(accepted) == len(later) + 1 and all(a["retrieved"] == 3 and a["fell_back"] for a in accepted)
    assert accepted[0]["accepted"] == 3  # all three, not the two numbers of the copied example
    assert not any(t in s.chunk.title for s in report.sources for t, _, _ in PASSAGES)
    assert of_kind(events, "query.intermediate")[0]["answer"] == "In a local file."  # its answer is kept


def test_chain_of_rag_a_reading_model_keeps_the_chunks_it_names_numbered_without_the_check():
    from deepsearcher.agents import chain_of_rag

    def reading(prompt: str) -> list[int]:
        return [n for n, text in intermediate_blocks(prompt).items() if "Lite" in text]

    llm = ScriptedChatModel([chain_script(reading)] * 10)
    events: list[Event] = []
    chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    assert not of_kind(events, "query.fallback")
    prompts_ = intermediate_prompts(llm)
    assert len(prompts_) == 3 and all(any(t in p for t, _, _ in PASSAGES) for p in prompts_)  # Q + 2 follow-ups
    kept = {c["source"] for a in of_kind(events, "query.accepted") for c in a["chunks"]}
    named = {text.split("(", 1)[1].split(")", 1)[0] for p in prompts_ for text in intermediate_blocks(p).values()
             if "Lite" in text}
    assert kept and kept == named  # the chunks it named, by their numbers with the check passage taken out
    assert not any(a["fell_back"] for a in of_kind(events, "query.accepted"))


def test_chain_of_rag_without_the_check_keeps_the_numbers_it_is_given():
    from deepsearcher.agents import chain_of_rag

    llm = ScriptedChatModel([chain_script(lambda p: [1, 2])] * 10)
    events: list[Event] = []
    chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=False, max_iter=3))
    assert not any(t in p for p in intermediate_prompts(llm) for t, _, _ in PASSAGES)
    assert of_kind(events, "query.accepted")[0]["accepted"] == 2


def test_chain_of_rag_an_intermediate_answer_taken_from_the_check_passage_is_dropped():
    # measured: Qwen2.5-Coder-0.5B answered a MuSiQue follow-up with the check passage's title ("Sourdough starter"),
    # which the report prompt's notes carried into the short answer
    from deepsearcher.agents import chain_of_rag

    script = chain_script(lambda p: [1, 2])

    def from_the_check(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Answer the follow-up question"):
            title = next((t for t, _, _ in PASSAGES if t in p), "In a local file.")  # no check after the second
            return j(answer=title, supporting=[1, 2])
        return script(messages)

    llm = ScriptedChatModel([from_the_check] * 10)
    events: list[Event] = []
    chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    dropped = [f for f in of_kind(events, "query.fallback") if "is taken from the check passage" in f["error"]]
    assert len(dropped) == 2 and dropped[0]["fallback"] == "no intermediate answer for this step"
    assert [i["answer"] for i in of_kind(events, "query.intermediate")][:3] == ["", "", "In a local file."]
    later = [p for p in llm.prompts if not p.startswith("Answer the follow-up question")]
    assert not any(t in p for p in later for t, _, _ in PASSAGES)  # never in a follow-up or the report prompt


@pytest.mark.parametrize("answer, dropped", [
    ("Sourdough starter", True), ("Feed it flour and water every twelve hours.", True),
    ("In a local file.", False), ("Milvus Lite stores data in a local file.", False),
])
def test_drawn_from_check_needs_a_word_only_the_check_passage_has(answer: str, dropped: bool):
    from deepsearcher.agents.relevance_check import drawn_from_check

    title, source, text = PASSAGES[0]  # the sourdough passage
    passage = Chunk(id="relevance-check", text=text, source=source, title=title, page=None, chunk_index=0,
                    doc_hash="")
    shown = [Chunk(id="c", text="Milvus Lite keeps its data in a local file.", source="/d/lite.md", title="lite",
                   page=None, chunk_index=0, doc_hash="")]
    assert drawn_from_check(answer, passage, shown, "Where does Milvus Lite store data?") is dropped


def test_each_catch_is_said_until_the_strikes_are_spent_and_only_then_the_check_has_failed():
    from deepsearcher.agents.relevance_check import RelevanceCheck, numbers_past_check

    check, said = RelevanceCheck(strikes=2), []
    passage = check_passage(Q, Q)
    past = [numbers_past_check(check, said.append, chosen, 2, passage, step="relevance", picked="marked {check}")
            for chosen in ({1, 3}, {2}, {1, 2}, {2, 4})]
    assert past == [{1, 2}, None, None, None]  # a reply past the check is renumbered; each catch keeps every chunk
    assert check.catches == 3 and check.failed
    assert [e.data["fallback"] for e in said] == [  # the third catch (a call already in flight) says nothing more
        "keeping every chunk of this call (2 such replies in a run keep every retrieved chunk from then on)",
        "keeping every retrieved chunk for the rest of this run"]
    assert all(f"marked the check passage [2] (“{passage.title}”" in e.data["error"] for e in said)
    assert not RelevanceCheck(strikes=2, catches=1).failed and RelevanceCheck(strikes=1, catches=1).failed
    three, said = RelevanceCheck(strikes=3), []
    numbers_past_check(three, said.append, {2}, 2, passage, step="relevance", picked="marked {check}")
    assert said[0].data["fallback"].startswith("keeping every chunk of this call (3 such replies in a run")


def test_concurrent_catches_are_said_at_most_strikes_times_and_every_chunk_is_kept():
    llm = ScriptedChatModel([script(lambda p: sorted(blocks(p)))] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=True, concurrency=4))
    said = [f["fallback"] for f in of_kind(events, "query.fallback") if "marked the check passage" in f["error"]]
    assert said.count("keeping every retrieved chunk for the rest of this run") == 1 and len(said) == 2
    assert all(f.startswith("keeping every") for f in said)  # each true whatever order the events are shown in
    accepted = [a for a in of_kind(events, "query.accepted") if a["retrieved"]]
    assert accepted and all(a["accepted"] == a["retrieved"] and a["fell_back"] for a in accepted)


def test_chain_of_rag_a_step_that_slips_once_keeps_its_judgement_on_the_later_steps():
    from deepsearcher.agents import chain_of_rag

    steps: list[int] = []

    def slips_on_the_first(prompt: str) -> list[int]:
        steps.append(1)
        if len(steps) == 1:
            return [1, 2]  # the example's numbers: the check passage among them
        return [n for n, text in intermediate_blocks(prompt).items() if "Lite" in text]

    llm = ScriptedChatModel([chain_script(slips_on_the_first)] * 10)
    events: list[Event] = []
    chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    asked = intermediate_prompts(llm)
    assert len(asked) == 3 and all(any(t in p for t, _, _ in PASSAGES) for p in asked)  # every step checked
    fallbacks = of_kind(events, "query.fallback")
    assert len(fallbacks) == 1 and fallbacks[0]["step"] == "intermediate"
    assert fallbacks[0]["fallback"].startswith("keeping every chunk of this call (2 such replies in a run")
    accepted = of_kind(events, "query.accepted")
    assert accepted[0]["fell_back"] and accepted[0]["accepted"] == accepted[0]["retrieved"]
    assert not any(a["fell_back"] for a in accepted[1:])  # the later steps keep only the chunks they name
    judged = [a for a in accepted[1:] if a["retrieved"]]
    assert judged and all(a["accepted"] < a["retrieved"] for a in judged)


@pytest.mark.parametrize("checking", [True, False])
@pytest.mark.parametrize("named", [[9], [0], [-1, 40]])
def test_a_reply_naming_only_chunks_not_shown_keeps_every_chunk_of_its_call(checking: bool, named: list[int]):
    # "[9]" for a prompt of four chunks, or "[0]" counted from zero, judges none of them (a helper's break test:
    # such a reply kept nothing, silently); the call keeps what it retrieved and says so
    llm = ScriptedChatModel([script(lambda p: named)] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events, relevance_check=checking))
    accepted = [a for a in of_kind(events, "query.accepted") if a["retrieved"]]  # a query with nothing new: no call
    assert accepted and all(a["fell_back"] and a["accepted"] == a["retrieved"] for a in accepted)
    said = [f for f in of_kind(events, "query.fallback") if "did not show" in f["error"]]
    assert len(said) == len(relevance_prompts(llm)) == len(accepted)
    total = len(blocks(relevance_prompts(llm)[0]))
    assert said[0]["error"].endswith(f"it showed [1] to [{total}])") and said[0]["step"] == "relevance"


def test_numbers_out_of_range_beside_shown_ones_are_ignored():
    llm = ScriptedChatModel([script(lambda p: [1, 99])] * 10)
    events: list[Event] = []
    deep_search.run(make_ctx(llm, Q, events=events))
    assert not of_kind(events, "query.fallback")
    accepted = [a for a in of_kind(events, "query.accepted") if a["retrieved"]]
    assert accepted and all(not a["fell_back"] and a["accepted"] == 1 for a in accepted)


def test_chain_of_rag_an_answer_listing_only_chunks_not_shown_keeps_every_chunk_of_its_step():
    from deepsearcher.agents import chain_of_rag

    llm = ScriptedChatModel([chain_script(lambda p: [12])] * 10)
    events: list[Event] = []
    chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=1))
    first = of_kind(events, "query.accepted")[0]
    assert first["fell_back"] and first["accepted"] == first["retrieved"] > 0
    said = of_kind(events, "query.fallback")
    assert [f["step"] for f in said] == ["intermediate"] and "[12]" in said[0]["error"]


def test_chain_of_rag_one_call_a_reply_taken_from_the_check_passage_decides_nothing():
    # its answer did not come from the chunks, so neither did its "enough": the follow-up is asked apart, and the
    # next step's chain shows no answer for that step, not the check passage's words
    from deepsearcher.agents import chain_of_rag

    script = chain_script(lambda p: [1, 2])
    titles: list[str] = []

    def from_the_check(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Answer the follow-up question"):
            title = next((t for t, _, _ in PASSAGES if t in p), None)
            if title is None:
                return j(answer="In a local file.", supporting=[1], enough=True, follow_up="")
            titles.append(title)
            return j(answer=title, supporting=[1, 2], enough=True, follow_up="")
        return script(messages)

    llm = ScriptedChatModel([from_the_check] * 10)
    events: list[Event] = []
    report = chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    follow_up_calls = [p for p in llm.prompts if p.startswith("Question:") and "Decide whether" in p]
    assert titles and len(follow_up_calls) == len(titles)  # each caught reply's decision was asked again
    assert report.sub_queries[:2] == [Q, FOLLOW_UPS[0]]
    second = intermediate_prompts(llm)[1]
    chain = second.split("Research steps so far", 1)[1].split("Follow-up question:", 1)[0]
    assert "(no answer found)" in chain and not any(t in chain for t in titles)


def test_chain_of_rag_one_call_a_follow_up_taken_from_the_check_passage_is_not_searched():
    # the reply read the chunks (its answer and numbers are right) but named its next question from the check
    # passage: that question is asked again apart, with the chain, and the answer kept (a helper's probe, 2026-12-03)
    from deepsearcher.agents import chain_of_rag

    off_topic = {"Sourdough starter": "How often should the sourdough starter be fed?",
                 "Tide pools": "Why do sea anemones close their tentacles at low tide?",
                 "Bicycle chain care": "How should a bicycle chain be oiled after a wet ride?"}
    assert set(off_topic) == {t for t, _, _ in PASSAGES}

    def reply(messages: Any) -> str:
        p = messages[-1]["content"]
        if p.startswith("Answer the follow-up question"):
            title = next((t for t, _, _ in PASSAGES if t in p), None)
            real = [n for n, text in intermediate_blocks(p).items() if not any(t in text for t in off_topic)]
            return j(answer="It runs in-process.", supporting=real[:1], enough=title is None,
                     follow_up=off_topic[title] if title else "")
        return j(enough=True, follow_up="") if p.startswith("Question:") else "Answer [1]."

    llm = ScriptedChatModel([reply] * 10)
    events: list[Event] = []
    report = chain_of_rag.run(make_ctx(llm, Q, events=events, relevance_check=True, max_iter=3))
    assert report.sub_queries == [Q] and not set(report.sub_queries) & set(off_topic.values())
    caught = of_kind(events, "query.fallback")
    assert len(caught) == 1 and "is taken from the check passage" in caught[0]["error"]
    assert caught[0]["fallback"] == "asking for the next follow-up in a call of its own"
    assert of_kind(events, "query.intermediate")[0]["answer"] == "It runs in-process."
