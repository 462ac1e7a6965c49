"""Ends a streamed report once the rest of it would be taken out anyway: a small model copying its prompt's sources,
or saying the same sentence over and over, until ``max_tokens``.

The bundled Qwen2.5-Coder-1.5B wrote its report as "Answer: …", then "Sources:" and each source's header and text
again (``echoes.strip_echoed_sources`` drops both): 5 of 20 2WikiMultiHopQA chain_of_rag reports and 4 of 20 naive ones
ran to ``max_tokens`` that way. At times it said its last sentences again until its limit
(``filler.without_repeated_sentences`` drops them). Each such report spent its whole ``llm.max_tokens`` on text the
reader never sees (27.4 s instead of 12.8 s for one question on 2 CPU cores), and then carried a note blaming the limit
("raise llm.max_tokens"), which was not the cause. ``ReplyGuard`` watches the stream and raises ``StopReply`` when it
sees either, so the provider stops the generation (docs/benchmarks.md, "The report stopped where the model starts
copying").

The report is the text before the copy's first header, or before the unfinished sentence after the loop
(``ReplyGuard.kept``), read by the same rules as before. DeepResearch's forced answer and a long report's sections
are watched for loops only (``loops_only``): their prompts' knowledge items are pasted on purpose at times, and the
report keeps such a paste, cited (``support.cite_copies``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from deepsearcher.agents.citations import folded, strip_citations
from deepsearcher.agents.echoes import pasted_from, shown_header
from deepsearcher.agents.filler import REPEAT_MIN_CHARS, without_repeated_sentences
from deepsearcher.types import Chunk, StopReply

#: characters of a shown source's text under its echoed header that make a copy certain (a header alone may be a
#: list of what was used, and a short line a quotation)
PASTE_STOP_CHARS = 80
#: times a sentence (≥ ``REPEAT_MIN_CHARS`` characters, citations aside) is said before the model is taken to loop:
#: a greedy model saying a sentence a third time says it until its limit
LOOP_REPEATS = 3

#: copying the prompt's sources (``ReplyGuard.reason``)
COPYING = "the model began copying its prompt's sources into the report"
#: a loop (``ReplyGuard.reason``)
LOOPING = "the model began saying the same sentence over and over"

#: where a sentence ends: after . ! ? and a space, or after a full-width 。！？ (Chinese and Japanese put no space)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


class ReplyGuard:
    """A ``TokenCallback`` that raises ``StopReply`` once the streamed reply copies a shown source (a line that is a
    shown source's header, as the prompt gave it, followed by ``PASTE_STOP_CHARS`` characters of a shown source's
    text) or says a sentence for the ``LOOP_REPEATS``-th time.

    Args:
        shown: the sources the prompt showed, in its order (``None`` for a number without a chunk).

    Attributes:
        reason: why it stopped the reply (``COPYING`` or ``LOOPING``); "" while it has not.
        kept: the streamed text before the copy's first header, or before the unfinished sentence after the loop
            with the sentences said again left out (``filler.without_repeated_sentences``; a long report's section
            has no later step that would); a delta may run past the point: the reasoning filter passes a reply's
            first 256 characters at once.
    """

    def __init__(self, shown: Sequence[Chunk | None]) -> None:
        self.shown = list(shown)
        self.text = ""
        self.reason = ""
        self._texts: list[str] | None = None  # the shown chunks' texts, folded once a header is seen
        self._settled = 0  # lines of ``text`` before this one are complete and looked at
        self._header_at: int | None = None  # index of the last complete non-blank line if a shown header
        self.kept = ""

    def __call__(self, delta: str) -> None:
        if self.reason:  # stopped already (a provider that streams on): stop again
            raise StopReply(self.reason)
        self.text += delta
        if self._copying():
            self.reason = COPYING
        elif self._looping():
            self.reason = LOOPING
        if self.reason:
            raise StopReply(self.reason)

    def _copying(self) -> bool:
        """A line under a shown source's header (blank lines between aside) is ``PASTE_STOP_CHARS`` characters or
        more of a shown source's text. Every line the last delta touched is looked at: a delta may hold several (the
        reasoning filter holds a reply's first 256 characters back)."""
        lines = self.text.split("\n")
        for at in range(self._settled, len(lines)):
            line = lines[at]
            if line.strip():
                long_enough = len(" ".join(line.split())) >= PASTE_STOP_CHARS
                if self._header_at is not None and long_enough and self._pasted(line):
                    self.kept = "\n".join(lines[:self._header_at]).rstrip()
                    return True
                if at < len(lines) - 1:  # a complete line: what it is holds for the next one
                    self._header_at = at if shown_header(line, self.shown) else None
            if at < len(lines) - 1:
                self._settled = at + 1
        return False

    def _pasted(self, line: str) -> bool:
        if self._texts is None:
            self._texts = [folded(chunk.text) for chunk in self.shown if chunk is not None]
        return pasted_from(line, self._texts)

    def _looping(self) -> bool:
        """A sentence said ``LOOP_REPEATS`` times, citations, case and spacing aside; lines in code fences and
        tables are not sentences (a config example may repeat a line on purpose)."""
        counts: Counter[str] = Counter()
        fenced = False
        for line in self.text.split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                continue
            if fenced or line.lstrip().startswith("|"):
                continue
            bodies = (folded(strip_citations(part)) for part in _SENTENCE.split(line))
            counts.update(body for body in bodies if len(body) >= REPEAT_MIN_CHARS)
        # the last sentence may still be growing: it counts once a space or line break follows it
        last = _SENTENCE.split(self.text.split("\n")[-1])[-1]
        tail = folded(strip_citations(last))
        growing = bool(tail) and not self.text[-1:].isspace()
        if growing:
            counts[tail] -= 1
        if not counts or max(counts.values()) < LOOP_REPEATS:
            return False
        self.kept = without_repeated_sentences((self.text[:len(self.text) - len(last)] if growing
                                                else self.text).rstrip())
        return True


def loops_only(_shown: Sequence[object]) -> ReplyGuard:
    """A ``ReplyGuard`` that stops a loop and never a copy (it is shown no source), for ``write_fitted``'s ``guard``."""
    return ReplyGuard([])
