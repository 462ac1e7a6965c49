"""Encoding detection (deepsearcher/ingest/formats/text.py): a matrix of encodings x lengths, one line to a page."""

from __future__ import annotations

import codecs

import pytest

from deepsearcher.ingest.formats.text import decode, extract_text

LINES = {
    "de_cp1252": ("Grüße aus München – Straße €5. Der Kaffee kostet 3 €.", "cp1252"),
    "fr_latin1": ("Ça coûte très peu : l'élève a payé 5 francs à l'hôtel, 21 °C « agréable ».", "latin-1"),
    "es_cp1252": ("El niño pidió un café con leche; la señora pagó 2,50 €.", "cp1252"),
    "en_cp1252_quotes": ("He said “hello” — twice… and left for the café.", "cp1252"),
    "pl_cp1250": ("Zażółć gęślą jaźń. Proszę o szybką odpowiedź.", "cp1250"),
    "cz_cp1250": ("Příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250"),
    "ru_cp1251": ("Привет! Отчёт о продажах готов к пятнице, совещание в 10:00.", "cp1251"),
    "el_cp1253": ("Καλημέρα, η συνάντηση είναι την Τρίτη στις δέκα.", "cp1253"),
    "ja_shift_jis": ("東京の会議は来週の月曜日に開催されます。資料は金曜日までに提出してください。", "shift_jis"),
    "zh_gb18030": ("北京办公室将于下周一搬迁。请在周五之前提交所有文件，谢谢。", "gb18030"),
    "ko_euc_kr": ("서울 사무소는 다음 주 월요일에 이전합니다. 금요일까지 서류를 제출해 주세요.", "euc_kr"),
    "mixed_utf16_bom": ("Résumé of the 東京 meeting: naïve estimate was 12 % low.", "utf-16"),
    "mixed_utf16be_bom": ("Résumé of the 東京 meeting: naïve estimate was 12 % low.", "utf-16-be+bom"),
    "mixed_utf32_bom": ("Résumé of the 東京 meeting: naïve estimate was 12 % low.", "utf-32"),
    "de_utf8_bom": ("Überblick: Grüße aus München.", "utf-8-sig"),
    "de_utf8": ("Überblick: Grüße aus München.", "utf-8"),
}
LENGTHS = {"one_line": 1, "three_lines": 3, "page": 40}


def _encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-be+bom":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    return text.encode(encoding)


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("name", LINES)
def test_decoding_matrix(name: str, length: str):
    line, encoding = LINES[name]
    text = "\n".join(f"{line}" for _ in range(LENGTHS[length])) + "\n"
    decoded, _ = decode(_encode(text, encoding))
    assert decoded.lstrip("\ufeff") == text


@pytest.mark.parametrize(("text", "encoding", "reason"), [
    ("Değerli müşterimiz, ödeme işleminiz başarıyla tamamlandı.", "cp1254",
     "Turkish cp1254 differs from cp1252 in six letters only; read as cp1252 (ğ -> ð)"),
    ("שלום עולם, הפגישה ביום שלישי.", "cp1255", "charset-normalizer ranks cp1251 first for one short Hebrew line"),
])
def test_known_limits(text: str, encoding: str, reason: str):
    decoded, _ = decode(text.encode(encoding))
    if decoded != text:
        pytest.xfail(reason)


def test_declared_charset_wins_and_a_wrong_one_falls_back_to_detection():
    raw = "Grüße".encode("cp1252")
    assert decode(raw, "cp1252") == ("Grüße", "cp1252")
    assert decode("Grüße".encode("utf-8"), "ascii") == ("Grüße", "utf-8")


def test_short_accented_words_are_not_read_as_cjk_or_utf16():
    for word in ("Año", "Año Niño", "café", "naïve"):
        assert decode(word.encode("cp1252"))[0] == word


def test_extract_text_names_the_encoding():
    (doc,) = extract_text("Grüße aus München – Straße €5.".encode("cp1252"), "/n.txt", title="n")
    assert doc.text == "Grüße aus München – Straße €5." and doc.metadata["encoding"] == "cp1252" and doc.title == "n"
