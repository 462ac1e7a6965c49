"""Does a tokenizer see a word, or map it to its unknown token?

One rule for the two places that ask: the load notice for text the embedder cannot represent (``ingest.scripts``,
through ``ingest.splitter.TokenCounter``) and the sub-query deduplication, which must not trust an embedding that
cannot see the text (``agents.dedup_rules.sees``). WordPiece tokenizers (MiniLM) map a word of a script outside their
vocabulary (Thai, Khmer, Amharic …) to ``[UNK]``, whole or in part; a byte-level tokenizer has no unknown token and
represents every character.
"""

from __future__ import annotations

from typing import Any


def unknown_token(tokenizer: Any) -> str | None:
    """The tokenizer's unknown token: a Hugging Face tokenizer's ``unk_token``, a Rust ``tokenizers.Tokenizer``'s
    ``model.unk_token``; None when it has none (byte-level BPE)."""
    unk = getattr(tokenizer, "unk_token", None) or getattr(getattr(tokenizer, "model", None), "unk_token", None)
    return unk or None


def maps_to_unknown(tokenizer: Any, word: str) -> bool:
    """True when ``tokenizer`` (Hugging Face or Rust ``tokenizers``) turns ``word``, or a part of it, into its
    unknown token."""
    unk = unknown_token(tokenizer)
    return unk is not None and unk in tokens(tokenizer, word)


def tokens(tokenizer: Any, text: str) -> list[str]:
    """The tokens of ``text`` with no special or padding tokens (the bundled tokenizer.json pads)."""
    tokenize = getattr(tokenizer, "tokenize", None)
    if callable(tokenize):  # Hugging Face
        return list(tokenize(text))
    encoding = tokenizer.encode(text, add_special_tokens=False)  # Rust
    return [t for t, m in zip(encoding.tokens, encoding.attention_mask) if m]
