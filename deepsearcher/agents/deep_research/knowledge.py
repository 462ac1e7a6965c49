"""The knowledge of a research run: items with stable ids and citation numbers, shared by the sections of a long report.

After the knowledge items of Jina's DeepResearch (``KnowledgeItem``: question, answer, references, updated), with ids
that stay fixed for the whole run so the model can cite them:

==========  ===============================  ==========================================================
kind        id                               what it is
==========  ===============================  ==========================================================
chunk       ``collection/chunk id``          a chunk retrieved from a collection (or opened around one)
web         the result's URL                 a web search result: title, URL and snippet
page        ``URL#chunk id``                 a passage of a web page read through the crawler
answer      ``answer:<n>``                   an accepted answer to a gap question, resting on other items
==========  ===============================  ==========================================================

Each item also has a ``number`` (1, 2, … in order of arrival) that prompts show as ``[n]`` and the model cites; it
never changes, so a citation written at step 2 or in section 1 still means the same item later. Citations of
``answer`` items are expanded to the items they rest on before a report is written (``expand_answers``), so every
citation in a report resolves to a chunk (of a collection, or of a web page whose ``source`` is its URL).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator, Literal, Sequence

import numpy as np

from deepsearcher.agents.citations import Marker, find_citations, location, replace_citations
from deepsearcher.types import Chunk, Hit, Source, WebResult
from deepsearcher.vectordb.fusion import hit_key

Kind = Literal["chunk", "web", "page", "answer"]
WEB = "web"
"""The collection name Sources of web results and pages carry."""


@dataclass(frozen=True)
class KnowledgeItem:
    """One piece of knowledge.

    Attributes:
        id: stable identity (see the module table).
        number: 1-based citation number, in order of arrival; never reused.
        kind: "chunk", "web", "page" or "answer".
        question: the (gap) question it was found for.
        text: its text (a chunk, a snippet, a page passage or an answer).
        references: ids of the items an ``answer`` rests on (empty for the other kinds).
        time: when it was added, ISO 8601 UTC.
        chunk: the chunk a Source shows (web results and page passages carry the URL as ``source``); None for
            answers.
        collection: the chunk's collection; "web" for web results and pages; "" for answers.
    """

    id: str
    number: int
    kind: Kind
    question: str
    text: str
    references: tuple[str, ...] = ()
    time: str = ""
    chunk: Chunk | None = None
    collection: str = ""

    @property
    def where(self) -> str:
        """What a prompt shows as the item's origin: file (page) or URL, or "answer to: …"."""
        return location(self.chunk) if self.chunk is not None else f"answer to: {self.question}"

    @property
    def url(self) -> str | None:
        """The page URL of a web result or passage, else None."""
        return self.chunk.source if self.kind in ("web", "page") and self.chunk is not None else None


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def web_chunk(result: WebResult) -> Chunk:
    """A web result as the chunk its Source shows: the snippet as text, the URL as source."""
    cid = hashlib.sha256(result.url.encode("utf-8")).hexdigest()[:32]
    meta = {"provider": result.provider, "rank": result.rank, "published": result.published, "kind": "web_result"}
    return Chunk(id=cid, text=result.snippet or result.title, source=result.url, title=result.title, page=None,
                 chunk_index=0, doc_hash="", metadata=meta)


@dataclass
class KnowledgeStore:
    """Every item gathered in one query run (all sections of a long report), plus what was searched and opened.

    Attributes:
        queries: every search expression run, in order (dedup looks at all of them).
        opened: ids of items already read in full (their neighbours fetched, or their page read).
    """

    queries: list[str] = field(default_factory=list)
    opened: set[str] = field(default_factory=set)
    _items: dict[str, KnowledgeItem] = field(default_factory=dict)
    _by_number: list[KnowledgeItem] = field(default_factory=list)
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._by_number)

    def __iter__(self) -> Iterator[KnowledgeItem]:
        return iter(list(self._by_number))

    def get(self, item_id: str) -> KnowledgeItem | None:
        return self._items.get(item_id)

    def by_number(self, number: int) -> KnowledgeItem | None:
        """The item cited as ``[number]``, or None for a number no item has."""
        return self._by_number[number - 1] if 1 <= number <= len(self._by_number) else None

    def add(self, item_id: str, kind: Kind, question: str, text: str, *, chunk: Chunk | None = None,
            collection: str = "", references: Sequence[str] = ()) -> tuple[KnowledgeItem, bool]:
        """Add an item unless one with ``item_id`` exists.

        Returns:
            ``(item, added)``: the existing item and False when the id is known (its number is kept).
        """
        known = self._items.get(item_id)
        if known is not None:
            return known, False
        item = KnowledgeItem(item_id, len(self._by_number) + 1, kind, question, text.strip(), tuple(references),
                             _now(), chunk, collection)
        self._items[item_id] = item
        self._by_number.append(item)
        return item, True

    def add_hit(self, hit: Hit, question: str) -> tuple[KnowledgeItem, bool]:
        """A retrieved chunk (id ``collection/chunk id``: ``vectordb.fusion.hit_key``)."""
        return self.add(hit_key(hit), "chunk", question, hit.chunk.text, chunk=hit.chunk,
                        collection=hit.collection)

    def add_web(self, result: WebResult, question: str) -> tuple[KnowledgeItem, bool]:
        """A web search result (id: its normalised URL)."""
        chunk = web_chunk(result)
        return self.add(result.url, "web", question, chunk.text, chunk=chunk, collection=WEB)

    def add_answer(self, question: str, text: str, references: Sequence[str]) -> KnowledgeItem:
        """An accepted answer to a gap question, resting on the items ``references``."""
        item, _ = self.add(f"answer:{len(self._by_number) + 1}", "answer", question, text, references=references)
        return item

    def unread(self, *, chunks: bool) -> list[KnowledgeItem]:
        """Items ``read`` may still open: web results whose page was not read, and (when ``chunks``: the store can
        fetch neighbours) chunks not opened yet."""
        kinds = ("web", "chunk") if chunks else ("web",)
        return [i for i in self._by_number if i.kind in kinds and i.id not in self.opened]

    def ranked(self, question_vector: np.ndarray, embed: Callable[[str], np.ndarray], limit: int,
               *, kinds: Sequence[str] | None = None) -> tuple[list[KnowledgeItem], list[float]]:
        """The ``limit`` items most similar to the question (cosine of embeddings), in number order, each with its
        priority for fitting a prompt (minus the cosine: lower = kept first, ``Window.fit``).

        Item embeddings are computed once per run.
        """
        pool = [i for i in self._by_number if kinds is None or i.kind in kinds]
        if limit <= 0 or not pool:
            return [], []
        q = np.asarray(question_vector, dtype=np.float32).reshape(-1)
        scores = [float(np.dot(q, self._vector(item, embed))) for item in pool]
        best = sorted(sorted(range(len(pool)), key=lambda i: (-scores[i], pool[i].number))[:limit])
        return [pool[i] for i in best], [-scores[i] for i in best]

    def relevant(self, question_vector: np.ndarray, embed: Callable[[str], np.ndarray], limit: int,
                 *, kinds: Sequence[str] | None = None) -> list[KnowledgeItem]:
        """The ``limit`` items most similar to the question, in number order (``ranked`` without priorities)."""
        return self.ranked(question_vector, embed, limit, kinds=kinds)[0]

    def _vector(self, item: KnowledgeItem, embed: Callable[[str], np.ndarray]) -> np.ndarray:
        if item.id not in self._vectors:
            self._vectors[item.id] = np.asarray(embed(f"{item.question}\n{item.text}"[:2000]),
                                                dtype=np.float32).reshape(-1)
        return self._vectors[item.id]

    # --- citations -------------------------------------------------------------------------------------------------
    def cited(self, text: str) -> list[KnowledgeItem]:
        """The known items ``text`` cites as ``[n]`` (``citations.find_citations``), in order of first citation."""
        out: list[KnowledgeItem] = []
        for marker in find_citations(text):
            for n in marker.numbers:
                item = self.by_number(n)
                if item is not None and item not in out:
                    out.append(item)
        return out

    def grounding(self, item: KnowledgeItem, _depth: int = 0) -> list[KnowledgeItem]:
        """The citable items behind ``item``: itself, or for an answer the items it rests on (recursively)."""
        if item.kind != "answer":
            return [item]
        out: list[KnowledgeItem] = []
        for ref in item.references:
            inner = self._items.get(ref)
            if inner is not None and _depth < 5:
                out += [x for x in self.grounding(inner, _depth + 1) if x not in out]
        return out

    def expand_answers(self, text: str) -> str:
        """Rewrite citations of ``answer`` items as citations of the items they rest on (an answer resting on none
        keeps an unknown number, which verification then removes)."""

        def replace(marker: Marker) -> str:
            numbers: list[int] = []
            for n in marker.numbers:
                item = self.by_number(n)
                grounded = self.grounding(item) if item is not None and item.kind == "answer" else None
                for m in ([g.number for g in grounded] if grounded is not None else [n]) or [0]:
                    if m not in numbers:
                        numbers.append(m)
            return "".join(f"[{m}]" for m in numbers)

        return replace_citations(text, replace)

    def sources(self, numbers: Sequence[int]) -> list[Source]:
        """Sources for the renumbered citations: ``numbers[i]`` (an item number) is cited as ``[i + 1]``."""
        out: list[Source] = []
        for i, n in enumerate(numbers, start=1):
            item = self.by_number(n)
            if item is not None and item.chunk is not None:
                out.append(Source(i, item.chunk, item.collection))
        return out
