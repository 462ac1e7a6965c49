"""The load pipeline: SourceItems -> Documents -> normalised Documents -> Chunks -> embeddings -> upsert, idempotent
and incremental.

Every loader's output (built-in, ``unstructured``, a plugin's, a crawled page's) passes the one normalisation stage
(``deepsearcher.ingest.normalize.normalize_stage``) here, between extraction and splitting.

Each source (a file or a fetched URL) has a version hash. A source whose every chunk at that version is already stored
is skipped without parsing (an unchanged re-load writes nothing). A changed source upserts its new chunks, then deletes
the chunks of its old version. Chunk ids are content hashes, so an interrupted load that is run again completes with
no duplicates. Chunks are embedded in large batches and upserted in bulk.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Iterable

from deepsearcher.errors import SkipSource
from deepsearcher.events import EventCallback, LoadBatch, LoadSource, LoadStart, ignore_event
from deepsearcher.ingest.normalize import normalize_stage
from deepsearcher.ingest.sources import SourceItem
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.protocols import Embedder, VectorStore
from deepsearcher.types import Chunk, CollectionDescription, Extraction, FileResult, LoadSummary
from deepsearcher.vectordb.names import validate_collection_name

log = logging.getLogger(__name__)


@dataclass
class _Run:
    """The state of one load: what is buffered, what was written, and whether the collection exists yet."""

    collection: str
    description: str
    exists: bool
    drop_first: bool
    start: float = field(default_factory=time.perf_counter)
    embed_seconds: float = 0.0
    #: this load created the collection (on its first write)
    created: bool = False
    written: int = 0
    #: chunks split so far (written or waiting)
    queued: int = 0
    deleted: int = 0
    results: list[FileResult] = field(default_factory=list)
    pending: list[Chunk] = field(default_factory=list)
    #: (source, version) whose chunks are all in ``pending`` or written, not yet finished
    open_sources: list[tuple[str, str]] = field(default_factory=list)
    doc_chunks: dict[str, int] = field(default_factory=dict)


class LoadPipeline:
    """Load sources into one collection.

    Args:
        store: the vector store.
        embedder: the embedding provider.
        splitter: the token-sized splitter.
        batch_size: chunks embedded and upserted together.
        on_event: receives ``LoadStart``, ``LoadSource`` and ``LoadBatch`` events.
    """

    def __init__(self, store: VectorStore, embedder: Embedder, splitter: Splitter, batch_size: int,
                 on_event: EventCallback = ignore_event) -> None:
        self.store = store
        self.embedder = embedder
        self.splitter = splitter
        self.batch_size = batch_size
        self.on_event = on_event

    def run(self, items: Iterable[SourceItem], collection: str, *, description: str, force_new: bool = False,
            total: int | None = None) -> LoadSummary:
        """Load every item; bad sources are skipped with a reason, never abort the batch.

        Raises:
            CollectionError: invalid name, or the collection was built with another embedding model (checked before
                any write).
        """
        run = self._prepare(collection, description, force_new)
        self.on_event(LoadStart(collection=collection, total=total))
        for item in items:
            result = self._process(run, item)
            run.results.append(result)
            self.on_event(LoadSource(source=result.source, status=result.status,  # type: ignore[arg-type]
                                     reason=result.reason, chunks=result.chunks,
                                     skipped_records=result.skipped_records))
        self._flush(run, final=True)
        if run.exists:
            self.store.seal(collection)  # unflushed Milvus Lite data is re-scanned by every search (MilvusStore.seal)
        return LoadSummary(collection=collection, files=run.results, chunks_written=run.written,
                           chunks_deleted=run.deleted, seconds=time.perf_counter() - run.start,
                           embed_seconds=run.embed_seconds, created=run.created,
                           description=CollectionDescription(collection, description, "given") if run.created
                           else None)

    # --- steps ---------------------------------------------------------------------------------------------------
    def _prepare(self, collection: str, description: str, force_new: bool) -> _Run:
        """Check the name and, for an existing collection, its embedding model; decide whether to drop it first.

        ``--force-new-collection`` drops the old collection only when the first new batch is written, so a load that
        yields nothing (all skipped, an unreachable URL) leaves the old collection as it was.
        """
        validate_collection_name(collection)
        exists = self.store.has_collection(collection)
        if exists and not force_new:
            self.store.check_embedding(collection, self.embedder.model_name, self.embedder.dimension)
        return _Run(collection, description, exists=exists and not force_new, drop_first=exists and force_new)

    def _process(self, run: _Run, item: SourceItem) -> FileResult:
        """One source: unchanged, skipped with a reason, or split and queued for writing."""
        if run.exists and self.store.is_complete(run.collection, item.source, item.version):
            return FileResult(item.source, "unchanged")
        try:
            documents = item.load()
            chunks = self.splitter.split(normalize_stage(documents, item.source), item.version)
            if not chunks:
                raise SkipSource("no text extracted")
        except SkipSource as exc:
            return FileResult(item.source, "skipped", str(exc))
        except (OSError, ValueError, UnicodeError, RuntimeError, KeyError) as exc:
            log.debug("loader failed on %s", item.source, exc_info=True)
            return FileResult(item.source, "skipped", f"{type(exc).__name__}: {exc}")
        run.doc_chunks[item.source] = len(chunks)
        run.pending.extend(chunks)
        run.queued += len(chunks)
        run.open_sources.append((item.source, item.version))
        self._flush(run)
        skipped_records = documents.skipped_records if isinstance(documents, Extraction) else {}
        return FileResult(item.source, "loaded", chunks=len(chunks), skipped_records=skipped_records)

    def _flush(self, run: _Run, final: bool = False) -> None:
        """Write full batches (every pending chunk when ``final``), then finish the sources no chunk waits for."""
        while run.pending and (final or len(run.pending) >= self.batch_size):
            self._write(run, run.pending[:self.batch_size])
            del run.pending[:self.batch_size]
        self._finish_sources(run)

    def _write(self, run: _Run, batch: list[Chunk]) -> None:
        """Embed one batch and upsert it, creating (or re-creating) the collection on the first write."""
        t0 = time.perf_counter()
        vectors = self.embedder.embed_documents([c.text for c in batch])
        run.embed_seconds += time.perf_counter() - t0
        if run.drop_first:
            self.store.drop_collection(run.collection)
            run.drop_first = False
        if not run.exists:
            self.store.create_collection(run.collection, description=run.description,
                                         model_name=self.embedder.model_name, dim=self.embedder.dimension)
            run.exists = run.created = True
        run.written += self.store.upsert(run.collection, batch, vectors, run.doc_chunks)
        self.on_event(LoadBatch(chunks=len(batch), written=run.written, queued=run.queued))

    def _finish_sources(self, run: _Run) -> None:
        """A source is complete once none of its chunks wait: only then drop the chunks of its old version."""
        waiting = {c.source for c in run.pending}
        for source, version in [sv for sv in run.open_sources if sv[0] not in waiting]:
            run.deleted += self.store.delete_stale(run.collection, source, version)
            run.open_sources.remove((source, version))
            run.doc_chunks.pop(source, None)
