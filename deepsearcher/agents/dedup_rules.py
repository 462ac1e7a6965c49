"""When two sub-queries may be merged: a lexical guard and the per-model cosine threshold.

Embedding similarity alone merges queries that differ in exactly the detail a follow-up is about: with the bundled
all-MiniLM-L6-v2 (ONNX int8), "What index types does Milvus support?" / "… Milvus Lite support?" score 0.947 and
"Milvus features added in 2023" / "… 2024" 0.974, above the old fixed threshold 0.92; a dropped gap query can end the
research loop. So a pair is a duplicate only when (1) no *anchor* tells the queries apart (``lexically_distinct`` is
False) and (2) the cosine of their embeddings reaches the threshold measured for the embedding model
(``threshold_for``). Both rules are measured in docs/benchmarks.md, "Sub-query dedup calibration".

Anchors (``anchors``), found after Unicode NFKC normalisation (full-width forms become ASCII):

- **Numbers**: every run of decimal digits of any script (so ``٢٠٢٤`` = ``２０２４`` = ``2024``), with ``.`` or ``,``
  between digit groups. ``1,000,000`` and ``1.000.000`` (a first group of at most three digits, then groups of
  exactly three, with a comma or a repeated separator) are thousands and become ``1000000``; otherwise the separator
  is a decimal point or a version dot (``2,5`` = ``2.5``; ``2.5`` ≠ ``2.4``; ``3.0.1`` kept digit for digit);
  integers lose leading zeros.
- **Names**: word pieces (maximal runs of letters of one Unicode script, UAX #24) that are
  (a) in a bicameral script (Latin, Cyrillic, Greek, Armenian), at least two letters long, and carry an upper-case
  letter — except a sentence-initial word whose only capital is its first letter ("What", "Welche"), since every
  sentence starts that way; (b) in a script other than the query's main script, in any case: a Latin word inside
  Chinese, Japanese, Russian or Arabic text is a product, person or code name ("milvus lite" in "如何安装milvus
  lite"); the main script is the one with most words, a Han or kana character counting as one word (those scripts
  put no spaces between words), and a tie goes to the non-Latin script; or (c) Latin letters and digits joined
  (``H100``, ``GPT-4o`` → ``4o``, ``Q1``, ``x86``; not ``v3``, which is the number 3 with a version mark).
- **Negation**: a cue word from a closed list per language (not, never, without, nicht, kein…, ne, pas, sans, no,
  sin, nunca, não, non, senza, не, нет, без, لا, لم, لن, ليس, غير, بدون…), English "n't", French "n'", or, where
  words are not separated by spaces, 不 没 无 非 未 (not in 不同, 不断, 非常, 未来, 无论), ない, ません, なし, 않, 없.
  Only the presence counts (the query's polarity), as NegEx-style trigger lists do (Chapman et al. 2001).
- **Extremes**: "maximum" and "minimum" words (max, maximal…, upper limit, largest, highest, höchst…, máximo,
  максимальн…, 最大, 最高, 上限, أقصى… and their opposites), the antonym pair that questions about limits turn on.

Two queries are lexically distinct when their number sets differ, when one is negated and the other is not, when
their extremes differ, or when either has a name the other does not mention. A name is mentioned when the other query
has the same word, case-folded ("Milvus" ~ "milvus"), or an inflected form of it (a common prefix of at least 5
letters and at most 2 letters left on either side: Russian "Москвы" ~ "Москве", German "Berlin" ~ "Berlins"), or,
for a letters-and-digits name, the same characters with spaces and hyphens removed ("8GB" ~ "8 GB").

Limits (each a pair in the committed set, so its cost is in the published rates):
- Scripts without case (Chinese, Japanese, Korean, Arabic, Hebrew, Thai, …) give no signal for their own names:
  北京 / 上海 or القاهرة / الرياض are left to the embedding. Numbers and Latin words inside such text do count.
- German capitalises every noun, so German paraphrases that swap a noun ("Indextypen" / "Arten von Indizes") are kept
  as distinct: a false keep, which costs one extra search, never a lost follow-up. Abbreviations against their
  expansion ("RAG" / "retrieval-augmented generation") are kept for the same reason; so are numbers written as words
  against digits ("ten" / "10"), and short inflected names ("Рим" / "Рима").
- Names written in lower case in a cased script ("milvus lite" / "milvus standalone") are not anchors; nor is a name
  that starts the sentence ("Qdrant vs …" / "Milvus vs …"). Other antonyms, ordinals written as words ("first round"
  / "second round") and a different aspect of the same topic carry no anchor: these are the embedding's job.
- An embedding cannot compare what its model cannot see: all-MiniLM-L6-v2's vocabulary maps Thai, Khmer, Amharic,
  Georgian, Burmese, most Han characters … to ``[UNK]``, so any two such queries embed alike (and "ការដំឡើង Milvus
  Lite" / "ការលុប Milvus Lite", install / remove, differ only in what it cannot see). So when the embedder's
  tokenizer turns any word of either query into its unknown token, in whole or in part (``sees``), the pair is
  compared as text only: a duplicate when both are the same after NFKC, case folding and removing spaces and
  punctuation (``same_text``). A false keep costs one search; a false merge a question. Chinese queries with
  all-MiniLM-L6-v2 fall here too (most Han characters are ``[UNK]``): "如何安装milvus lite" / "如何安装 Milvus Lite？"
  are still duplicates, paraphrases are kept. Embedders without a local tokenizer (remote APIs) are trusted.
- Negation outside the cue lists is missed (a verb: "dropped support"; affixes: "unsupported", "невозможно";
  languages not listed); a cue that does not negate the question ("not only …, but also …") keeps a duplicate.
"""

from __future__ import annotations

import functools
import json
import logging
import unicodedata
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import regex

from deepsearcher.unknown_words import maps_to_unknown

log = logging.getLogger(__name__)

THRESHOLDS_FILE = "dedup_thresholds.json"
"""Per-model thresholds in ``deepsearcher/agents/data/``, written by ``scripts/calibrate_dedup.py``."""

# One alternative per script; Han, Hiragana and Katakana (with the prolonged sound mark, whose script is Common) form
# one run, since Japanese mixes them inside one word. Combining marks stay with their base letter.
_SCRIPT_RUN = regex.compile(
    r"(?P<cjk>(?:\p{sc=Han}|\p{sc=Hiragana}|\p{sc=Katakana}|ー)+)"
    r"|(?P<latin>(?:\p{sc=Latin}\p{M}*)+)"
    r"|(?P<cyrillic>(?:\p{sc=Cyrillic}\p{M}*)+)"
    r"|(?P<greek>(?:\p{sc=Greek}\p{M}*)+)"
    r"|(?P<armenian>(?:\p{sc=Armenian}\p{M}*)+)"
    r"|(?P<arabic>(?:\p{sc=Arabic}\p{M}*)+)"
    r"|(?P<hebrew>(?:\p{sc=Hebrew}\p{M}*)+)"
    r"|(?P<hangul>(?:\p{sc=Hangul}\p{M}*)+)"
    r"|(?P<other>\p{L}\p{M}*)"  # any other script: one letter per piece (no run can then cross two scripts)
)
_CASED_SCRIPTS = frozenset({"latin", "cyrillic", "greek", "armenian"})
_WORD = regex.compile(r"[\p{L}\p{M}\p{Nd}]+")
_NUMBER = regex.compile(r"\p{Nd}+(?:[.,]\p{Nd}+)*")
_LATIN_ALNUM = regex.compile(r"(?:\p{sc=Latin}|\p{Nd})+")
_VERSION = regex.compile(r"[vV]\p{Nd}+")
_SENTENCE_END = frozenset(".!?;:…。！？；：\n")
_OPENERS = "\"'“”‘’«»„‚([{¿¡-–—•*#> \t\r"
_SQUASH = regex.compile(r"[\s\-_.·/]+")
_NEGATION_WORDS = frozenset({
    "not", "no", "never", "without", "none", "neither", "nor", "cannot", "non",  # en (non also fr, it)
    "nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "ohne", "weder",  # de
    "ne", "pas", "jamais", "sans", "aucun", "aucune", "ni",  # fr (ni also es)
    "nunca", "jamás", "sin", "ningún", "ninguna", "ninguno", "tampoco",  # es
    "não", "sem", "nenhum", "nenhuma", "mai", "senza", "nessun", "nessuno", "nessuna",  # pt, it
    "не", "нет", "ни", "без", "никогда", "нельзя",  # ru
    "لا", "لم", "لن", "ليس", "ليست", "غير", "بدون", "دون", "ولا", "ولم",  # ar
    "안", "못",  # ko
})
_NEGATION_MARKS = regex.compile(
    r"n['’]t\b|\bn['’](?=\p{L})"  # English contraction, French elision (n'est)
    r"|不(?!同|断|斷|久)|[没沒]|[无無](?![论論])|非(?!常)|未(?![来來])"  # Chinese (and Japanese kanji)
    r"|(?<!少)ない|ません|なし|않|없",  # Japanese, Korean
    regex.IGNORECASE)


def _whole_words(alternatives: str) -> str:
    return r"(?<!\p{L})(?:" + alternatives + r")(?!\p{L})"


_EXTREMES = {
    "max": regex.compile(
        _whole_words(r"max|maximum|maxima|maximal\p{L}*|upper (?:limit|bound)\p{L}*|largest|biggest|highest|"
                     r"höchst\p{L}*|größt\p{L}*|máxim\p{L}*|massim\p{L}*|максимальн\p{L}*|наибольш\p{L}*|"
                     r"أقصى|الأقصى|الأكبر|أكبر")
        + r"|最大|最高|上限|최대", regex.IGNORECASE),
    "min": regex.compile(
        _whole_words(r"min|minimum|minima|minimal\p{L}*|lower (?:limit|bound)\p{L}*|smallest|lowest|"
                     r"kleinst\p{L}*|niedrigst\p{L}*|mindest\p{L}*|mínim\p{L}*|minim[oa]|минимальн\p{L}*|"
                     r"наименьш\p{L}*|أدنى|الأدنى|الأصغر|أصغر")
        + r"|最小|最低|下限|최소", regex.IGNORECASE),
}
_INFLECTION_STEM = 5  # shared prefix (letters) for two words to count as forms of one name
_INFLECTION_TAIL = 2  # letters each word may have after that prefix


@dataclass(frozen=True)
class Anchors:
    """What ``lexically_distinct`` compares.

    Attributes:
        numbers: canonical numbers ("2024", "2.5", "1000000").
        negations: the negation cues found (empty for a positive query).
        extremes: "max" and/or "min" when the query asks for a maximum or a minimum.
        names: case-folded name anchors (see the module docstring).
        words: every case-folded word piece and letters-and-digits token of the query, to look names up in.
        squashed: the case-folded query without spaces, hyphens, underscores, dots and slashes.
    """

    numbers: frozenset[str]
    negations: frozenset[str]
    extremes: frozenset[str]
    names: frozenset[str]
    words: frozenset[str]
    squashed: str


def anchors(text: str) -> Anchors:
    """The anchors of one query (rules in the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    numbers = frozenset(_canonical_number(m.group()) for m in _NUMBER.finditer(text))
    pieces = _pieces(text)
    main = _main_script(pieces)
    names: set[str] = set()
    for script, piece, initial in pieces:
        if script != main or _is_cased_name(script, piece, initial):
            names.add(piece.casefold())
    words = {piece.casefold() for _, piece, _ in pieces}
    for match in _LATIN_ALNUM.finditer(text):
        token = match.group()
        if regex.search(r"\p{L}", token) and regex.search(r"\p{Nd}", token) and not _VERSION.fullmatch(token):
            names.add(token.casefold())
            words.add(token.casefold())
    negations = {w for w in words if w in _NEGATION_WORDS}
    negations.update(m.group().casefold() for m in _NEGATION_MARKS.finditer(text))
    extremes = frozenset(kind for kind, pattern in _EXTREMES.items() if pattern.search(text))
    return Anchors(numbers, frozenset(negations), extremes, frozenset(names), frozenset(words),
                   _SQUASH.sub("", text.casefold()))


def distinguishing_terms(a: str, b: str) -> tuple[str, ...]:
    """The numbers, negation cues, extremes and names telling ``a`` and ``b`` apart, sorted; empty if there are none.

    Meant for logs and events ("kept: 2023, 2024"). Symmetric in ``a`` and ``b``.
    """
    x, y = anchors(a), anchors(b)
    terms = set(x.numbers ^ y.numbers)
    if bool(x.negations) != bool(y.negations):
        terms.update(x.negations | y.negations)
    terms.update(x.extremes ^ y.extremes)
    terms.update(name for name in x.names if not _mentions(y, name))
    terms.update(name for name in y.names if not _mentions(x, name))
    return tuple(sorted(terms))


def lexically_distinct(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ in a number, year, version, name, negation or extreme: never duplicates.

    Pure and cheap (regular expressions, no embedder). False does not mean duplicate: it means the embedding
    threshold decides. Source of the rule: the failing pairs of issue #11 item 6; measured on
    ``tests/fixtures/dedup/query_pairs.jsonl`` by ``scripts/calibrate_dedup.py``.
    """
    return bool(distinguishing_terms(a, b))


def sees(tokenizer: Any | None, text: str) -> bool:
    """False when ``tokenizer`` (Hugging Face or Rust ``tokenizers``) turns any word of ``text`` (a run of letters,
    marks and digits) into its unknown token, in whole or in part: the embedding then cannot tell that word from
    another. True for a tokenizer that is not known (None: a remote API is trusted)."""
    if tokenizer is None:
        return True
    return not any(maps_to_unknown(tokenizer, word.group())
                   for word in _WORD.finditer(unicodedata.normalize("NFKC", text)))


_PUNCT = regex.compile(r"[\s\p{P}\p{S}]+")


def same_text(a: str, b: str) -> bool:
    """The comparison used where the embedding cannot see the text: equal after NFKC, case folding and removing
    spaces, punctuation and symbols."""
    def squash(text: str) -> str:
        return _PUNCT.sub("", unicodedata.normalize("NFKC", text).casefold())
    return squash(a) == squash(b)


def threshold_for(model_name: str, configured: float | None) -> float:
    """The cosine at or above which two sub-queries embedded by ``model_name`` are near-duplicates.

    Args:
        model_name: the embedder's ``model_name`` ("all-MiniLM-L6-v2"); a "bundled:" prefix, a hub organisation
            ("sentence-transformers/…") or a folder path are ignored, and case does not matter.
        configured: the user's ``query.dedup_threshold`` when they set one; it always wins.

    Returns:
        A cosine in (0, 1]: ``configured``, else the threshold calibrated for the model, else the table's
        conservative default for models never calibrated.

    Raises:
        ValueError: ``configured`` is outside (0, 1].
    """
    if configured is not None:
        if not 0 < configured <= 1:
            raise ValueError(f"dedup threshold must be in (0, 1], got {configured}")
        return float(configured)
    table = _thresholds()
    entry = table["models"].get(model_key(model_name))
    if entry is None:
        log.debug("no calibrated dedup threshold for %r; using the default %s", model_name, table["default"])
        return float(table["default"])
    return float(entry["threshold"])


def model_key(model_name: str) -> str:
    """The key of ``model_name`` in the thresholds table: last path component, without "bundled:", case-folded."""
    name = model_name.strip().removeprefix("bundled:")
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].casefold()


@functools.lru_cache(maxsize=1)
def _thresholds() -> dict[str, Any]:
    path = files("deepsearcher.agents") / "data" / THRESHOLDS_FILE
    table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return table


def _pieces(text: str) -> list[tuple[str, str, bool]]:
    """``(script, piece, sentence_initial)`` for every single-script letter run of ``text``, in order."""
    out: list[tuple[str, str, bool]] = []
    for word in _WORD.finditer(text):
        initial = _starts_sentence(text, word.start())
        for run in _SCRIPT_RUN.finditer(word.group()):
            script = run.lastgroup or "other"
            out.append((script, run.group(), initial and run.start() == 0))
    return out


def _main_script(pieces: list[tuple[str, str, bool]]) -> str:
    """The script with most words; a Han/kana character counts as a word (no spaces there); ties go to non-Latin."""
    weight: dict[str, int] = {}
    for script, piece, _ in pieces:
        weight[script] = weight.get(script, 0) + (len(piece) if script == "cjk" else 1)
    return max(weight, key=lambda s: (weight[s], s != "latin"), default="")


def _starts_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip(_OPENERS)
    return not before or before[-1] in _SENTENCE_END


def _is_cased_name(script: str, piece: str, initial: bool) -> bool:
    if script not in _CASED_SCRIPTS or len(piece) < 2:
        return False
    capitals = [ch.isupper() or unicodedata.category(ch) == "Lt" for ch in piece]
    if not any(capitals):
        return False
    return not (initial and not any(capitals[1:]))


def _mentions(other: Anchors, name: str) -> bool:
    if name in other.words:
        return True
    if regex.search(r"\p{Nd}", name):
        return _SQUASH.sub("", name) in other.squashed
    return any(inflected(name, word) for word in other.words)


def inflected(x: str, y: str) -> bool:
    """Same stem, different ending: Москвы / Москве, Berlin / Berlins (not Iran / Iraq: the stem is too short)."""
    stem = 0
    for cx, cy in zip(x, y):
        if cx != cy:
            break
        stem += 1
    return stem >= _INFLECTION_STEM and len(x) - stem <= _INFLECTION_TAIL and len(y) - stem <= _INFLECTION_TAIL


def _canonical_number(raw: str) -> str:
    digits = "".join(str(unicodedata.decimal(ch)) if ch not in ".," else ch for ch in raw)
    groups = regex.split(r"[.,]", digits)
    separators = regex.findall(r"[.,]", digits)
    if len(groups) == 1:
        return str(int(digits))
    thousands = all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3 and (
        separators[0] == "," or len(separators) > 1) and len(set(separators)) == 1
    if thousands:
        return str(int("".join(groups)))
    return ".".join(groups)
