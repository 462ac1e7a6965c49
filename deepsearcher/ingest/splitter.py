"""Token-sized chunking with langchain-text-splitters' recursive splitter.

Chunks are measured in the embedder's own tokens (its Hugging Face tokenizer is the splitter's length function), so
the default size stays below the model's max sequence length and no chunk is silently truncated by the embedder. tiktoken is never used: its encodings
are downloaded at first use and fail offline.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Iterable, Iterator, Sequence

from langchain_text_splitters import RecursiveCharacterTextSplitter

from deepsearcher.errors import ConfigError
from deepsearcher.ingest.ids import chunk_id
from deepsearcher.ingest.scripts import unrepresented_notice
from deepsearcher.ingest.sections import HEADINGS, LINE_ROWS, ROWS, SECTION, row_ranges, section_paths
from deepsearcher.types import Chunk, Document
from deepsearcher.unknown_words import maps_to_unknown

log = logging.getLogger(__name__)

#: Milvus VARCHAR fields hold at most 65,535 bytes; the text field is declared with this length.
MAX_TEXT_BYTES = 65_535
#: [CLS] and [SEP] (or the model's equivalents) are added by the embedder on top of the chunk's tokens.
SPECIAL_TOKENS = 2
#: Characters per token assumed when the embedder exposes no tokenizer (remote embedding APIs).
CHARS_PER_TOKEN = 4
#: Texts whose token count is cached per splitter (mostly single words of long texts).
COUNT_CACHE = 1 << 16


class Splitter:
    """Split Documents into Chunks of at most ``chunk_size`` tokens.

    Args:
        chunk_size: tokens per chunk (excluding special tokens).
        chunk_overlap: tokens shared by consecutive chunks; must be < chunk_size.
        tokenizer: a Hugging Face tokenizer or a Rust ``tokenizers.Tokenizer``, or None to measure length as
            characters / 4.
        model_max_tokens: the embedder's max sequence length; chunk_size + 2 must not exceed it.

    Raises:
        ConfigError: overlap >= size, or size too large for the embedding model.
    """

    def __init__(self, chunk_size: int, chunk_overlap: int, tokenizer: Any | None = None,
                 model_max_tokens: int | None = None) -> None:
        if chunk_overlap >= chunk_size:
            raise ConfigError(f"ingest.chunk_overlap_tokens ({chunk_overlap}) must be smaller than "
                              f"ingest.chunk_size_tokens ({chunk_size})")
        if model_max_tokens is not None and chunk_size + SPECIAL_TOKENS > model_max_tokens:
            raise ConfigError(
                f"ingest.chunk_size_tokens ({chunk_size}) + {SPECIAL_TOKENS} special tokens exceeds the embedding "
                f"model's max sequence length ({model_max_tokens}); chunks would be truncated",
                hint=f"set ingest.chunk_size_tokens to at most {model_max_tokens - SPECIAL_TOKENS}")
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.length: Callable[[str], int]
        if tokenizer is not None:
            self.length = TokenCounter(tokenizer)
            self._splitter = RecursiveCharacterTextSplitter(
                chunk_size=chunk_size, chunk_overlap=chunk_overlap, length_function=self.length)
        else:
            self.length = len
            self._splitter = RecursiveCharacterTextSplitter(
                chunk_size=chunk_size * CHARS_PER_TOKEN, chunk_overlap=chunk_overlap * CHARS_PER_TOKEN)

    def split_text(self, text: str) -> list[str]:
        """Split one text; every piece is non-blank and at most MAX_TEXT_BYTES in UTF-8."""
        limit = self.chunk_size if self.length is not len else self.chunk_size * CHARS_PER_TOKEN
        if len(text) <= limit * 8 and self.length(text) <= limit:
            # the common case (a short passage): one length call instead of the splitter's one per word
            pieces = [text.strip()]
        else:
            pieces = [p.strip() for p in self._splitter.split_text(text)]
        out: list[str] = []
        for piece in pieces:
            if piece:
                out.extend(_cap_bytes(piece, MAX_TEXT_BYTES))
        return out

    def unrepresented(self, chunks: Sequence[Chunk]) -> str:
        """The load notice for chunks whose text the embedder's tokenizer cannot represent (``ingest.scripts``);
        "" when it can, or when the splitter has no tokenizer to ask."""
        counter = self.length
        if not isinstance(counter, TokenCounter):
            return ""
        return unrepresented_notice([c.text for c in chunks], counter.is_unknown_cached)

    def split(self, documents: Iterable[Document], doc_hash: str) -> list[Chunk]:
        """Split Documents of one source into Chunks with content-derived ids (duplicates within it dropped)."""
        chunks: list[Chunk] = []
        seen: set[str] = set()
        for doc in documents:
            pieces = self.split_text(doc.text)
            for index, (piece, metadata) in enumerate(zip(pieces, _chunk_metadata(doc, pieces))):
                cid = chunk_id(doc.source, doc.title, doc.page, piece)
                if cid in seen:
                    continue
                seen.add(cid)
                chunks.append(Chunk(id=cid, text=piece, source=doc.source, title=doc.title, page=doc.page,
                                    chunk_index=index, doc_hash=doc_hash, metadata=metadata))
        return chunks


    def split_stream(self, pieces: Iterable[Document], doc_hash: str) -> Iterator[Chunk]:
        """Chunks of one long text that arrives in pieces (``formats.text.stream_text``), one piece in memory at a
        time: ``chunk_index`` runs on across the pieces, duplicates within the source are dropped as in ``split``
        (remembered by a 64-bit key each, not the whole id)."""
        seen: set[int] = set()
        index = 0
        for doc in pieces:
            for piece in self.split_text(doc.text):
                cid = chunk_id(doc.source, doc.title, doc.page, piece)
                key = int(cid[:16], 16)
                if key not in seen:
                    seen.add(key)
                    yield Chunk(id=cid, text=piece, source=doc.source, title=doc.title, page=doc.page,
                                chunk_index=index, doc_hash=doc_hash, metadata=doc.metadata)
                index += 1


def _chunk_metadata(doc: Document, pieces: list[str]) -> list[dict[str, Any]]:
    """Each piece's metadata: the Document's, with its heading list replaced by the piece's heading path, or its
    line-to-row list by the piece's row range (``ingest.sections``), where the loader gave them."""
    if HEADINGS in doc.metadata:
        rest = {k: v for k, v in doc.metadata.items() if k != HEADINGS}
        paths = section_paths(doc.text, doc.metadata[HEADINGS], pieces)
        return [{**rest, SECTION: path} if path else rest for path in paths]
    if LINE_ROWS in doc.metadata:
        rest = {k: v for k, v in doc.metadata.items() if k != LINE_ROWS}
        ranges = row_ranges(doc.text, doc.metadata[LINE_ROWS], pieces)
        return [{**rest, ROWS: rows} if rows else rest for rows in ranges]
    return [doc.metadata] * len(pieces)


class TokenCounter:
    """Counts a tokenizer's tokens in a text (no special tokens), with a cache; picklable (the Ray engine sends the
    splitter to its extraction tasks), the cache starting empty after unpickling.

    ``tokenizer`` is a Hugging Face tokenizer or a Rust ``tokenizers.Tokenizer``. Uses the Rust ``tokenizers``
    backend of a fast Hugging Face tokenizer directly when there is one: the splitter measures every word of a long
    text, and the Python ``tokenize`` wrapper made splitting 13 % of load time. Counts are cached (``COUNT_CACHE``
    texts): langchain's merge step measures each word of a long text at least twice, and words repeat; on the 2Wiki
    corpus the cache cut the splitter's 411k tokenizer calls to ~30k.
    """

    def __init__(self, tokenizer: Any) -> None:
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None and hasattr(tokenizer, "to_str") and hasattr(tokenizer, "encode_batch"):
            backend = tokenizer  # already a Rust ``tokenizers.Tokenizer`` (the ONNX backend's)
        if backend is not None:
            # a private copy: the shared one carries padding/truncation settings (pad to 128 for MiniLM) that would
            # make every count wrong, and the embedder relies on them
            from tokenizers import Tokenizer

            counter = Tokenizer.from_str(backend.to_str())
            counter.no_padding()
            counter.no_truncation()
            self._rust: Any = counter
            self._python: Any = None
        else:
            self._rust, self._python = None, tokenizer
        self._cached = functools.lru_cache(maxsize=COUNT_CACHE)(self._count)
        self.is_unknown_cached = functools.lru_cache(maxsize=COUNT_CACHE)(self.is_unknown)

    def _count(self, text: str) -> int:
        if self._rust is not None:
            return len(self._rust.encode(text, add_special_tokens=False).ids)
        return len(self._python.tokenize(text))

    def __call__(self, text: str) -> int:
        return self._cached(text)

    def is_unknown(self, word: str) -> bool:
        """True when the tokenizer turns ``word`` (or part of it) into its unknown token (``unknown_words``)."""
        return maps_to_unknown(self._rust if self._rust is not None else self._python, word)

    def __getstate__(self) -> dict[str, Any]:
        return {"rust": self._rust, "python": self._python}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._rust, self._python = state["rust"], state["python"]
        self._cached = functools.lru_cache(maxsize=COUNT_CACHE)(self._count)
        self.is_unknown_cached = functools.lru_cache(maxsize=COUNT_CACHE)(self.is_unknown)


def _cap_bytes(text: str, limit: int) -> list[str]:
    """Cut text into pieces of at most ``limit`` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return [text]
    pieces = []
    while data:
        cut = min(limit, len(data))
        while cut < len(data) and (data[cut] & 0xC0) == 0x80:  # don't split a multi-byte character
            cut -= 1
        pieces.append(data[:cut].decode("utf-8"))
        data = data[cut:]
    return pieces
