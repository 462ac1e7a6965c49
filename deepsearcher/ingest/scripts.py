"""Text the embedding model cannot represent: letters its tokenizer maps to the unknown token.

All-MiniLM's WordPiece vocabulary has no Thai, Khmer, Georgian, ... letters: such text is embedded as a row of
``[UNK]`` tokens, all alike, so dense search cannot tell one such passage from another. A load says so for each
source where it matters (``FileResult.notice``) instead of storing it silently; BM25 still reads the words.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Callable, Sequence

#: below this share of a source's letters, unknown letters are noise (a name, a symbol) and not reported
NOTICE_SHARE = 0.05
#: a word: a run of letters and combining marks (Thai vowel signs are marks inside its words)
_WORD = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f\u0e31\u0e34-\u0e3a\u0e47-\u0e4e])+")


def unrepresented_notice(texts: Sequence[str], is_unknown: Callable[[str], bool]) -> str:
    """One line when at least ``NOTICE_SHARE`` of the letters in ``texts`` are in words the tokenizer turns into its
    unknown token (``is_unknown(word)``, asked once per distinct word with a non-ASCII letter: WordPiece maps a
    whole word to ``[UNK]`` when one of its letters is not in the vocabulary), naming their scripts; "" otherwise."""
    words: Counter[str] = Counter()
    ascii_letters = 0
    for text in texts:
        for word in _WORD.findall(text):
            if word.isascii():
                ascii_letters += len(word)
            else:
                words[word] += 1
    unknown = {word: count for word, count in words.items() if is_unknown(word)}
    total = ascii_letters + sum(len(w) * n for w, n in words.items())
    lost = sum(len(w) * n for w, n in unknown.items())
    share = lost / total if total else 0.0
    if share < NOTICE_SHARE:
        return ""
    scripts: Counter[str] = Counter()
    for word, count in unknown.items():
        for char in word:
            if not char.isascii():
                scripts[script_of(char)] += count
    names = ", ".join(name for name, _ in scripts.most_common(3))
    return (f"{share:.0%} of its letters ({names}) are unknown to the embedding model and stored as [UNK]: dense "
            "search cannot find that text (BM25 can); configure a multilingual embedding model for it")


def script_of(char: str) -> str:
    """The script of a letter as its Unicode name begins ("Thai", "Khmer", "Georgian", "Cjk"), "other" if unnamed."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0].title() if name else "other"
