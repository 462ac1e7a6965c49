"""Text from outside printed as plain text in the terminal: the one place the CLI's views escape strings.

Every string that comes from a document, a web page, a file name, a model, an HTTP reason phrase or a config value
goes through ``plain`` (a Rich ``Text``, never parsed as markup) or ``safe`` (for the few places that interpret
markup, such as a progress column). Rich markup inside it (``[/red]``, ``[link=https://…]``) is shown, not
interpreted, so it can neither crash a command (``MarkupError``) nor make a disguised hyperlink; control characters
(ESC sequences, OSC 8 hyperlinks, backspaces) are shown as ``\\xNN`` and bidirectional controls (the right-to-left
override U+202E …) as ``\\u202e``, so it can neither drive the terminal nor reorder what it shows.
"""

from __future__ import annotations

import re

from rich.markup import escape
from rich.text import Text

#: bidirectional controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, ALM, LRM, RLM): they reorder what the
#: terminal shows, so "evil\u202egpj.exe" would read as "evilexe.jpg"
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")  # C0 except tab and newline, DEL, C1
_CONTROL_ONE_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}]")  # also line separators
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def printable(value: object, multiline: bool = True) -> str:
    """``str(value)`` with control characters shown as ``\\xNN`` and lone surrogates (bytes of a non-UTF-8 file name)
    as ``\\udcNN``, which a UTF-8 terminal could not be sent. ``multiline`` keeps tab and newline; otherwise they are
    shown too (a file name cannot fake a line of output)."""
    text = str(value).encode("utf-8", "backslashreplace").decode("utf-8")
    pattern = _CONTROL if multiline else _CONTROL_ONE_LINE
    return pattern.sub(_escape, text)


def one_line(value: object) -> str:
    """``printable(value, multiline=False)``: for table cells and one-line fields (a file name holding a newline
    cannot break a row or fake another line of output)."""
    return printable(value, multiline=False)


def plain(value: object, style: str = "", *, multiline: bool = False) -> Text:
    """``value`` as a Rich ``Text`` printed literally: no markup interpreted, control characters shown (newlines
    too, unless ``multiline``)."""
    return Text(printable(value, multiline), style=style)


def safe(value: object, *, multiline: bool = False) -> str:
    """``value`` for a string Rich parses as markup: markup escaped, control characters shown (newlines too, unless
    ``multiline``)."""
    return escape(printable(value, multiline))
