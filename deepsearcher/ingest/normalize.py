"""Text normalisation between extraction and splitting: one stage, the same rules for every format.

Rules, in the order they run, each with its reason (measured on the fidelity suite, ``scripts/bench_fidelity.py``:
no rule lowers any format's score; the table in docs/benchmarks.md shows today's loader with and without the stage):

1. **Data URIs** (``data:image/png;base64,...``, also non-base64 ones) become ``[data URI image/png]``. An inline
   image in Markdown or HTML is ~100 KB of base64 that splits into hundreds of chunks of noise which then rank in
   retrieval (../shared/cases/ingest/markdown_base64_image.py: one image gave ~577 chunks).
2. **Long base64 runs** become ``[base64 data]``: one token of >= 80 base64 characters holding an upper-case letter,
   a lower-case letter and a digit, or a block of >= 3 lines of >= 40 such characters each (PEM, MIME). Pure hex runs
   (checksums, commit ids) are kept: people search for them. Real words, URLs and paths never qualify (their
   separators ``. - _ :`` break the run), nor do JWT/base64url tokens with ``-``/``_`` in them (left alone).
3. **Line-end hyphenation** (``rejoin_hyphens=True``, set for PDF text only: other formats store logical lines, so a
   hyphen at a line end there is real). ``infra-\\nstructure`` becomes ``infrastructure``; the hyphen is kept (and the
   line break dropped) for compounds and ranges: when the right part starts with an upper-case letter or a digit
   (``Anglo-\\nFrench``, ``2024-\\n2025``), when the left part is a single letter (``e-\\nmail``; typesetting never
   hyphenates after one letter: TeX's ``\\lefthyphenmin`` is 2 or more), or when the document itself writes the left
   part with a hyphen mid-line (``well-known`` elsewhere keeps ``well-\\nknown``; ``re-order`` keeps ``re-\\nordered``)
   and not the joined word. Without any evidence the parts are joined, as pdftotext and GROBID do: in typeset text a
   line-end hyphen is far more often hyphenation. A **soft hyphen** before a line break always joins (it marks a
   hyphenation point by definition), in every format.
4. **Control and invisible format characters** are removed: NUL and the other C0/C1 controls except tab and line
   breaks (PDF ligature glyphs mapped to U+0000, pypdf #1351; they also break Milvus inserts), soft hyphen U+00AD
   (``Gesamt\\u00adkonzept`` must match ``Gesamtkonzept`` in BM25), zero-width space U+200B, word joiner U+2060, byte
   order marks U+FEFF anywhere (files concatenated with their BOMs), bidi marks and embeddings (U+200E/F,
   U+202A-202E, U+2066-2069: display-only, and a "trojan source" vector), U+FFFC object replacement. **ZWJ/ZWNJ**
   (U+200D/U+200C) are kept between two characters at or above U+0590 (Hebrew onwards: Arabic, Persian, Indic
   scripts, emoji): there they change meaning (Persian ``می‌خواهم``, emoji sequences such as ``👩‍💻``); next to Latin
   letters, digits or punctuation they carry nothing and are removed (``cluster\\u200c-wide``).
5. **Compatibility characters** whose NFKC form holds a letter or digit are mapped to it, space separators become a
   space, then the text is NFC: ligatures ``ﬁ`` -> ``fi`` (PDF text layers), full-width Latin letters and digits
   ``２０２４`` -> ``2024``, half-width katakana -> full-width, Arabic presentation forms -> letters, Kangxi radicals
   -> ideographs, math alphanumerics, Roman numerals, circled and squared forms (``㎏`` -> ``kg``); no-break and
   ideographic spaces -> space. Plain NFKC is **not** used because it changes meaning or convention in some classes,
   which are kept: superscripts and subscripts (``m²``, ``H₂O`` would become ``m2``, ``H2O``), vulgar fractions
   (``½`` would become ``1⁄2``), compatibility forms that are only punctuation or symbols (``，：（）`` are the
   normal punctuation of Chinese and Japanese text; ``…`` would become ``...``; ``´`` a space plus a combining
   accent), and Hangul compatibility jamo (``ㅋㅋ`` would become conjoining jamo that render and tokenise
   differently). Measured: plain NFKC lowered the TXT score (``…`` in a Windows-1252 page), this mapping does not.
6. **Whitespace**: ``\\r\\n``/``\\r``/U+2028 become ``\\n``, form feed and U+2029 a paragraph break; trailing spaces
   are stripped and runs of spaces/tabs inside a line become one space (leading indentation is kept, for code);
   three or more line breaks become two. Paragraph breaks (blank lines) are never removed, so the splitter still
   sees paragraphs.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import replace
from functools import lru_cache
from typing import Collection, Iterable

from deepsearcher.errors import SkipSource
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: Version of these rules; part of every source's version hash (raise it when a rule changes what is stored, so the
#: next load re-normalises unchanged files).
NORMALIZE_VERSION = "1"
#: Share of control characters (other than tab, line breaks, form feed and NUL) above which extracted "text" is
#: binary garbage: random bytes decode to text in some code page, and converters pass corrupt files through as-is.
#: NUL is not counted: extractors leave it where a font maps ligature glyphs to U+0000 (pypdf #1351) and JSON
#: writes ``\u0000``; rule 4 removes it, and an ordinary page with a few percent of them is text (issue #13).
MAX_CONTROL_SHARE = 0.01

BASE64_PLACEHOLDER = "[base64 data]"

_DATA_URI = re.compile(
    r"data:(?P<mime>[a-zA-Z]+/[a-zA-Z0-9.+-]+)?(?:;[a-zA-Z0-9-]+=[^;,\s]*)*"
    r"(?:;base64,[A-Za-z0-9+/=%]*|,[^\s)\"'<>\]]*)")
_B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{80,}={0,2}(?![A-Za-z0-9+/=])")
_B64_BLOCK = re.compile(r"(?m)^[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*\n(?:[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*\n)+"
                        r"(?:[ \t]*[A-Za-z0-9+/]{1,}={0,2}[ \t]*$)?")
_SOFT_HYPHEN_BREAK = re.compile(r"\u00ad[ \t]*\r?\n[ \t]*")
_LINE_END_HYPHEN = re.compile(r"(\w+)[-\u2010][ \t]*\r?\n[ \t]*(\w+)")
_REMOVE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069"
                     "\ufeff\ufffc]")
_GARBAGE = re.compile("[\x01-\x08\x0e-\x1f\x7f-\x9f\ufffd]")
_JOINERS = re.compile("[\u200c\u200d]")
_HSPACE = re.compile(r"(?<=\S)[ \t]{2,}")
_TRAILING = re.compile(r"[ \t]+$", re.M)
_BLANKS = re.compile(r"\n{3,}")


#: Rule names (module docstring order), for ``skip=``: the fidelity bench switches each off in turn to measure it.
RULES = ("data_uri", "base64", "hyphenation", "invisible", "compatibility", "whitespace")


def normalize_text(text: str, *, rejoin_hyphens: bool = False, skip: Collection[str] = ()) -> str:
    """Apply rules 1-6 of the module docstring to one text.

    Args:
        text: extracted text (any format).
        rejoin_hyphens: also rejoin words hyphenated across line ends (PDF text only; see rule 3).
        skip: names from ``RULES`` not to apply.

    Returns:
        The normalised text; may be empty when the input held only noise.

    Raises:
        ValueError: an unknown rule name in ``skip``.
    """
    if not set(skip) <= set(RULES):
        raise ValueError(f"unknown normalisation rule(s) {sorted(set(skip) - set(RULES))}; known: {RULES}")
    if "data_uri" not in skip:
        text = _DATA_URI.sub(_data_uri_placeholder, text)
    if "base64" not in skip:
        text = _B64_BLOCK.sub(lambda m: _base64_placeholder(m, block=True), text)
        text = _B64_TOKEN.sub(_base64_placeholder, text)
    if "hyphenation" not in skip:
        text = _SOFT_HYPHEN_BREAK.sub("", text)
        if rejoin_hyphens:
            text = rejoin_hyphenation(text)
    if "invisible" not in skip:
        text = text.replace("\f", "\n\n").replace("\u2029", "\n\n").replace("\v", "\n")
        text = _REMOVE.sub("", text)
        text = _JOINERS.sub(_keep_meaningful_joiner, text)
    if "compatibility" not in skip:
        text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).translate(_compat_table()))
    return text if "whitespace" in skip else _whitespace(text)


def normalize_documents(documents: Iterable[Document], *, skip: Collection[str] = ()) -> list[Document]:
    """Normalise every Document's text; Documents left blank are dropped.

    PDF Documents (``metadata["format"] == "pdf"``, set by ``deepsearcher.ingest.formats.pdf``) also get rule 3.
    """
    out = []
    for doc in documents:
        text = normalize_text(doc.text, rejoin_hyphens=doc.metadata.get("format") == "pdf", skip=skip)
        if text.strip():
            out.append(replace(doc, text=text) if text != doc.text else doc)
        else:
            log.debug("%s page %s: nothing left after normalisation", doc.source, doc.page)
    return out


def normalize_stage(documents: Iterable[Document], source: str) -> list[Document]:
    """The load pipeline's normalisation stage, run on every loader's output before splitting.

    Refuses binary garbage (``MAX_CONTROL_SHARE``), normalises every Document (``normalize_documents``) and keeps
    those with text left.

    Raises:
        SkipSource: "binary or corrupt content (...)", or "no text extracted" when nothing is left.
    """
    docs = [d for d in documents if d.text and d.text.strip()]
    text = "".join(d.text for d in docs)
    control = len(_GARBAGE.findall(text))
    if control > MAX_CONTROL_SHARE * len(text):
        raise SkipSource(f"binary or corrupt content ({control} control characters in {len(text)})")
    kept = normalize_documents(docs)
    if not kept:
        raise SkipSource("no text extracted")
    log.debug("%s: %d document(s) normalised", source, len(kept))
    return kept


def _data_uri_placeholder(match: re.Match[str]) -> str:
    return f"[data URI {match.group('mime') or 'text/plain'}]"


def _base64_placeholder(match: re.Match[str], block: bool = False) -> str:
    run = match.group(0)
    if not (re.search(r"[A-Z]", run) and re.search(r"[a-z]", run) and re.search(r"[0-9]", run)):
        return run  # e.g. a long all-letter word list or a DNA sequence: not base64 in practice
    if re.fullmatch(r"[0-9a-fA-F\s]+", run):
        return run  # hex digests are searched for
    return BASE64_PLACEHOLDER + ("\n" if block and run.endswith("\n") else "")


def rejoin_hyphenation(text: str) -> str:
    """Rule 3: rejoin words hyphenated across line ends; keep compounds' and ranges' hyphens (no line break)."""
    hyphen_prefixes = {m.group(1).lower() for m in re.finditer(r"(\w+)-(?=[a-z])", text)}
    words = {w.lower() for w in re.findall(r"\w+", text)}

    def join(match: re.Match[str]) -> str:
        left, right = match.group(1), match.group(2)
        if right[0].isupper() or right[0].isdigit() or left[-1].isdigit() or len(left) < 2:
            return f"{left}-{right}"
        if (left + right).lower() in words:
            return left + right
        if left.lower() in hyphen_prefixes:
            return f"{left}-{right}"
        return left + right

    return _LINE_END_HYPHEN.sub(join, text)


def _keep_meaningful_joiner(match: re.Match[str]) -> str:
    text, at = match.string, match.start()
    before = text[at - 1] if at > 0 else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    return match.group(0) if ord(before) >= 0x0590 and ord(after) >= 0x0590 and not after.isspace() else ""


#: Compatibility-decomposition tags left alone (rule 5).
_KEPT_TAGS = {"<super>", "<sub>", "<fraction>"}


@lru_cache(maxsize=1)
def _compat_table() -> dict[int, str]:
    """Code point -> NFKC form for every compatibility character outside the kept classes (rule 5): ~3,000
    entries, built once per process (~0.3 s)."""
    table = {}
    for cp in range(0xA0, 0x20000):  # above U+1FFFF there are only canonical (CJK compatibility) mappings
        ch = chr(cp)
        decomposition = unicodedata.decomposition(ch)
        if not decomposition.startswith("<") or decomposition.split(" ", 1)[0] in _KEPT_TAGS:
            continue
        mapped = unicodedata.normalize("NFKC", ch)
        if unicodedata.category(ch) == "Zs":
            table[cp] = " "  # no-break, narrow, figure, ideographic spaces
        elif any(c.isalnum() for c in mapped) and not 0x3131 <= cp <= 0x318E:  # not Hangul compatibility jamo
            table[cp] = mapped
    return table


def _whitespace(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n")
    text = _TRAILING.sub("", text)
    text = _HSPACE.sub(" ", text)
    return _BLANKS.sub("\n\n", text).strip()
