"""DeepResearch with a scripted model (issue #12): the action-availability rules, the gap-question queue, dedup, the
evaluator, beast mode, and the report; every test asserts on the prompts the model received."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from deepsearcher.agents import prompts
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.agents.deep_research.agent import DeepResearchAgent, research
from deepsearcher.agents.deep_research.knowledge import KnowledgeStore
from deepsearcher.agents.deep_research.options import DeepResearchOptions
from deepsearcher.agents.deep_research.run import research_context
from deepsearcher.agents.deep_research.state import ResearchState, allowed_actions
from deepsearcher.agents.tools import ResearchTools
from deepsearcher.agents.report import nothing_found
from deepsearcher.events import Event
from deepsearcher.llm.base import ChatResult
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import Hit, Report, WebResult
from deepsearcher.testing import MemoryStore
from tests.unit.query_fakes import MILVUS_DOCS, kinds, make_ctx, memory_store, of_kind

Q = "What is Milvus Lite and what are its limits?"
PASS = json.dumps({"definitive": True, "attribution": True, "critique": "", "plan": ""})
CHECKS = json.dumps({"definitive": True, "freshness": False, "plurality": False, "completeness": False,
                     "attribution": True})


def j(**value: object) -> str:
    return json.dumps(value)


def search(*queries: str, think: str = "") -> str:
    return j(action="search", think=think, queries=list(queries))


def answer(text: str) -> str:
    return j(action="answer", answer=text)


def run_agent(llm: ScriptedChatModel, question: str = Q, events: list[Event] | None = None, *,
              tools: ResearchTools | None = None, **options: Any) -> Report:
    store = memory_store()
    ctx = dataclasses.replace(make_ctx(llm, question, store=store, events=events),
                              research=tools if tools is not None else ResearchTools(chunks_around=store.chunks_around))
    return DeepResearchAgent(DeepResearchOptions(**options)).run(ctx)


def steps_of(events: list[Event]) -> list[dict]:
    return of_kind(events, "query.step")


def offered(prompt: str) -> list[str]:
    """The actions a step prompt offers."""
    return [a for a in ("search", "read", "reflect", "answer") if f'\n- "{a}":' in prompt]


def hit(i: int) -> Hit:
    return Hit(MILVUS_DOCS[i], 1.0, "milvus")


# --- the action-availability rules ---------------------------------------------------------------------------------
def rules(state: ResearchState, store: KnowledgeStore, can_open_chunks: bool = True, **options: Any) -> dict:
    return allowed_actions(state, store, DeepResearchOptions(**options), can_open_chunks=can_open_chunks)


def test_first_step_offers_search_and_reflect_only() -> None:
    got = rules(ResearchState.start(Q), KnowledgeStore())
    assert [a for a, why in got.items() if not why] == ["search", "reflect"]
    assert got["answer"] == "no knowledge yet" and got["read"] == "nothing left to open"


def test_no_read_without_unread_items() -> None:
    store = KnowledgeStore()
    store.add_hit(hit(0), Q)
    state = ResearchState.start(Q)
    assert rules(state, store)["read"] == ""                       # a chunk that can be opened
    assert rules(state, store, can_open_chunks=False)["read"] == "nothing left to open"  # a store without neighbours
    store.opened.add("milvus/" + MILVUS_DOCS[0].id)
    assert rules(state, store)["read"] == "nothing left to open"
    store.add_web(WebResult("Ducks", "https://example.org/ducks", "Ducks are birds.", "searxng", 1), Q)
    assert rules(state, store, can_open_chunks=False)["read"] == ""  # a web result's page is always openable


def test_no_answer_right_after_a_rejected_answer() -> None:
    store = KnowledgeStore()
    store.add_hit(hit(0), Q)
    state = ResearchState.start(Q)
    state.next_question()
    state.end_step("answer", rejected=True)
    assert rules(state, store)["answer"] == "the previous answer was rejected"
    state.next_question()
    state.end_step("search")
    assert rules(state, store)["answer"] == ""


def test_no_search_after_n_searches_that_found_nothing_new() -> None:
    state = ResearchState.start(Q)
    state.empty_searches = 1
    assert rules(state, KnowledgeStore(), max_empty_searches=2)["search"] == ""
    state.empty_searches = 2
    assert rules(state, KnowledgeStore(), max_empty_searches=2)["search"] == "2 searches in a row found nothing new"


def test_no_reflect_twice_in_a_row_nor_with_max_gaps_open() -> None:
    state = ResearchState.start(Q)
    state.next_question()
    state.end_step("reflect")
    assert rules(state, KnowledgeStore())["reflect"] == "the previous step reflected"
    state = ResearchState.start(Q)
    state.add_gaps(["g1", "g2"])
    assert rules(state, KnowledgeStore(), max_gaps=3)["reflect"] == ""
    assert rules(state, KnowledgeStore(), max_gaps=2)["reflect"] == "2 gap questions are already open"


def test_no_answer_before_any_knowledge() -> None:
    assert rules(ResearchState.start(Q), KnowledgeStore())["answer"] == "no knowledge yet"


def test_the_prompt_offers_only_the_allowed_actions_and_the_schema_refuses_others() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        answer("Milvus Lite is small [1]."),     # not allowed at step 1: refused by the schema ...
        search("Milvus Lite"),                   # ... so the retry searches
        answer("Milvus Lite runs inside the Python process [1]."), CHECKS, PASS,
    ])
    report = run_agent(llm, events=events)
    assert offered(llm.prompts[0]) == ["search", "reflect"]
    assert '"action": "<search|reflect>"' in llm.prompts[0]
    assert "could not be used" in llm.prompts[1] and "search" in llm.prompts[1]  # the retry shows the error
    assert offered(llm.prompts[2]) == ["search", "read", "reflect", "answer"]
    first = steps_of(events)[0]
    assert first["allowed"] == ["search", "reflect"] and first["disabled"]["answer"] == "no knowledge yet"
    assert report.checks == {"definitive": True, "attribution": True} and not report.beast_mode


def test_the_schema_sent_requires_the_chosen_actions_own_field() -> None:
    """Measured with Qwen2.5-Coder-0.5B on llama-cpp-python (grammar from the schema): with only "action" required
    the model wrote {"action": "answer", "think": "<the answer>"} — 6 of 7 steps unusable, twice each."""
    from deepsearcher.llm.base import json_schema

    llm = ScriptedChatModel([search("Milvus Lite"), answer("Milvus Lite runs inside the Python process [1]."),
                             CHECKS, PASS])
    run_agent(llm)
    sent = json_schema(llm.history[0].schema)  # type: ignore[arg-type]
    branches = {b["properties"]["action"]["const"]: b for b in sent["anyOf"]}
    assert list(branches) == ["search", "reflect"]  # the allowed actions of step 1, nothing else
    assert branches["search"]["required"] == ["action", "think", "queries"]
    assert branches["search"]["properties"]["queries"]["minItems"] == 1
    assert branches["search"]["properties"]["queries"]["items"]["minLength"] == 1
    assert branches["reflect"]["required"] == ["action", "think", "questions"]
    last = {b["properties"]["action"]["const"]: b for b in json_schema(llm.history[1].schema)["anyOf"]}  # type: ignore[arg-type]
    assert last["answer"]["properties"]["answer"]["minLength"] == 1 and last["read"]["properties"]["items"][
        "minItems"] == 1
    assert all(b["additionalProperties"] is False for b in sent["anyOf"])
    assert sent["type"] == "object"  # OpenAI refuses a root without it


@pytest.mark.parametrize("reply, error", [
    ({"action": "answer", "think": "Milvus Lite runs in-process.", "answer": "<answer with [n] citations>"},
     "only repeats the example '<answer with [n] citations>': write the answer itself"),
    ({"action": "answer", "think": "Milvus Lite runs in-process.", "answer": "  "},
     'the "answer" action needs a non-empty "answer" field'),
    ({"action": "answer", "think": "Milvus Lite runs in-process."}, 'needs a non-empty "answer" field'),
    ({"action": "reflect", "think": "What is missing?", "questions": ["<question>"]},
     'the "reflect" action needs a non-empty "questions" field'),
])
def test_a_step_that_leaves_its_field_empty_or_copies_the_example_is_refused(reply: dict[str, Any],
                                                                              error: str) -> None:
    from pydantic import ValidationError

    from deepsearcher.agents.deep_research.schemas import step_model

    with pytest.raises(ValidationError, match=re.escape(error)):
        step_model(("search", "read", "reflect", "answer")).model_validate(reply)


@pytest.mark.parametrize("written, example", [
    ("<answer with [1] citations>", True), ("<The answer with [n] citations>", True), ("<item number>", True),
    ("<Bill Myers>", False), ("<NASCAR Revolution>", False), ("<song Hero: Helen>", False),
])
def test_an_answer_in_the_examples_brackets_is_kept_and_the_example_itself_refused(written: str,
                                                                                  example: bool) -> None:
    # Qwen2.5-Coder-0.5B on HotpotQA (deep_research, 10 questions): 18 answers refused as "the example", of them
    # "<Bill Myers>", "<NASCAR Revolution>", "<Stormfront Studios>" — real answers in the example's brackets
    from pydantic import ValidationError

    from deepsearcher.agents.deep_research.schemas import step_model

    model = step_model(("search", "read", "reflect", "answer"))
    reply = {"action": "answer", "think": "From the knowledge.", "answer": written}
    if example:
        with pytest.raises(ValidationError, match="only repeats the example"):
            model.model_validate(reply)
    else:
        assert getattr(model.model_validate(reply), "answer") == written[1:-1]


def test_llama_cpp_builds_a_grammar_from_every_step_schema() -> None:
    from deepsearcher.agents.deep_research.schemas import step_model
    from deepsearcher.llm.base import json_schema

    grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="needs llama-cpp-python (extra `local`)")
    for allowed in (("search", "reflect"), ("search", "read", "reflect", "answer"), ("answer",), ("reflect",)):
        gbnf = grammar.json_schema_to_gbnf(json.dumps(json_schema(step_model(allowed))))  # type: ignore[arg-type]
        assert all(f'\\"{a}\\"' in gbnf for a in allowed), gbnf


def test_search_is_switched_off_after_searches_found_nothing_new() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        search("milvus lite"),                   # a repeat: not run, nothing new (1)
        search("Milvus Lite lightweight"),        # finds only known chunks (2)
        answer("Milvus Lite runs inside your Python process [1]."), CHECKS, PASS,
    ])
    run_agent(llm, events=events, max_empty_searches=2)
    assert "search" in offered(llm.prompts[2]) and "search" not in offered(llm.prompts[3])
    assert steps_of(events)[3]["disabled"]["search"] == "2 searches in a row found nothing new"
    assert "but found nothing new" in llm.prompts[3]


# --- queue order and dedup -----------------------------------------------------------------------------------------
def test_gap_questions_go_to_the_head_and_the_original_question_is_requeued_at_the_tail() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        j(action="reflect", questions=["Where does Milvus Lite store data?", "Which names may collections have?"]),
        search("Milvus Lite local file"),        # works on gap 1
        search("collection name rules"),         # works on gap 2
        search("consistency levels"),            # back to the original question
        search("sparse vectors"),                # gap 1 again (unsolved gaps are re-queued too)
        answer("Milvus Lite keeps data in a local file [2]."), PASS,   # gap 2 solved (no check choice for gaps)
        answer("Milvus Lite is in-process [1] and names are restricted [3]."), CHECKS, PASS,
    ])
    report = run_agent(llm, events=events, max_empty_searches=5)
    current = [p.split("Current question: ", 1)[1].split("\n", 1)[0] for p in llm.prompts if "Current question" in p]
    assert current == [Q, "Where does Milvus Lite store data?", "Which names may collections have?", Q,
                       "Where does Milvus Lite store data?", "Which names may collections have?", Q]
    assert [s["original"] for s in steps_of(events)] == [True, False, False, True, False, False, True]
    assert of_kind(events, "query.gaps")[0]["gaps"] == ["Where does Milvus Lite store data?",
                                                        "Which names may collections have?"]
    assert report.gaps == ["Where does Milvus Lite store data?"]  # still open when the original was answered


def test_search_queries_are_deduplicated_against_every_query_already_run() -> None:
    events: list[Event] = []
    store = memory_store()
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        search("milvus lite ", "Milvus Lite", "collection names"),
        answer("Names use letters [2]."), CHECKS, PASS,
    ])
    ctx = dataclasses.replace(make_ctx(llm, Q, store=store, events=events), research=ResearchTools())
    DeepResearchAgent(DeepResearchOptions()).run(ctx)
    sub = of_kind(events, "query.sub_queries")
    assert [(s["sub_queries"], s["duplicates"]) for s in sub] == [
        (["Milvus Lite"], []), (["collection names"], ["milvus lite", "Milvus Lite"])]
    assert [text for _, text, _ in store.searches] == ["Milvus Lite", "collection names"]
    assert 'queries already run ("Milvus Lite")' in llm.prompts[1]


def test_reflect_drops_questions_already_asked() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        j(action="reflect", questions=[Q.upper(), "Which names may collections have?"]),
        search("collection names"),
        answer("Names use letters, digits and underscores [1]."), PASS,
        search("Milvus Lite"),
        answer("Milvus Lite runs in-process [2]; names are restricted [1]."), CHECKS, PASS,
    ])
    run_agent(llm, events=events)
    assert of_kind(events, "query.gaps")[0]["gaps"] == ["Which names may collections have?"]


# --- the evaluator -------------------------------------------------------------------------------------------------
def test_a_rejected_answer_stores_the_critique_and_disables_answer_for_the_next_step() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        answer("Milvus Lite is a database [1]."),
        j(definitive=True, freshness=False, plurality=False, completeness=True, attribution=True),
        j(definitive=True, completeness=False, attribution=True, critique="It ignores the limits.",
          plan="Search for the limits of Milvus Lite."),
        search("Milvus Lite limits"),
        answer("Milvus Lite runs in-process [1] and stores one local file [2]."),
        j(definitive=True, completeness=True, attribution=True, critique="", plan=""),
    ])
    report = run_agent(llm, events=events)
    assert llm.prompts[2].startswith("Decide which checks")
    assert "- completeness: it covers every aspect" in llm.prompts[3]
    assert "Milvus Lite is the lightweight version" in llm.prompts[3]  # the cited item is shown to the evaluator
    after = llm.prompts[4]
    assert "answer" not in offered(after)
    assert "Rejected answers (do not repeat them):" in after
    assert "rejected because It ignores the limits.; plan: Search for the limits of Milvus Lite." in after
    assert "answer" in offered(llm.prompts[5])
    verdicts = of_kind(events, "query.evaluation")
    assert [(v["passed"], v["checks"]) for v in verdicts] == [
        (False, {"definitive": True, "completeness": False, "attribution": True}),
        (True, {"definitive": True, "completeness": True, "attribution": True})]
    assert verdicts[0]["critique"] == "It ignores the limits." and verdicts[0]["original"]
    assert report.checks == {"definitive": True, "completeness": True, "attribution": True}
    assert report.answer.startswith("Milvus Lite runs in-process [1] and stores one local file [2].")
    assert "*Evaluator checks: definitive passed, completeness passed, attribution passed.*" in report_markdown(report)


def test_an_answer_citing_nothing_fails_attribution_without_an_evaluator_call() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        answer("Milvus Lite is great."), CHECKS,           # no [n]: rejected with no evaluate call
        search("Milvus Lite file"),
        answer("Milvus Lite runs in-process [1]."), PASS,  # checks already chosen: one call
    ])
    run_agent(llm, events=events)
    first = of_kind(events, "query.evaluation")[0]
    assert first["checks"] == {"definitive": None, "attribution": False} and not first["passed"]
    assert "cites no knowledge item" in first["critique"]
    assert not any(p.startswith("You are a strict reviewer") and "Milvus Lite is great." in p for p in llm.prompts)


def test_an_accepted_gap_answer_becomes_knowledge_and_citing_it_cites_its_sources() -> None:
    gap = "Where does Milvus Lite store data?"
    local_file = MILVUS_DOCS[1].text

    def gap_answer(messages: Any) -> str:  # cites the chunk about the local file, whatever its number
        prompt = messages[-1]["content"]
        number = prompt.split(local_file)[0].rsplit("\n[", 1)[1].split("]")[0]
        return answer(f"In a local file [{number}].")

    def final(messages: Any) -> str:  # cites the accepted gap answer
        prompt = messages[-1]["content"]
        number = prompt.split(f"(answer to: {gap})")[0].rsplit("\n[", 1)[1].split("]")[0]
        return answer(f"Milvus Lite stores its data locally [{number}].")

    llm = ScriptedChatModel([
        j(action="reflect", questions=[gap]),
        search("Milvus Lite local file storage"),   # step 2 works on the gap
        search("Milvus Lite"),                      # step 3 on the original question
        gap_answer, PASS,                           # step 4 answers the gap: accepted, kept as knowledge
        final, CHECKS, PASS,                        # step 5 answers the original citing that answer
    ])
    report = run_agent(llm)
    assert f"(answer to: {gap})\nIn a local file [" in llm.prompts[5]
    assert "the answer was accepted and kept as knowledge" in llm.prompts[5]
    assert report.answer.startswith("Milvus Lite stores its data locally [1].")  # the answer's source, renumbered
    assert [s.chunk.text for s in report.sources] == [local_file]
    assert report.gaps == []


def test_an_unusable_evaluator_reply_accepts_the_answer_unverified() -> None:
    llm = ScriptedChatModel([search("Milvus Lite"), answer("It runs in-process [1]."), CHECKS, "no", "still no"])
    report = run_agent(llm)
    assert report.checks == {"definitive": None, "attribution": None} and not report.beast_mode
    assert "*Evaluator checks: definitive not run, attribution not run.*" in report_markdown(report)


# --- beast mode ----------------------------------------------------------------------------------------------------
def test_beast_mode_at_the_token_budget_makes_exactly_one_forced_call() -> None:
    """The run's budget (10,000 tokens, 40 % kept for the final answer) trips when step 3's call would eat into the
    reserve; no call is made between the trip and the one forced answer, which may use the reserve."""
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        ChatResult(text=search("Milvus Lite file"), prompt_tokens=5_800, completion_tokens=10),  # past 6,000 used
        "Forced: Milvus Lite runs in-process [1].",
    ])
    report = run_agent(llm, events=events, token_budget=10_000, final_reserve=0.4)
    assert llm.remaining == 0 and len(llm.history) == 3  # no call between the trip and the forced answer
    final = llm.prompts[-1]
    assert final.startswith("Research time is over. Answer the question below now")
    # the report prompt's order: knowledge, the question again, the rules with the "Answer:" line last
    assert final.index("Knowledge:") < final.rindex("Question: ") < final.index(prompts.REPORT_FORMAT)
    assert final.rstrip().endswith("Cite only the numbers listed above.")
    assert "[1] lite (/d/lite.md)\nMilvus Lite is the lightweight version" in final
    assert llm.history[-1].streamed and llm.history[-1].schema is None
    budget = of_kind(events, "query.budget")
    assert [(b["step"], b["budget"], b["reserve"]) for b in budget] == [("research_step", 10_000, 4_000)]
    assert budget[0]["used"] > 6_000
    forced_limit = llm.history[-1].max_tokens
    assert forced_limit is not None and forced_limit < 10_000 - budget[0]["used"]  # within what the reserve left
    beast = of_kind(events, "query.beast_mode")
    assert [(b["reason"], b["step"]) for b in beast] == [("token_budget", 2)]  # two steps ran
    assert kinds(events)[-2:] == ["query.budget", "query.beast_mode"]
    assert report.beast_mode and report.checks == {} and report.iterations == 2
    assert report.answer.startswith("Forced: Milvus Lite runs in-process [1].")
    assert "beast mode" in report_markdown(report)


def test_the_budget_is_checked_before_every_call_not_only_between_steps() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        ChatResult(text=answer("Milvus Lite is in-process [1]."), prompt_tokens=5_800, completion_tokens=10),
        "Forced answer [1].",                    # the evaluator's check choice is never asked
    ])
    report = run_agent(llm, events=events, token_budget=10_000, final_reserve=0.4)
    assert len(llm.history) == 3 and llm.prompts[-1].startswith("Research time is over")
    assert of_kind(events, "query.budget")[0]["step"] == "checks"
    assert report.beast_mode


def test_a_budget_too_small_for_the_forced_answer_says_so_without_a_call() -> None:
    llm = ScriptedChatModel([search("Milvus Lite"),
                             ChatResult(text=search("x"), prompt_tokens=9_990, completion_tokens=10)])
    report = run_agent(llm, token_budget=10_000, final_reserve=0.4)
    assert len(llm.history) == 2 and report.beast_mode
    assert report.answer.startswith("**Research stopped on the token budget** (agents.deep_research.token_budget = "
                                    "10,000 tokens,")
    assert "Raise agents.deep_research.token_budget and ask again." in report.answer


def test_the_run_budget_is_the_agents_unless_query_token_budget_leaves_less() -> None:
    """``agents.deep_research.token_budget`` feeds the run's ``TokenBudget``, counted from the run's start (a long
    report's earlier sections do not count); ``query.token_budget``, when it leaves less, wins."""
    opts = DeepResearchOptions(token_budget=100_000, final_reserve=0.25)
    llm = ScriptedChatModel([ChatResult(text="earlier section", prompt_tokens=3_000, completion_tokens=0)] * 2)
    ctx = make_ctx(llm, Q)
    ctx.llm.chat([{"role": "user", "content": "spent before the run"}])
    own = research_context(ctx, opts).budget
    assert (own.limit, own.setting, own.used, own.reserve) == (100_000, "agents.deep_research.token_budget", 0, 25_000)
    capped = make_ctx(llm, Q, token_budget=4_000)
    capped.llm.chat([{"role": "user", "content": "spent before the run"}])
    run_budget = research_context(capped, opts).budget
    assert (run_budget.limit, run_budget.setting, run_budget.used, run_budget.reserve) == \
        (1_000, "query.token_budget", 0, 250)


def test_beast_mode_at_max_bad_attempts() -> None:
    events: list[Event] = []
    reject = j(definitive=False, attribution=True, critique="Not definitive.", plan="Be direct.")
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        answer("Maybe Milvus Lite is small [1]."), CHECKS, reject,
        search("Milvus Lite local"),
        answer("Perhaps it is in-process [1]."), reject,
        "Milvus Lite runs in-process [1].",      # the one forced answer
    ])
    report = run_agent(llm, events=events, max_bad_attempts=2)
    assert llm.remaining == 0
    assert of_kind(events, "query.beast_mode")[0]["reason"] == "bad_attempts"
    assert "- Reviewers rejected earlier answers; follow their advice:\n  - Be direct.\n  - Be direct." in \
        llm.prompts[-1]
    assert report.beast_mode


def test_beast_mode_at_max_steps_and_without_knowledge_no_call() -> None:
    llm = ScriptedChatModel([j(action="reflect", questions=["Which limits apply?"]), search("zzz qqq")])
    events: list[Event] = []
    store = MemoryStore()
    store.create_collection("milvus", description="an empty collection", model_name="hash-bow", dim=2048)
    ctx = make_ctx(llm, Q, store=store, events=events)
    finding = research(ctx, DeepResearchOptions(max_steps=2), ResearchTools(), KnowledgeStore())
    assert finding.answer == nothing_found(ctx) and finding.beast_mode == "max_steps"
    assert len(llm.history) == 2 and finding.gaps == ["Which limits apply?"]


def test_an_unusable_step_reply_falls_back_to_searching_the_current_question() -> None:
    events: list[Event] = []
    llm = ScriptedChatModel(["I would search.", "Still prose.", answer("Milvus Lite is in-process [1]."),
                             CHECKS, PASS])
    run_agent(llm, events=events)
    first = steps_of(events)[0]
    assert first["action"] == "search" and first["fell_back"]
    assert of_kind(events, "query.sub_queries")[0]["sub_queries"] == [Q]
    assert of_kind(events, "query.fallback")[0]["fallback"] == "searching the current question"


# --- read ----------------------------------------------------------------------------------------------------------
def test_read_opens_a_chunk_with_its_neighbours() -> None:
    from deepsearcher.testing import HashEmbedder
    from tests.unit.query_fakes import DIM, chunk

    parts = ["Milvus Lite setup starts with pip install pymilvus.", "Then open a client on a local file path.",
             "The file keeps every collection of the database.", "Close the client to release the file lock."]
    doc = [chunk(text, "/d/guide.md", index=i) for i, text in enumerate(parts)]
    store = MemoryStore().add("milvus", "Milvus guide", doc, HashEmbedder(DIM))
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("open a client on a local file path"),
        j(action="read", items=[1]),
        answer("Open a client on a file [1]; it keeps every collection [3]."), CHECKS, PASS,
    ])
    ctx = dataclasses.replace(make_ctx(llm, Q, store=store, events=events, top_k=1),
                              research=ResearchTools(chunks_around=store.chunks_around))
    report = DeepResearchAgent(DeepResearchOptions(read_window=1)).run(ctx)
    read = of_kind(events, "query.read")[0]
    assert read == {"step": 2, "opened": ["/d/guide.md"], "added": 2, "failed": []}
    assert "Items not opened yet: [1]" in llm.prompts[1]
    assert "At step 2 you read [1] in full and found 2 new items: [2], [3]." in llm.prompts[2]
    assert "[3] guide (/d/guide.md)\nThe file keeps every collection of the database." in llm.prompts[2]
    assert "read" not in offered(llm.prompts[2])  # the neighbours count as opened
    assert [(s.number, s.chunk.chunk_index) for s in report.sources] == [(1, 1), (2, 2)]


def test_report_citations_are_verified_and_renumbered() -> None:
    llm = ScriptedChatModel([
        search("Milvus Lite"), search("collection names"),
        answer("Names are restricted [4]; Milvus Lite is in-process [1]; see also [99]."), CHECKS, PASS,
    ])
    report = run_agent(llm)
    assert report.answer.startswith("Names are restricted [1]; Milvus Lite is in-process [2]; see also.")
    assert report.removed_citations == 1
    assert [s.number for s in report.sources] == [1, 2]
    assert report.sources[1].chunk.text == MILVUS_DOCS[0].text
    assert report.agent == "deep_research" and report.iterations == 3
    assert report.sub_queries == ["Milvus Lite", "collection names"]


def test_query_api_runs_deep_research_from_the_registry() -> None:
    from tests.unit.query_fakes import memory_app

    events: list[Event] = []
    llm = ScriptedChatModel([search("Milvus Lite"), answer("In-process [1]."), CHECKS, PASS])
    app = memory_app(llm, hybrid=False)  # the memory store is dense-only: no hybrid-fallback notice
    report = app.query(Q, agent="deep_research", collections=["milvus"], on_event=events.append)
    assert report.agent == "deep_research" and report.checks
    assert kinds(events)[:3] == ["query.start", "query.agent", "query.step"]
    assert events[0].data["web"] is None  # nothing configured: nothing goes to the web
    with pytest.raises(Exception, match="does not search the web"):
        app.query(Q, agent="deep_search", web=True)


def test_a_model_that_never_writes_usable_json_still_ends_with_a_report() -> None:
    """What a tiny model does: every structured reply is prose or cut-off JSON. Steps fall back (search the
    question, then read), search switches itself off, and the run ends in one forced answer."""
    events: list[Event] = []
    llm = ScriptedChatModel([ChatResult(text='{"action": "sea', finish_reason="length")] * 200)
    report = run_agent(llm, events=events)
    steps = steps_of(events)
    assert steps and all(s["fell_back"] for s in steps)
    assert [s["action"] for s in steps][:3] == ["search", "search", "search"]
    assert of_kind(events, "query.beast_mode")[0]["reason"] in ("no_action", "max_steps")
    assert llm.history[-1].schema is None and llm.prompts[-1].startswith("Research time is over")
    assert report.beast_mode and report.answer and report.sources
    assert len(llm.history) <= 2 * 12 + 1  # two tries per step at most, then the one forced answer


# --- issue #20 item 1: beast mode over earlier answers keeps their citations ---------------------------------------
def test_the_forced_answer_may_not_move_an_earlier_answers_claim_to_another_source() -> None:
    gap = "Where does Milvus Lite store data?"
    local_file = MILVUS_DOCS[1].text

    def number_of(prompt: str, text: str) -> str:
        return prompt.split(text)[0].rsplit("\n[", 1)[1].split("]")[0]

    def gap_answer(messages: Any) -> str:
        return answer(f"Milvus Lite keeps its data in one local file [{number_of(messages[-1]['content'], local_file)}].")

    def forced(messages: Any) -> str:  # copies the accepted answer's claim but cites another chunk
        prompt = messages[-1]["content"]
        assert prompt.startswith("Research time is over")
        right = number_of(prompt, local_file)
        other = next(n for n in ("1", "2", "3", "4", "5") if n != right and f"\n[{n}] " in f"\n{prompt}")
        return f"Milvus Lite keeps its data in one local file [{other}]."

    llm = ScriptedChatModel([
        j(action="reflect", questions=[gap]),
        search("Milvus Lite local file storage"),
        search("Milvus Lite"),
        gap_answer, PASS,
        forced,
    ])
    events: list[Event] = []
    report = run_agent(llm, events=events, max_steps=4)
    assert of_kind(events, "query.beast_mode")[0]["reason"] == "max_steps"
    assert report.answer.startswith("Milvus Lite keeps its data in one local file [1].")
    assert [s.chunk.text for s in report.sources] == [local_file]  # the claim's own source, not the other chunk
    assert ("*Note: the final answer put citations on 1 sentence(s) whose claims were not tied to those sources "
            "before (1 kept as drafted).*") in report.answer


# --- issue #20 item 4: per-question status, verdicts kept, the best rejected answer as fallback ----------------------
REJECT = json.dumps({"definitive": False, "attribution": True, "critique": "Not definitive.", "plan": "Be direct."})


def test_statuses_verdicts_and_the_unresearched_questions_reach_the_forced_answer() -> None:
    gaps = ["Where does Milvus Lite store data?", "Which names may collections have?"]
    llm = ScriptedChatModel([
        j(action="reflect", questions=gaps),
        search("Milvus Lite local file"),            # step 2 works on gap 1: researched
        "Milvus Lite runs in-process [1].",          # beast mode at max_steps=2: the forced answer
    ])
    report = run_agent(llm, max_steps=2)
    forced = llm.prompts[-1]
    assert forced.startswith("Research time is over")
    assert ("These questions were never researched (research stopped before any search for them). Do not write "
            "that no information was found about them; say they were not researched:\n"
            "  - Which names may collections have?\n") in forced
    assert "Where does Milvus Lite store data?" not in forced.split("Question:")[0]
    assert [(q.question, q.status) for q in report.questions] == [
        (Q, "answered"), (gaps[0], "nothing_found"), (gaps[1], "not_researched")]
    assert report.questions[2].detail == "research stopped (max_steps) before any search for it"
    assert ("**Open questions.**\nResearched, but no answer citing a source was accepted:\n- Where does Milvus Lite "
            "store data?\nNot researched (research stopped first):\n- Which names may collections have?") \
        in report.answer
    text = report_markdown(report)
    assert "- Which names may collections have?: not researched (research stopped (max_steps)" in text


def test_rejections_are_kept_and_an_empty_forced_answer_falls_back_to_the_best_rejected_one() -> None:
    partly = json.dumps({"definitive": True, "attribution": False, "critique": "Cites the wrong item.", "plan": ""})
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        answer("Maybe Milvus Lite is small [1]."), CHECKS, REJECT,       # 1 check passed
        search("Milvus Lite local"),
        answer("Milvus Lite runs in-process [1]."), partly,             # 1 check passed, later: the best
        "",                                                             # the forced answer is empty
    ])
    report = run_agent(llm, max_bad_attempts=2)
    assert report.beast_mode
    assert report.answer.startswith("Milvus Lite runs in-process [1].\n\n*The forced final answer was empty, so "
                                    "this is the best answer the evaluator rejected (step 4): Cites the wrong item.*")
    assert [(e.step, e.passed, e.checks, e.critique) for e in report.evaluations] == [
        (2, False, {"definitive": False, "attribution": True}, "Not definitive."),
        (4, False, {"definitive": True, "attribution": False}, "Cites the wrong item.")]
    data = report.to_dict()
    assert data["evaluations"][1]["critique"] == "Cites the wrong item."
    assert data["questions"] == [{"question": Q, "status": "answered", "detail": "a rejected answer (beast mode)"}]
    text = report_markdown(report)
    assert "- Evaluator, step 2 (" + Q + "): rejected: Not definitive. [definitive failed, attribution passed]" in text


@pytest.mark.parametrize("echo", [Q, f"<{Q}>", f"{Q} [1]", "what is milvus lite and what are its limits?"])
def test_an_answer_that_repeats_the_question_fails_definitive_without_an_evaluator_call(echo: str) -> None:
    # measured: Qwen2.5-Coder-0.5B answered "<If Gallu is a demon Lilu is what?>" — the HotpotQA question itself
    events: list[Event] = []
    llm = ScriptedChatModel([
        search("Milvus Lite"),
        answer(echo), CHECKS,                              # the question again: rejected with no evaluate call
        search("Milvus Lite file"),
        answer("Milvus Lite runs in-process [1]."), PASS,
    ])
    report = run_agent(llm, events=events)
    first = of_kind(events, "query.evaluation")[0]
    assert first["checks"] == {"definitive": False, "attribution": None} and not first["passed"]
    assert "only repeats the question" in first["critique"]
    assert sum(p.startswith("You are a strict reviewer") for p in llm.prompts) == 1  # only the second answer's
    assert llm.remaining == 0 and report.answer.startswith("Milvus Lite runs in-process")


def test_an_answer_that_asks_another_question_goes_to_the_evaluator() -> None:
    llm = ScriptedChatModel([search("Milvus Lite"), answer("Is Milvus Lite the file-based Milvus? Yes [1]."), CHECKS,
                             PASS])
    report = run_agent(llm)
    assert llm.remaining == 0 and not report.beast_mode and report.checks == {"definitive": True, "attribution": True}


def test_a_final_answer_citing_nothing_gets_the_sentence_holding_its_words_quoted_and_cited() -> None:
    # the bundled 1.5B model's forced answer on HotpotQA (2026-12-03) cited nothing; the other agents' reports
    # already get the supporting sentence (agents/support.py), deep_research's now too
    events: list[Event] = []
    llm = ScriptedChatModel([search("Milvus Lite storage"),
                             "Answer: It stores its data in a local file.\n\nIt is light."])
    report = run_agent(llm, "Where does Milvus Lite keep its data?", events=events, max_steps=1)
    assert report.beast_mode and report.short_answer == "It stores its data in a local file."
    assert report.answer.startswith("It is light.\n\n*The model cited no source. The passage that holds the answer's "
                                    "words (found by matching them):*")
    assert "> “Milvus Lite stores data in a local file and suits prototypes and notebooks.” [1]" in report.answer
    assert [s.chunk.text for s in report.sources] == [MILVUS_DOCS[1].text]
    assert of_kind(events, "query.fallback")[-1]["error"] == "the report cites no source"
    # an answer no item sentence holds keeps its consulted sources and no quote
    plain = run_agent(ScriptedChatModel([search("Milvus Lite storage"), "Answer: On the moon.\n\nIt is far."]),
                      "Where does Milvus Lite keep its data?", max_steps=1)
    assert "found by matching" not in plain.answer and plain.sources
