"""The report language of the tool's own headings and notes (deepsearcher/agents/scaffold.py) and unique anchors."""

from __future__ import annotations

import pytest

from deepsearcher.agents.long_report.agent import anchors, table_of_contents
from deepsearcher.agents.report_markdown import report_markdown
from deepsearcher.agents.scaffold import WORDS, language_code, word
from deepsearcher.types import Report, Usage


@pytest.mark.parametrize("question, code", [
    ("What is Milvus Lite?", "en"),
    ("Was ist Milvus Lite und wie wird es installiert?", "de"),
    ("Qu'est-ce que Milvus Lite et comment l'installer ?", "fr"),
    ("¿Qué es Milvus Lite y cómo se instala?", "es"),
    ("O que é o Milvus Lite e como instalar?", "pt"),
    ("Che cos'è Milvus Lite e come si installa?", "it"),
    ("Что такое Milvus Lite?", "ru"),
    ("Milvus Lite 是什么？", "zh"),
    ("Milvus Liteとは何ですか？", "ja"),
    ("Milvus Lite란 무엇입니까?", "ko"),
    ("ما هو Milvus Lite؟", "ar"),
    ("มิลวัสคืออะไร", "en"),  # a language without a table: English scaffolding
    # a helper's sentences (2026-12-03): "was" is German too, "a" and "as" Portuguese; one name in another script
    ("Phoolwari was written by penguins from Jupiter.", "en"),
    ("Milvus Lite runs as a library inside Python.", "en"),
    ("Milvus uses the jieba analyzer for Chinese text such as 向量数据库.", "en"),
    ("Tokyo (東京) is the capital of Japan.", "en"),
    ("什么是 Milvus?", "zh"),
    ("Where do mallards feed?", "en"),  # "do" is Portuguese too
])
def test_the_question_language_is_detected(question, code):
    assert language_code(question) == code


@pytest.mark.parametrize("configured, code", [("German", "de"), ("Deutsch", "de"), ("de-DE", "de"),
                                              ("zh-CN", "zh"), ("日本語", "ja"), ("Klingon", "en")])
def test_query_language_wins_and_unknown_names_fall_back_to_english(configured, code):
    assert language_code("What is Milvus Lite?", configured) == code


def test_every_language_has_every_string():
    assert all(set(table) == set(WORDS["en"]) for table in WORDS.values())
    assert word("xx", "sources") == "Sources"


def test_repeated_titles_get_unique_anchors():
    assert anchors(["Overview", "Details", "Overview", "Overview"]) == ["overview", "details", "overview-1",
                                                                        "overview-2"]
    assert table_of_contents("## Basics\n\n## Basics\n", "fr") == ("## Sommaire\n\n1. [Basics](#basics)\n"
                                                                     "2. [Basics](#basics-1)")


def test_the_sources_heading_follows_the_report_language():
    report = Report("Что такое Milvus Lite?", "Ответ.", [], [], 0, Usage(), "naive", language="ru")
    assert "## Источники\n\nИсточников нет: ничего относящегося к делу не найдено." in report_markdown(report)
