"""Plain text: bytes -> one Document, with encoding detection that gets short Windows-1252/Latin-1 text right.

Decoding order: the declared charset (HTTP header, caller), a byte order mark (UTF-8, UTF-16, UTF-32), strict UTF-8,
then charset-normalizer's best guess with two corrections measured on
tests/unit/ingest/formats/test_text_decoding.py (encodings x lengths from one line to a page):

* A **multi-byte or non-Latin guess** (Shift-JIS, GB18030, EUC-KR, Big5, cp1251, ...) is kept when its non-ASCII
  letters come in runs, as words of that script do. A short Latin text with one accented letter ("Año") otherwise
  decodes as Big5/GB18030 with one ideograph glued between Latin letters; such guesses are passed over for the next
  candidate, and BOM-less UTF-16 is only considered when NUL bytes are frequent.
* A **single-byte guess in Latin script** (for short text charset-normalizer often says mac_iceland, mac_roman,
  cp850...) is replaced by Windows-1252, the most used single-byte code page (and a superset of the printable
  Latin-1 range; Latin-1 bytes 0x80-0x9F are control codes no real file holds), unless Windows-1252 gives clearly
  messier text by charset-normalizer's own mess measure (so Polish cp1250 "Zażółć" stays cp1250).

Known limit: Turkish cp1254 text differs from cp1252 in six letters only and reads as cp1252 (ğ -> ð).
"""

from __future__ import annotations

import codecs
import logging
import unicodedata
from pathlib import Path
from typing import Iterator

from deepsearcher.errors import SkipSource
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: A plain-text file larger than this is read, normalised and split in pieces (``stream_text``), so that a load's
#: memory holds one piece and one batch of chunks, not the file (a 200 MB text took 2.3 GB read whole).
STREAM_BYTES = 16 * 1024 * 1024
#: Characters per piece (cut at a paragraph, else a line, else a space near this size).
PIECE_CHARS = 1 << 20
#: Bytes read at a time; the first block also decides the encoding.
BLOCK_BYTES = 1 << 20

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: How much messier (charset-normalizer mess ratio) cp1252 text may be than the guess and still win.
MESS_TOLERANCE = 0.15


def extract_text(data: bytes, source: str, *, title: str = "", charset: str | None = None) -> list[Document]:
    """Decode a plain-text file into one Document (``metadata["encoding"]`` names the encoding used).

    Raises:
        SkipSource: no encoding decodes the bytes.
    """
    text, encoding = decode(data, charset)
    return [Document(text=text, source=source, title=title, metadata={"format": "text", "encoding": encoding})]


def stream_text(path: Path, source: str, title: str = "") -> Iterator[Document]:
    """A large plain-text file as consecutive Documents of about ``PIECE_CHARS`` characters each, cut at paragraph
    (else line, else word) ends; their texts joined are the file's text. The encoding is decided on the first
    ``BLOCK_BYTES`` (as ``decode`` would on the whole file; a byte sequence it cannot decode later becomes U+FFFD).

    Raises:
        SkipSource: no encoding decodes the first block.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(BLOCK_BYTES)
        encoding = _stream_encoding(head)
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        buf = decoder.decode(head)
        meta = {"format": "text", "encoding": encoding}
        while True:
            block = fh.read(BLOCK_BYTES)
            buf += decoder.decode(block, final=not block)
            while len(buf) >= PIECE_CHARS:
                cut = _piece_end(buf, PIECE_CHARS)
                if buf[:cut].strip():
                    yield Document(text=buf[:cut], source=source, title=title, metadata=meta)
                buf = buf[cut:]
            if not block:
                break
        if buf.strip():
            yield Document(text=buf, source=source, title=title, metadata=meta)


def _stream_encoding(head: bytes) -> str:
    """The encoding of a file from its first block: a BOM, UTF-8 (a character cut at the block's end allowed), else
    the detection of ``decode``."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    return _detect(head[:max(1, len(head) - 4)])[1]


def _piece_end(text: str, limit: int) -> int:
    """Where to cut ``text`` near ``limit``: after the last paragraph break, else line break, else space in the
    second half of the piece; else at ``limit``."""
    for sep in ("\n\n", "\n", " "):
        pos = text.rfind(sep, limit // 2, limit)
        if pos >= 0:
            return pos + len(sep)
    return limit


def decode(data: bytes, charset: str | None = None) -> tuple[str, str]:
    """Decode bytes to text; returns ``(text, encoding name)``. See the module docstring for the order.

    Raises:
        SkipSource: no encoding decodes the bytes.
    """
    if charset:
        try:
            return data.decode(charset), charset
        except (LookupError, UnicodeDecodeError):
            log.debug("declared charset %s does not decode the bytes; detecting", charset)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                break
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    return _detect(data)


def _detect(data: bytes) -> tuple[str, str]:
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio
    from charset_normalizer.utils import is_multi_byte_encoding

    try:
        western: str | None = data.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    for match in from_bytes(data):  # best first
        encoding = match.encoding
        if encoding.startswith(("utf_16", "utf_32")) and data.count(0) * 10 < len(data):
            continue  # BOM-less UTF-16 is only plausible for mostly-ASCII text (every other byte NUL)
        guess = str(match)
        if western is None:
            return guess, encoding
        script = _script(guess)
        if is_multi_byte_encoding(encoding) or script != "LATIN":
            if _in_runs(guess):
                return guess, encoding
            continue  # one "ideograph" or Arabic letter glued between Latin letters: a mis-decoded accent
        if mess_ratio(western, 1.0) <= mess_ratio(guess, 1.0) + MESS_TOLERANCE:
            return western, "cp1252"
        return guess, encoding
    if western is None:
        raise SkipSource("undecodable text (no character encoding fits)")
    return western, "cp1252"


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (0x3000 <= cp <= 0x9FFF or 0xAC00 <= cp <= 0xD7AF or 0xF900 <= cp <= 0xFAFF or 0xFF00 <= cp <= 0xFFEF
            or 0x20000 <= cp <= 0x3FFFF or 0x1100 <= cp <= 0x11FF)


def _foreign(ch: str) -> bool:
    return ord(ch) > 0x7F and (ch.isalpha() or _is_cjk(ch))


def _in_runs(text: str) -> bool:
    """Most non-ASCII letters stand next to another one: text in a non-Latin script comes in runs (words), while a
    Latin text decoded with the wrong code page has one odd character glued between ASCII letters."""
    idx = [i for i, ch in enumerate(text) if _foreign(ch)]
    if not idx:
        return False
    runs = sum(1 for i in idx if (i > 0 and _foreign(text[i - 1])) or (i + 1 < len(text) and _foreign(text[i + 1])))
    return runs >= 0.5 * len(idx)


def _script(text: str) -> str:
    """Majority script (first word of the Unicode name) of the non-ASCII letters; LATIN when there are none."""
    counts: dict[str, int] = {}
    for ch in text:
        if ord(ch) > 0x7F and ch.isalpha():
            script = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else "LATIN"
