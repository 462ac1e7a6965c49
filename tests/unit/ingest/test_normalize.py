"""Each normalisation rule (deepsearcher/ingest/normalize.py) on the inputs it exists for, and on the inputs it must
leave alone."""

from __future__ import annotations

import base64
import random

import pytest

from deepsearcher.ingest.normalize import BASE64_PLACEHOLDER, RULES, normalize_documents, normalize_text
from deepsearcher.types import Document


def _b64(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode()


# rule 1: data URIs
def test_markdown_data_uri_image_becomes_a_placeholder_and_the_text_after_it_stays():
    text = f"Before.\n\n![diagram](data:image/png;base64,{_b64(90_000)})\n\nEscalations go to the storage team."
    out = normalize_text(text)
    assert out == "Before.\n\n![diagram]([data URI image/png])\n\nEscalations go to the storage team."


def test_non_base64_and_svg_data_uris_are_replaced():
    out = normalize_text('<img src="data:image/svg+xml;base64,PHN2Zz4=">[raw](data:text/plain;charset=utf-8,Exit%20A)')
    assert out == '<img src="[data URI image/svg+xml]">[raw]([data URI text/plain])'


# rule 2: base64 runs
def test_long_base64_token_is_replaced_but_hex_digests_urls_and_words_stay():
    blob = _b64(600)
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 2  # 128 hex chars
    url = "https://example.org/docs/gateway/renewal-procedure-for-certificates-and-keys/" + "section" * 12
    out = normalize_text(f"payload={blob} status=ok\nsha512 {sha}\n{url}\n{'Supercalifragilistic' * 5}")
    assert out.splitlines() == [f"payload={BASE64_PLACEHOLDER} status=ok", f"sha512 {sha}", url,
                                "Supercalifragilistic" * 5]


def test_short_base64_is_kept():
    token = _b64(30)  # 40 characters: an API key in a config example, a short id
    assert normalize_text(f"key {token} here") == f"key {token} here"


def test_wrapped_base64_block_is_replaced_and_its_pem_frame_kept():
    lines = "\n".join(_b64(900)[i:i + 64] for i in range(0, 1200, 64))
    out = normalize_text(f"-----BEGIN CERTIFICATE-----\n{lines}\n-----END CERTIFICATE-----\nRenew by June.")
    assert out == f"-----BEGIN CERTIFICATE-----\n{BASE64_PLACEHOLDER}\n-----END CERTIFICATE-----\nRenew by June."


# rule 3: hyphenation across line ends
@pytest.mark.parametrize(("text", "expected"), [
    ("The infra-\nstructure team", "The infrastructure team"),
    ("docu-\n  mentation", "documentation"),
    ("Anglo-\nFrench contract", "Anglo-French contract"),      # capital: a compound of names
    ("fixed for 2024-\n2025.", "fixed for 2024-2025."),         # a range
    ("send an e-\nmail", "send an e-mail"),                     # one letter before: never hyphenation
    ("the well-\nknown fault and a well-known fix", "the well-known fault and a well-known fix"),  # evidence
    ("re-\nordered when the re-order level", "re-ordered when the re-order level"),
    ("the co-\noperation and the cooperation", "the cooperation and the cooperation"),  # joined word seen
    ("a list -\nitem", "a list -\nitem"),                       # a dash, not a hyphen
])
def test_pdf_line_end_hyphenation(text: str, expected: str):
    assert normalize_text(text, rejoin_hyphens=True) == expected


def test_line_end_hyphens_are_kept_outside_pdf_but_soft_hyphen_breaks_always_join():
    assert normalize_text("infra-\nstructure") == "infra-\nstructure"
    assert normalize_text("manu\u00ad\nfacturing") == "manufacturing"


def test_only_pdf_documents_get_the_hyphenation_rule_and_blank_documents_are_dropped():
    docs = [Document("infra-\nstructure", "/a.pdf", metadata={"format": "pdf"}),
            Document("infra-\nstructure", "/a.txt"), Document("\x00\u200b \n", "/b.txt")]
    assert [d.text for d in normalize_documents(docs)] == ["infrastructure", "infra-\nstructure"]


# rule 4: control and invisible characters
def test_controls_and_invisible_format_characters_are_removed():
    text = ("o\x00ce Gesamt\u00adkonzept Replication\u200bController word\u2060joiner \ufeffBOM "
            "l\u200eto\u200fr \u202aemb\u202c")
    assert normalize_text(text) == "oce Gesamtkonzept ReplicationController wordjoiner BOM ltor emb"


def test_meaningful_joiners_are_kept():
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    emoji = "\U0001F469\u200d\U0001F4BB \u2764\ufe0f\u200d\U0001F525"
    assert normalize_text(f"{persian} {emoji} cluster\u200c-wide") == f"{persian} {emoji} cluster-wide"


def test_tabs_and_line_breaks_survive():
    assert normalize_text("a\tb\nc\r\nd") == "a\tb\nc\nd"


# rule 5: compatibility characters
def test_compatibility_forms_with_letters_or_digits_are_mapped():
    text = "\ufb01nal \ufb02ow o\ufb03ce ＡＢＣ２０２４ ｶﾀｶﾅ Ⅳ ① ㎏ \ufe8d\ufe91 ⼈ 𝐁old x\u00a0y z\u3000w"
    assert normalize_text(text) == "final flow office ABC2024 カタカナ IV 1 kg \u0627\u0628 人 Bold x y z w"


def test_meaning_bearing_compatibility_forms_are_kept():
    text = "m² H₂O ½ cup, 价格，包含税（含）。 Wait… ㅋㅋ don´t Q＆A"
    assert normalize_text(text) == text


def test_decomposed_accents_are_composed():
    assert normalize_text("Cafe\u0301") == "Café"


# rule 6: whitespace
def test_whitespace_is_tidied_without_merging_paragraphs():
    text = ("  Title  \r\n\r\nFirst   line\t\t of text.   \n    indented code\n\n\n\n\nNext paragraph.\fPage two."
            "\u2028line")
    assert normalize_text(text) == ("Title\n\nFirst line of text.\n    indented code\n\nNext paragraph.\n\nPage two."
                                    "\nline")


def test_normalisation_is_idempotent_and_rules_can_be_skipped():
    text = f"The \ufb01nal o\x00ce\u200b ＡＢＣ data:image/png;base64,{_b64(300)}  \n\n\n\nend"
    once = normalize_text(text, rejoin_hyphens=True)
    assert normalize_text(once, rejoin_hyphens=True) == once
    assert "\ufb01" in normalize_text(text, skip=("compatibility",))
    assert normalize_text(text, skip=RULES) == text
    with pytest.raises(ValueError, match="unknown normalisation rule"):
        normalize_text(text, skip=("nfkc",))
