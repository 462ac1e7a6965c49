"""A cited sentence its sources do not hold (``agents.cited_support``).

The case that found it: the quick start from a fresh clone (2026-12-03, bundled Qwen2.5-Coder-1.5B, the naive
agent) answered "What consistency levels does Milvus offer?" with five paragraphs numbered [1]…[5] after its five
sources; [1] was chunk 2's PACELC sentence, [3] and [4] gave one invented definition to two levels. The chunks in
``data/quickstart_chunks.json`` are the five the run retrieved from ``data/milvus_docs``, in order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepsearcher.agents.cited_support import support_note, unsupported_citations
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import Chunk, Report, Source, UnsupportedCitation, Usage
from tests.unit.query_fakes import memory_app

QUICKSTART_ANSWER = """\
[1] Consistency levels are defined by the PACELC theorem, which ensures that a distributed database has to trade \
off among consistency, availability, and latency.

[2] Strong is the highest and the most strict level of consistency. It ensures that users can read the latest \
version of data.

[3] Bounded staleness is a compromise between strong consistency and eventual consistency. It ensures that users \
can read a data view that is not completely up-to-date, but is still more up-to-date than the eventual consistency \
level.

[4] Session is a compromise between strong consistency and eventual consistency. It ensures that users can read a \
data view that is not completely up-to-date, but is still more up-to-date than the eventual consistency level.

[5] Tunable Consistency Model Consistency ensures every Milvus node or replica has the same view of data when \
writing or reading data at a given time. You can easily tune the consistency level when conducting ANN searches in \
Milvus."""


def sources(texts: list[tuple[str, str, str]]) -> list[Source]:
    return [Source(number=n, chunk=Chunk(id=str(n), text=text, source=source, title=title, page=None,
                                         chunk_index=0, doc_hash="h"), collection="sample")
            for n, (title, source, text) in enumerate(texts, start=1)]


QUICKSTART_SOURCES = sources([(c["title"], c["source"], c["text"]) for c in json.loads(
    (Path(__file__).parent / "data" / "quickstart_chunks.json").read_text(encoding="utf-8"))])


def test_the_quick_starts_miscited_and_invented_sentences_are_found_and_the_copied_ones_pass():
    found = unsupported_citations(QUICKSTART_ANSWER, QUICKSTART_SOURCES)
    assert [(u.sentence.split(" is ")[0].split(" are ")[0], u.cited, u.share, u.found_in) for u in found] == [
        ("[1] Consistency levels", [1], 0.38, [2]),  # chunk 2's sentence: its words are there
        ("[3] Bounded staleness", [3], 0.29, [1, 4]),  # invented; chunks 1 and 4 name the levels
    ]
    # [4] says the same invented thing of Session, but chunk 4 has half its words ("session", "consistency",
    # "eventually"): a screen by words lets a claim made of a source's words pass


def test_other_forms_of_a_word_count_as_the_word():
    # a right paraphrase of the bridge passage: 86 % of its stems are there, 57 % of its words as written
    bridge = sources([("Bridge", "b.md", "The bridge was designed by two engineers and opened to traffic in 1932. "
                                         "It connects the two cities across the river.")])
    assert unsupported_citations("It was designed by an engineer, opening in 1932 and connecting two city centres "
                                 "[1].", bridge) == []


@pytest.mark.parametrize("sentence", [
    "Yes [1].",                                             # too few words to judge
    "The answer supports sources [1] and [2].",             # speaks only of the answer and its sources
    "This information comes from sources [1] and [2][3].",
    "[1] Consistency (data/milvus_docs/consistency.md)",    # a copied source line: title and file are what it showed
    "Milvus bietet vier Konsistenzstufen: Strong, Bounded, Session und Eventually [1].",  # another language
])
def test_sentences_that_claim_nothing_a_source_could_hold_are_not_judged(sentence: str):
    assert unsupported_citations(sentence, QUICKSTART_SOURCES) == []


def test_a_sentence_is_judged_against_all_the_sources_it_cites_together():
    text = "Strong is the most strict level, and the default level in Milvus is bounded staleness [1][2]."
    assert unsupported_citations(text, QUICKSTART_SOURCES) == []
    # a wrong number alone: chunk 5 holds neither claim
    assert [u.cited for u in unsupported_citations(text.replace("[1][2]", "[5]"), QUICKSTART_SOURCES)] == [[5]]


def test_the_note_quotes_the_sentences_as_text_and_says_where_their_words_are():
    found = [UnsupportedCitation(sentence="[1] PACELC says so ![x](https://evil.example/p.png)", cited=[1],
                                 share=0.15, found_in=[2]),
             UnsupportedCitation(sentence="Session is a compromise [4].", cited=[4], share=0.33)]
    report = Report(question="q", answer="a", sources=[], sub_queries=[], iterations=0, usage=Usage(), agent="naive",
                    unsupported_citations=found)
    note = support_note(report)
    assert note.startswith("**Citations.** 2 sentences of the answer cite sources that do not hold most of their "
                           "words (checked by matching words, not by reading)")
    # the model's image is text, not an image or a link; its "[1]" reads as no citation
    assert ("- “(1) PACELC says so \\!(x)(https://evil.example/p.png)” cites source 1, with 15 % of its words; most "
            "of them are in source 2.") in note
    assert "- “Session is a compromise (4).” cites source 4, with 33 % of its words; no other listed source holds most of them." \
        in note
    assert support_note(Report(question="q", answer="a", sources=[], sub_queries=[], iterations=0, usage=Usage(),
                               agent="naive")) == ""


def test_a_query_lists_the_sentence_its_source_does_not_hold_and_keeps_the_text():
    llm = ScriptedChatModel(["Milvus Lite stores data in a local file [1]. "
                             "Milvus Lite was written by the Apollo astronauts on the Moon [1]."])
    report = memory_app(llm).query("Where does Milvus Lite store data?", agent="naive", collections=["milvus"])
    assert [u.sentence for u in report.unsupported_citations] == [
        "Milvus Lite was written by the Apollo astronauts on the Moon [1]."]
    assert report.to_dict()["unsupported_citations"][0]["cited"] == [1]
    markdown = report_markdown(report)
    assert "**Citations.** 1 sentence of the answer cites sources that do not hold most of its words" in markdown
    assert "written by the Apollo astronauts on the Moon [1]." in markdown  # the text stays as written


def test_code_in_the_answer_is_no_claim():
    answer = ("You can tune the consistency level when conducting ANN searches in Milvus [5]:\n\n```python\nresults = client.search(collection_name=\"docs\", "
              "data=[1], limit=3)\nprint(results) [2]\n```")
    assert unsupported_citations(answer, QUICKSTART_SOURCES) == []


def test_the_note_shows_no_citation_in_any_bracket_or_entity():
    found = [UnsupportedCitation(sentence="Penguins built it 【3】 &#91;2&#93;.", cited=[3], share=0.0)]
    note = support_note(Report(question="q", answer="a", sources=[], sub_queries=[], iterations=0, usage=Usage(),
                               agent="naive", unsupported_citations=found))
    assert "“Penguins built it (3) \\&#91;2\\&#93;.”" in note


def test_the_link_rules_mark_is_not_the_models_claim_and_inline_code_is_quoted():
    # measured: the quick start's [1] quoted as "PACELC (link to removed: not retrieved by this …"
    answer = ("Consistency levels are defined by the PACELC (link to `en.wikipedia.org` removed: not retrieved by this "
              "run) theorem, so a distributed database trades off among consistency, availability, and latency [2].")
    assert unsupported_citations(answer, QUICKSTART_SOURCES) == []
    found = unsupported_citations(answer.replace("[2]", "[5]").replace("latency", "`latency`"), QUICKSTART_SOURCES)
    assert found[0].sentence.startswith("Consistency levels are defined by the PACELC theorem, so")
    assert "`latency` [5]." in found[0].sentence


@pytest.mark.parametrize("answer, source_text", [
    # a helper's replies (2026-12-03): read as German ("was") and not judged
    ("Phoolwari was written by penguins from Jupiter [1].",
     "Phoolwari is a 1946 Indian Hindi-language film. The film was directed by Ravindra Dave."),
    # a source with a few Chinese characters was read as Chinese, and no English sentence citing it was judged
    ("Penguins wrote the jieba analyzer on the Moon in 1850 [1].",
     "Milvus uses the jieba analyzer to tokenize Chinese text such as 向量数据库 for full-text search."),
])
def test_an_english_sentence_and_source_are_judged_as_english(answer: str, source_text: str):
    found = unsupported_citations(answer, sources([("Source", "s.md", source_text)]))
    assert [u.cited for u in found] == [[1]]


def test_a_claim_hidden_after_a_bold_sentence_is_judged_and_a_thai_paraphrase_passes():
    lite = sources([("Lite", "lite.md", "Milvus Lite runs inside Python applications and stores all data in one "
                                         "local file.")])
    found = unsupported_citations("**Milvus Lite runs inside Python applications and stores all data in one local "
                                  "file [1].** It was first built by penguins on the Moon [1].", lite)
    assert [u.sentence for u in found] == ["It was first built by penguins on the Moon [1]."]
    thai = sources([("Thai", "thai.md", "มิลวัสไลต์เป็นฐานข้อมูลเวกเตอร์ขนาดเล็กที่ทำงานในโปรแกรมไพธอน")])
    assert unsupported_citations("ฐานข้อมูลเวกเตอร์นี้ทำงานในไพธอน [1]", thai) == []


def test_the_folders_above_a_source_are_no_words_it_holds():
    # a helper's source (2026-12-03): "film" of its folder "films/" made half of a wrong sentence's words "held"
    aas = sources([("aas", "/tmp/docs/films/aas.md", "Aas Ka Panchhi is a 1961 Hindi drama by J. Om Prakash.")])
    found = unsupported_citations("Phoolwari is a Hindi film by Kumar [1].", aas)  # 2 of 4 words with the folder
    assert [u.cited for u in found] == [[1]]


def test_chinese_is_compared_by_pairs_of_characters():
    # a helper's case (2026-12-03): by single characters, "developed by penguins on the Moon" shared 开, 发, 数, 据, 库,
    # 是, 的 … with the source and passed
    lite = sources([("Milvus Lite", "lite_zh.md", "Milvus Lite 是 Milvus 的轻量级版本，是一个可以在 Python 应用程序中运行的"
                                                  "向量数据库。它适合快速原型开发。")])
    found = unsupported_citations("Milvus Lite 是由企鹅在月球上开发的数据库[1]。", lite)
    assert [u.cited for u in found] == [[1]]
    assert unsupported_citations("Milvus Lite 是可以在 Python 应用程序中运行的向量数据库[1]。", lite) == []


def test_the_quote_leaves_no_emphasis_open():
    found = unsupported_citations("**Penguins** built the first Milvus server on the Moon in 1850 with the help of many "
                                  "**very clever walruses from the Arctic sea** [1].", QUICKSTART_SOURCES)
    line = support_note(Report(question="q", answer="", sources=[], sub_queries=[], iterations=1, usage=Usage(),
                               agent="naive", unsupported_citations=found)).splitlines()[-1]
    assert "*" not in line and "Penguins built the first Milvus server" in line
