"""A check passage in the relevance prompt: is the model reading the chunks it judges?

The relevance step (``deep_search.filter_relevant``) asks the model which of the numbered chunks help. A model too
small for the task answers with a fixed pattern whatever the chunks say — measured with Qwen2.5-Coder-0.5B on
2WikiMultihopQA (docs/benchmarks.md, "The relevance step with a small model"): ``[1, 3]`` (the prompt's example) for
every question, ``[1, 2, 4]`` once the example had no numbers, ``{"2": true}`` alone when asked chunk by chunk, and
"helpful" for every chunk when asked one chunk per call. Its choice then drops gold passages at random, and the
research is worse than one plain search.

So every relevance prompt shows one **check passage** among the chunks: fluent text on a subject unrelated to the
question (the one of ``PASSAGES`` that shares the fewest words with the question and the search query), numbered 1
or 2, where a pattern starts. The prompt's example reply has no numbers: Qwen2.5-Coder-1.5B (the bundled model)
copied the earlier ``[1, 3]`` and so failed the check on 16 of 20 MuSiQue questions, every chunk kept; shown no
numbers, it judged, failing on 2 of 20, and deep_search's cover-EM rose from 0.35 to 0.45 (naive: 0.40) at half the
seconds (docs/benchmarks.md, "The bundled model side by side"). A call whose reply marks the check passage as helpful
was not judged: it keeps every chunk it was asked about. The model is taken as not judging at all once it has done
so ``query.relevance_check_strikes`` times in the run (default 2): every later relevance call keeps every chunk
without asking, and deep_search accepts the chunks its earlier replies left out too (``RelevanceCheck.failed``; a
``query.fallback`` event says so at each of the first ``strikes`` catches). Why two: a model answering by a pattern
is caught on every prompt (the 0.5B model on its first two: the same result as stopping at the first), while the
1.5B model's catches are slips — recorded on HotpotQA questions, it picked the check with ``[1]``, ``[1, 2]`` or
``[2, 3, 4]`` on one call and named a single chunk, never the check, on the run's other calls, which stopping at the
first catch threw away (docs/benchmarks.md, "The check passage's catches counted per reply": the same answers from
about half the chunks on the caught questions). A model that reads never picks it, and the check costs it about 50
prompt tokens. ``query.relevance_check: false`` turns it off.

ChainOfRAG's intermediate step (``chain_of_rag.answer_step``) picks chunks by number too — the chunks its answer
relies on, which with the question's best-ranked chunk are all its report is written from — so its prompt carries
the same check, numbered as in its own example (``SUPPORTING_EXAMPLE_NUMBERS``); the failure is shared with the
relevance step (one per run).
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass, field

from typing import Callable, Sequence

from deepsearcher.agents.rewrites import words
from deepsearcher.events import Event, QueryFallback
from deepsearcher.types import Chunk

#: (title, source, text): everyday subjects no research question is likely to need
PASSAGES = (
    ("Sourdough starter", "kitchen/sourdough.md",
     "Feed the starter with equal weights of flour and water every twelve hours, and keep it at room temperature "
     "until it has doubled in size and smells pleasantly sour."),
    ("Tide pools", "nature/tide-pools.md",
     "Sea anemones in tide pools close their tentacles at low tide to keep moisture in, and open them again when "
     "the water returns."),
    ("Bicycle chain care", "workshop/bicycle-chain.md",
     "After a wet ride, wipe the chain with a dry rag, put one drop of oil on each roller and wipe off the excess "
     "so that dust does not stick to it."),
)


def check_passage(question: str, query: str) -> Chunk:
    """The passage of ``PASSAGES`` sharing the fewest words (``rewrites.words``) with the question and the query."""
    asked = words(question) | words(query)
    title, source, text = min(PASSAGES, key=lambda p: len(asked & (words(p[0]) | words(p[2]))))
    return Chunk(id="relevance-check", text=text, source=source, title=title, page=None, chunk_index=0,
                 doc_hash="")


#: where the relevance prompt's check passage goes: its example reply has no numbers (``prompts.RELEVANCE``), as
#: Qwen2.5-Coder-1.5B copied ``[1, 3]`` from the earlier one on 2 of 3 MuSiQue questions and, shown none, named the
#: chunks that helped; a model answering by a pattern starts it at the first numbers (the 0.5B model: ``[1, 2, 4]``)
EXAMPLE_NUMBERS = (1, 2)
#: the chunk numbers of ChainOfRAG's intermediate-answer example (``prompts.INTERMEDIATE``: ``"supporting": [1, 2]``)
SUPPORTING_EXAMPLE_NUMBERS = (1, 2)


def check_position(query: str, count: int, example: tuple[int, ...] = EXAMPLE_NUMBERS) -> int:
    """Where the check passage goes among ``count`` chunks (1-based): one of the numbers of the prompt's example
    reply (``example``), chosen by the query — a model that copies the example names the check passage on its first
    prompt (the measured 0.5B model did exactly that); 1 when there are too few chunks for the other."""
    places = [n for n in example if n <= count + 1]
    return places[zlib.crc32(query.encode("utf-8")) % len(places)]


def with_check(chunks: list[Chunk], passage: Chunk, position: int) -> list[Chunk]:
    """``chunks`` with ``passage`` inserted so that it is number ``position``."""
    return [*chunks[:position - 1], passage, *chunks[position - 1:]]


def chunk_numbers_without(numbers: set[int], position: int) -> set[int]:
    """The reply's numbers as numbers of the chunks without the check passage (the passage's own number dropped)."""
    return {n - 1 if n > position else n for n in numbers if n != position}


def drawn_from_check(answer: str, passage: Chunk, shown: Sequence[Chunk], question: str) -> bool:
    """``answer`` uses words only the check passage has (none of ``shown``'s chunks, not the question): a model that
    answered from the unrelated passage (measured: Qwen2.5-Coder-0.5B's intermediate answer "Sourdough starter"
    for a MuSiQue question became the report's short answer)."""
    own = words(answer) & (words(passage.title or "") | words(passage.text))
    elsewhere = words(question).union(*(words(f"{c.title or ''} {c.text}") for c in shown))
    return bool(own - elsewhere)


@dataclass
class RelevanceCheck:
    """How often the model picked the check passage in this run (shared by the run's threads and long-report
    sections); ``failed`` once it has done so ``strikes`` times (``query.relevance_check_strikes``)."""

    strikes: int = 2
    catches: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def failed(self) -> bool:
        """The model is taken as not judging the chunks: later calls keep every chunk without asking."""
        return self.catches >= self.strikes

    def fail(self) -> int:
        """Record one catch; the number of catches so far, this one included."""
        with self._lock:
            self.catches += 1
            return self.catches


def numbers_past_check(check: RelevanceCheck, emit: Callable[[Event], None], chosen: set[int], position: int,
                       passage: Chunk, *, step: str, picked: str) -> set[int] | None:
    """The reply's ``chosen`` numbers as numbers of the chunks without the check passage, or None when they name the
    check passage at ``position``: that call keeps every chunk, one catch is recorded, and each of the first
    ``check.strikes`` catches is said in a ``query.fallback`` event of ``step`` ("the model {picked}", where
    ``{check}`` names the passage); the last of them switches the run's relevance judgements off. The text of each
    does not depend on the others: the events of concurrent calls are shown in the order of their sub-queries, not of
    their catches."""
    if position not in chosen:
        return chunk_numbers_without(chosen, position)
    catches = check.fail()
    if catches <= check.strikes:
        named = f"the check passage [{position}] (“{passage.title}”, unrelated to the question)"
        last = catches == check.strikes
        emit(QueryFallback(step=step, error="the model " + picked.format(check=named),
                           fallback="keeping every retrieved chunk for the rest of this run" if last else
                           f"keeping every chunk of this call ({check.strikes} such replies in a run keep every "
                           f"retrieved chunk from then on)"))
    return None


def names_none_shown(emit: Callable[[Event], None], chosen: set[int], shown: int, *, step: str) -> bool:
    """The reply names chunks (``chosen``) and none of them is one the prompt showed (numbered 1 to ``shown``, the
    check passage included): "[9]" for three chunks, or "[0]" counted from zero, is no judgement of them, so the call
    keeps every chunk, said in a ``query.fallback`` event of ``step``. Numbers out of range beside shown ones are
    ignored; an empty reply is the model's "none helps"."""
    if not chosen or chosen & set(range(1, shown + 1)):
        return False
    named = ", ".join(str(n) for n in sorted(chosen)[:5])
    emit(QueryFallback(step=step, error=f"the reply named only chunks the prompt did not show ([{named}]; it showed "
                                        f"[1] to [{shown}])", fallback="keeping every retrieved chunk of this call"))
    return True
