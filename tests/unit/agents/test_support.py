"""A report that cites nothing gets the source sentence holding the answer's words, quoted and cited
(agents/support.py); an answer no sentence holds gets nothing."""

from __future__ import annotations

import pytest

from deepsearcher.agents import naive_rag
from deepsearcher.agents.support import supporting_sentence
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.unit.query_fakes import chunk, make_ctx, of_kind

#: the sentence of data/milvus_docs/consistency.md the bundled 1.5B model's answer paraphrased (it cited nothing)
CONSISTENCY = ("## Overview\n\nMilvus supports four consistency levels:  strong, bounded staleness, session, and "
               "eventually. The default consistency level in Milvus is bounded staleness.  You can easily tune the "
               "consistency level when conducting a [single-vector search](single-vector-search.md).")
OTHER = chunk("Milvus Lite stores data in a local file and suits prototypes and notebooks.", "/d/lite.md")


def test_the_quickstart_answer_finds_the_sentence_it_paraphrased():
    chunks = [OTHER, chunk(CONSISTENCY, "/d/consistency.md")]
    found = supporting_sentence("Milvus offers four consistency levels: strong, bounded staleness, session, and "
                                "eventually.", "What consistency levels does Milvus offer?", chunks)
    assert found == (2, "Milvus supports four consistency levels: strong, bounded staleness, session, and eventually.")
    default = supporting_sentence("bounded staleness", "What is the default consistency level in Milvus?", chunks)
    assert default == (2, "The default consistency level in Milvus is bounded staleness.")  # more question words


def test_a_number_must_be_in_the_sentence_and_the_question_words_pick_between_sentences():
    chunks = [chunk("Milvus stores 64-bit integers. Vectors have up to 32768 dimensions.", "/d/types.md"),
              chunk("A collection can have at most 64 fields. Names are case-sensitive.", "/d/limits.md")]
    assert supporting_sentence("64", "What is the maximum number of fields in a collection?", chunks) == \
        (2, "A collection can have at most 64 fields.")
    assert supporting_sentence("65,536 fields", "How many fields can a collection have?", chunks) is None


def test_no_support_for_an_answer_that_only_restates_the_question_or_that_no_sentence_holds():
    chunks = [chunk(CONSISTENCY, "/d/consistency.md")]
    assert supporting_sentence("The consistency levels of Milvus.", "What consistency levels does Milvus offer?",
                               chunks) is None
    assert supporting_sentence("Milvus has six levels: linear, causal and more.", "Which levels?", chunks) is None


def test_an_uncited_report_gets_the_quote_cited_and_the_source_counts_as_cited():
    llm = ScriptedChatModel(["Answer: It stores its data in a local file.\n\nSources:\n[1] lite (/d/lite.md)\n"
                             "[2] lite (/d/lite.md)"])
    events: list[Event] = []
    report = naive_rag.run(make_ctx(llm, "Where does Milvus Lite keep its data?", events=events))
    assert report.short_answer == "It stores its data in a local file."
    assert report.answer.endswith("> “Milvus Lite stores data in a local file and suits prototypes and notebooks.” [1]")
    assert "*The model cited no source. The passage that holds the answer's words (found by matching them):*" \
        in report.answer
    assert [s.chunk.text for s in report.sources] == [
        "Milvus Lite stores data in a local file and suits prototypes and notebooks."]
    fallback = of_kind(events, "query.fallback")
    assert fallback and fallback[-1]["error"] == "the report cites no source"
    assert fallback[-1]["fallback"].startswith("quoted the sentence of source [")


def test_a_cited_report_is_left_as_written():
    llm = ScriptedChatModel(["Answer: a local file\n\nMilvus Lite stores data in a local file [1]."])
    report = naive_rag.run(make_ctx(llm, "Where does Milvus Lite keep its data?"))
    assert "found by matching" not in report.answer and len(report.sources) == 1


def test_other_languages_find_their_sentence_too():
    japanese = [chunk("ミルバスは四つの整合性レベルを持つ。既定は有界の古さである。", "/d/ja.md")]
    assert supporting_sentence("既定は有界の古さ", "ミルバスの既定の整合性レベルは何ですか？", japanese) == \
        (1, "既定は有界の古さである。")  # Han/kana compared character by character (rewrites.words)
    german = [chunk("Die Standardstufe ist Bounded Staleness. Milvus kennt vier Stufen.", "/d/de.md")]
    assert supporting_sentence("Bounded Staleness", "Was ist die Standardstufe von Milvus?", german) == \
        (1, "Die Standardstufe ist Bounded Staleness.")


def test_a_reply_that_is_only_the_answer_line_says_the_answer_once_above_the_quote():
    from deepsearcher.agents.report_markdown import report_markdown

    llm = ScriptedChatModel(["Answer: It stores its data in a local file."])
    report = naive_rag.run(make_ctx(llm, "Where does Milvus Lite keep its data?"))
    markdown = report_markdown(report)
    assert markdown.startswith("**Answer:** It stores its data in a local file.\n\n*The model cited no source.")
    assert markdown.count("It stores its data in a local file.") == 1 and "> “Milvus Lite stores data" in markdown


# --- a source's text told again, uncited, gets the source's number (support.cite_copies) -----------------------------
ALU = ("In Akkadian and Sumerian mythology, Alû is a vengeful spirit of the Utukku that goes down to the underworld "
       "Kur. It roams at night and terrifies people while they sleep.")
FILM = ("Jalachhayam is a 2010 Indian Malayalam-language Experimental film, produced and directed by Sathish Kalathil "
        "under the banner of 'The People's Films'.")


def test_paragraphs_copied_word_for_word_get_their_sources_number():
    from deepsearcher.agents.support import cite_copies

    # the bundled 1.5B model's deep_research answer on HotpotQA (2026-12-03): knowledge items told again, uncited
    chunks = [chunk("A lilu is a masculine Akkadian word for a spirit.", "/d/lilu.md"), chunk(ALU, "/d/alu.md"),
              None, chunk(FILM, "/d/film.md")]
    reply = ("Lilu is a spirit.\n\n" + ALU.replace(" Kur.", "  Kur.").upper() + "\n\n" + FILM + "\n\n"
             "Jalachhayam is a 2010 Indian Malayalam-language film by someone else entirely, as far as we know.")
    text, count = cite_copies(reply, chunks)
    lines = text.split("\n\n")
    assert lines[0] == "Lilu is a spirit."  # short: common phrasing, not a copy
    assert lines[1].endswith("WHILE THEY SLEEP [2].") and lines[2].endswith("'The People's Films' [4].")
    assert lines[3] == reply.split("\n\n")[3] and count == 2  # not word for word


def test_a_copied_sentence_inside_the_models_own_words_is_cited_alone():
    from deepsearcher.agents.support import cite_copies

    reply = "As the knowledge says, Lilu is a demon. It roams at night and terrifies people while they sleep. That is all."
    text, count = cite_copies(reply, [chunk(ALU, "/d/alu.md")])
    assert text == ("As the knowledge says, Lilu is a demon. It roams at night and terrifies people while they sleep "
                    "[1]. That is all.") and count == 1


@pytest.mark.parametrize("reply", [
    f"{ALU} [2]",  # cites already
    f"```\n{ALU}\n```",
    f"| {ALU} |",
    f"## {ALU}",
    f"> {ALU}",
])
def test_cited_text_code_tables_headings_and_quotes_are_left_as_written(reply: str):
    from deepsearcher.agents.support import cite_copies

    assert cite_copies(reply, [chunk(ALU, "/d/alu.md"), chunk(FILM, "/d/film.md")]) == (reply, 0)


def test_a_report_that_copies_a_source_cites_it_and_needs_no_quote():
    llm = ScriptedChatModel(["Answer: a local file\n\nMilvus Lite stores data in a local file and suits prototypes "
                             "and notebooks."])
    report = naive_rag.run(make_ctx(llm, "Where does Milvus Lite keep its data?"))
    assert report.answer.endswith("suits prototypes and notebooks [1].") and "found by matching" not in report.answer
    assert [s.chunk.text for s in report.sources] == [OTHER.text]


# a helper's findings (2026-12-03): a number inside code or a link, on a claim its source denies, mid-ellipsis
LITE_FILE = "Milvus Lite stores data in a local file and suits prototypes and notebooks."
BODY = LITE_FILE[:-1]


@pytest.mark.parametrize("reply", [
    f"My words. `{LITE_FILE} And more` here",  # inline code holding a sentence's end
    f"~~~markdown\n```python\n{LITE_FILE}\n```\n{LITE_FILE}\n~~~",  # a fence inside another
    f"````\n```\n{LITE_FILE}\n````",
    f"Text:\n\n    {LITE_FILE}\n\nAfter.",  # indented code
    f"My words. [{LITE_FILE} And more](https://x.io/a)",  # link text
    f"{BODY} in [the docs](https://milvus.io/docs/lite.md).",
    f"{LITE_FILE}\n---",  # a setext heading
    f"Name | {BODY}",  # a table row without its leading pipe
    f"<!-- {LITE_FILE} -->",
    f"{BODY}:",  # a lead-in
    f"My own words here. {LITE_FILE}\u2028Next.",  # a separator sentences() does not give back
])
def test_code_links_headings_tables_and_lead_ins_get_no_number(reply: str):
    from deepsearcher.agents.support import cite_copies

    assert cite_copies(reply, [chunk(f"Intro text here. {LITE_FILE} More text follows.", "/d/a.md")]) == (reply, 0)


@pytest.mark.parametrize("source, reply", [
    ("It is a myth that Milvus Lite stores data in a remote server and suits production workloads.",
     "Milvus Lite stores data in a remote server and suits production workloads."),  # what its source denies
    ("The temperature was +40 degrees at night in the valley last week.",
     "The temperature was -40 degrees at night in the valley last week."),
    ("The rate rose to 3,5 percent in the last quarter of the year.",
     "The rate rose to 3.5 percent in the last quarter of the year."),
    (f"Intro text here. {LITE_FILE}", "Milvus Lite stores data in a local\nfile and suits prototypes and notebooks."),
    ("मिल्वस एक ओपन सोर्स डेटाबेस है और तेज़ है।", "मिल्वस एक ओपन सोर्स डेटाबेस है"),  # 5 words, not 13 pieces
])
def test_only_whole_sentences_of_a_source_word_for_word_are_copies(source: str, reply: str):
    from deepsearcher.agents.support import cite_copies

    assert cite_copies(reply, [chunk(source, "/d/a.md")]) == (reply, 0)


@pytest.mark.parametrize("reply, cited", [
    (f"{BODY}...", f"{BODY} [1]..."),
    (f"{BODY}?!", f"{BODY} [1]?!"),
    (f'"{LITE_FILE}"', f'"{LITE_FILE}" [1]'),
    (f"**{LITE_FILE}**", f"**{LITE_FILE}** [1]"),
    (f"1. {LITE_FILE}", f"1. {BODY} [1]."),
    (f"**Note:** {LITE_FILE}", f"**Note:** {BODY} [1]."),
    (f"{LITE_FILE}  \nNext line here.", f"{BODY} [1].  \nNext line here."),  # the hard break kept
    (f"Own words. {LITE_FILE}\r\nNext.\r", f"Own words. {BODY} [1].\r\nNext.\r"),
    ("The U.S. Army bought the system in 2020 for a large sum of money.",
     "The U.S. Army bought the system in 2020 for a large sum of money [1]."),
])
def test_the_number_goes_before_the_closing_punctuation_or_after_what_wraps_the_copy(reply: str, cited: str):
    from deepsearcher.agents.support import cite_copies

    chunks = [chunk(f"Intro text here. {LITE_FILE} The U.S. Army bought the system in 2020 for a large sum of money.",
                    "/d/a.md")]
    assert cite_copies(reply, chunks) == (cited, 1)


# --- a source named by its place gets its number (support.cite_ordinals) ----------------------------------------------
def test_a_source_named_by_its_place_gets_its_number_when_the_sentence_cites_nothing():
    from deepsearcher.agents.support import cite_ordinals

    # the bundled 1.5B model's chain_of_rag reports (7 of 85 stored): "The first source defines …, while the second …"
    text = ("The first source defines Lilu as a spirit, while the second source adds context about Alû. "
            "The third source says more.\n\nThe First Document [2] is cited already. `the first source` is code.")
    assert cite_ordinals(text, 2) == (
        "The first source [1] defines Lilu as a spirit, while the second source [2] adds context about Alû. "
        "The third source says more.\n\nThe First Document [2] is cited already. `the first source` is code.", 2)


def test_the_numbered_place_is_judged_by_the_citation_check():
    from deepsearcher.agents.cited_support import with_checked_support

    llm = ScriptedChatModel(["Answer: a local file\n\nThe first source states that sourdough bread rises overnight "
                             "in a cold oven."])
    report = with_checked_support(naive_rag.run(make_ctx(llm, "Where does Milvus Lite keep its data?")))
    assert report.answer == "The first source [1] states that sourdough bread rises overnight in a cold oven."
    assert [u.sentence for u in report.unsupported_citations] == [report.answer]
