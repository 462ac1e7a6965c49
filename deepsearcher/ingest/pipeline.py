"""The load pipeline: SourceItems -> Documents -> normalised Documents -> Chunks -> embeddings -> upsert, idempotent
and incremental.

Every loader's output (built-in, ``unstructured``, a plugin's, a crawled page's) passes the one normalisation stage
(``deepsearcher.ingest.normalize.normalize_stage``) here, between extraction and splitting.

Each source (a file or a fetched URL) has a version hash. A source whose every chunk at that version is already stored
is skipped without parsing (an unchanged re-load writes nothing), and any chunk it still has of another version is
deleted then. A changed source upserts its new chunks, then, as soon as the last of them is written (not at the end of
the load), deletes the chunks of its old version. So a load interrupted at any point leaves each source at its old
version, at its new one, or at both, and the next run ends with exactly the new one. Chunk ids are content hashes,
so an interrupted load that is run again completes with no duplicates. Chunks are embedded in large batches and
upserted in bulk.

One source never aborts a load: anything that goes wrong with one source (it cannot be read, it vanished, its
loader or splitter fails, the store refuses one of its values) makes it a skipped result with the reason. Only
failures of the configuration, a provider (``DeepSearcherError``) or the store as a whole stop the load. A batch the
store refuses is written again source by source after checking the store still answers, so the refusal is pinned on
the sources that cause it.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from deepsearcher.errors import DeepSearcherError, DiskFullError, ProviderError, SkipSource, StoreInUseError
from deepsearcher.events import EventCallback, LoadBatch, LoadSource, LoadStart, ignore_event
from deepsearcher.ingest.dates import stamp_dates
from deepsearcher.ingest.normalize import normalize_stage
from deepsearcher.ingest.pause import after_batch_written
from deepsearcher.ingest.sources import SourceItem
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.protocols import Embedder, VectorStore
from deepsearcher.types import Chunk, CollectionDescription, Document, Extraction, FileResult, LoadSummary
from deepsearcher.vectordb.names import validate_collection_name

log = logging.getLogger(__name__)

#: Test-only: called with the name of each crash point the load passes ("after-upsert": a batch was written;
#: "before-delete-stale": a source's new version is all written, its old one not yet deleted; "before-seal": every
#: batch written). A test sets it to raise there, so an interrupted load is reproduced at an exact point instead of
#: by a timed kill. ``DEEPSEARCHER_TEST_SIGNAL_AT=point[:n]:SIGNAL`` in the environment sends the process that signal
#: at the n-th pass of the point (the CLI tests of Ctrl-C and SIGTERM).
crash_hook: Callable[[str], None] | None = None
_passes: dict[str, int] = {}


def crash_point(name: str) -> None:
    """A named point of the load where a test may interrupt it (``crash_hook``); nothing otherwise."""
    if crash_hook is not None:
        crash_hook(name)
    wanted = os.environ.get("DEEPSEARCHER_TEST_SIGNAL_AT")
    if wanted:
        point, *rest = wanted.split(":")
        if point == name:
            _passes[name] = _passes.get(name, 0) + 1
            nth, sig = (int(rest[0]), rest[1]) if len(rest) == 2 else (1, rest[0] if rest else "INT")
            if _passes[name] == nth:
                os.kill(os.getpid(), getattr(signal, "SIG" + sig.upper()))


@dataclass
class _Run:
    """The state of one load: what is buffered, what was written, and whether the collection exists yet."""

    collection: str
    description: str
    exists: bool
    drop_first: bool
    #: the collection was there before this load (so chunks of an interrupted earlier run may be stored already)
    resumable: bool = False
    #: chunks found stored at their version and not embedded again (``_unstored``)
    kept: int = 0
    #: the description is a stand-in (stored marked as generated)
    placeholder: bool = False
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
    #: source -> why the store refused it (its result becomes "skipped")
    refused: dict[str, str] = field(default_factory=dict)


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
            total: int | None = None, placeholder: bool = False) -> LoadSummary:
        """Load every item; bad sources are skipped with a reason, never abort the batch.

        ``placeholder``: ``description`` is not the user's but a stand-in until one is generated; a collection this
        load creates stores it marked as generated (``DeepSearcher.load`` replaces it, on this run or the next).

        Raises:
            CollectionError: invalid name, or the collection was built with another embedding model (checked before
                any write).
        """
        run = self._prepare(collection, description, force_new)
        run.placeholder = placeholder
        self.on_event(LoadStart(collection=collection, total=total))
        for item in items:
            result = self._process(run, item)
            run.results.append(result)
            self.on_event(LoadSource(source=result.source, status=result.status,  # type: ignore[arg-type]
                                     reason=result.reason, chunks=result.chunks,
                                     skipped_records=result.skipped_records, notice=result.notice))
        self._flush(run, final=True)
        if run.kept:
            log.info("%d chunks stored by an earlier, interrupted run were kept, not embedded again", run.kept)
        crash_point("before-seal")
        if run.exists:
            self.store.seal(collection)  # unflushed Milvus Lite data is re-scanned by every search (MilvusStore.seal)
        files = [FileResult(r.source, "skipped", run.refused[r.source]) if r.source in run.refused else r
                 for r in run.results]
        return LoadSummary(collection=collection, files=files, chunks_written=run.written,
                           chunks_deleted=run.deleted, seconds=time.perf_counter() - run.start,
                           embed_seconds=run.embed_seconds, created=run.created,
                           description=CollectionDescription(collection, description,
                                                             "placeholder" if placeholder else "given")
                           if run.created else None)

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
        return _Run(collection, description, exists=exists and not force_new, drop_first=exists and force_new,
                    resumable=exists and not force_new)

    def _process(self, run: _Run, item: SourceItem) -> FileResult:
        """One source: unchanged, skipped with a reason, or split and queued for writing."""
        pieces = item.stream() if item.stream is not None and not item.error else None
        if pieces is not None:
            return self._process_stream(run, item, pieces)
        prepared = prepare_source(item, self.splitter, (self.store, run.collection) if run.exists else None)
        if isinstance(prepared, FileResult):
            if prepared.status == "unchanged":
                # a load interrupted after the new version was written but before the old one was deleted
                run.deleted += self.store.delete_stale(run.collection, item.source, item.version)
            return prepared
        chunks, skipped_records = prepared.chunks, prepared.skipped_records
        run.doc_chunks[item.source] = len(chunks)
        run.pending.extend(chunks)
        run.queued += len(chunks)
        run.open_sources.append((item.source, item.version))
        self._flush(run)
        return FileResult(item.source, "loaded", chunks=len(chunks), skipped_records=skipped_records,
                          notice=prepared.notice)

    def _process_stream(self, run: _Run, item: SourceItem, pieces: Callable[[], Iterator[Document]]) -> FileResult:
        """A large text file, read in pieces twice: once to count its chunks (stored with each chunk: the
        completeness check), once to embed and write them batch by batch. Memory holds one piece and one batch;
        progress events keep coming during both reads."""
        if run.exists and self.store.is_complete(run.collection, item.source, item.version):
            run.deleted += self.store.delete_stale(run.collection, item.source, item.version)
            return FileResult(item.source, "unchanged")
        try:
            total = 0
            for total, _ in enumerate(self._stream_chunks(item, pieces), 1):
                if total % self.batch_size == 0:  # a heartbeat while counting: nothing written yet
                    self.on_event(LoadBatch(chunks=0, written=run.written, queued=run.queued + total))
            if not total:
                raise SkipSource("no text extracted")
            run.doc_chunks[item.source] = total
            run.queued += total
            for chunk in self._stream_chunks(item, pieces):
                run.pending.append(chunk)
                if len(run.pending) >= self.batch_size:
                    self._flush(run)
        except SkipSource as exc:
            return self._drop(run, item.source, str(exc))
        except DeepSearcherError:
            raise
        except Exception as exc:  # the file changed or vanished between the reads, a decoder failure
            log.debug("streaming %s failed", item.source, exc_info=True)
            return self._drop(run, item.source, failure_reason(exc))
        run.open_sources.append((item.source, item.version))  # only now may its old version go
        self._flush(run)
        return FileResult(item.source, "loaded", chunks=total)

    def _stream_chunks(self, item: SourceItem, pieces: Callable[[], Iterator[Document]]) -> Iterator[Chunk]:
        def normalized() -> Iterator[Document]:
            for doc in pieces():
                doc = doc if doc.source == item.source else replace(doc, source=item.source)
                try:
                    yield from normalize_stage([doc], item.source)
                except SkipSource as exc:
                    if str(exc) != "no text extracted":  # a blank piece is no reason to skip the file
                        raise

        return self.splitter.split_stream(normalized(), item.version)

    def _drop(self, run: _Run, source: str, reason: str) -> FileResult:
        """A streamed source that failed part-way: its waiting chunks are dropped (any written stay incomplete, so
        the next run loads it again)."""
        run.pending = [c for c in run.pending if c.source != source]
        run.doc_chunks.pop(source, None)
        return FileResult(source, "skipped", reason)

    def _flush(self, run: _Run, final: bool = False) -> None:
        """Write full batches (every pending chunk when ``final``), then finish the sources no chunk waits for."""
        while run.pending and (final or len(run.pending) >= self.batch_size):
            batch = run.pending[:self.batch_size]
            del run.pending[:self.batch_size]
            self._write(run, batch)
            self._finish_sources(run)  # a source done in this batch loses its old version now, not after the loop
        self._finish_sources(run)

    def _write(self, run: _Run, batch: list[Chunk]) -> None:
        """Embed one batch and upsert it, creating (or re-creating) the collection on the first write."""
        batch = [c for c in batch if c.source not in run.refused]
        if run.resumable:
            batch = self._unstored(run, batch)
        if not batch:
            return
        t0 = time.perf_counter()
        vectors = self.embedder.embed_documents([c.text for c in batch])
        run.embed_seconds += time.perf_counter() - t0
        if run.drop_first:
            self.store.drop_collection(run.collection)
            run.drop_first = False
        if not run.exists:
            self.store.create_collection(run.collection, description=run.description,
                                         model_name=self.embedder.model_name, dim=self.embedder.dimension)
            if run.placeholder:
                self.store.set_description(run.collection, run.description, generated=True)
            run.exists = run.created = True
        written, refused = write_batch(self.store, run.collection, batch, vectors, run.doc_chunks)
        run.written += written
        for source, reason in refused.items():
            run.refused[source] = reason
            # its old version stays (no stale chunks are deleted); a re-load tries it again
            run.open_sources = [sv for sv in run.open_sources if sv[0] != source]
            run.pending = [c for c in run.pending if c.source != source]
        self.on_event(LoadBatch(chunks=len(batch), written=run.written, queued=run.queued))
        crash_point("after-upsert")

    def _unstored(self, run: _Run, batch: list[Chunk]) -> list[Chunk]:
        """The chunks of ``batch`` not yet stored at their version: a load interrupted inside a large source wrote
        some of its batches, and the re-run embeds only the rest (an 8 MB file stopped half-way embedded all 9,847
        chunks again). Asked only of a collection that existed before this load, of a store that can say
        (``stored_ids``); the ones found count as written for the progress, not as written by this run."""
        stored_ids = getattr(self.store, "stored_ids", None)
        if stored_ids is None:
            return batch
        stored: set[str] = set()
        for version in {c.doc_hash for c in batch}:
            stored |= stored_ids(run.collection, [c.id for c in batch if c.doc_hash == version], version)
        if not stored:
            return batch
        run.kept += len(stored)
        run.queued -= len(stored)
        self.on_event(LoadBatch(chunks=0, written=run.written, queued=run.queued))
        return [c for c in batch if c.id not in stored]

    def _finish_sources(self, run: _Run) -> None:
        """A source is complete once none of its chunks wait: only then drop the chunks of its old version."""
        waiting = {c.source for c in run.pending}
        for source, version in [sv for sv in run.open_sources if sv[0] not in waiting]:
            crash_point("before-delete-stale")
            run.deleted += self.store.delete_stale(run.collection, source, version)
            run.open_sources.remove((source, version))
            run.doc_chunks.pop(source, None)


@dataclass(frozen=True)
class PreparedSource:
    """A source ready to embed (``prepare_source``).

    Attributes:
        chunks: its chunks, in document order (at least one).
        skipped_records: JSON records without text, by reason (``Extraction.skipped_records``), {} when none.
        notice: text the embedding model cannot represent (``Splitter.unrepresented``), "" when none.
    """

    chunks: list[Chunk]
    skipped_records: dict[str, int]
    notice: str = ""


def prepare_source(item: SourceItem, splitter: Splitter,
                   complete_in: tuple[VectorStore, str] | None) -> PreparedSource | FileResult:
    """One source's chunks, or its result when there is nothing to write: skipped (with the reason) or unchanged.

    The step both ingestion engines run per source: a source whose every chunk at this version is stored in the
    collection of ``complete_in`` (store, collection) is unchanged; otherwise (or with None: a new collection, or the
    caller asked already) its Documents are loaded, normalised (``normalize_stage``) and split.

    Raises:
        DeepSearcherError: a configuration or provider failure (not this source's fault).
    """
    if item.error:
        return FileResult(item.source, "skipped", item.error)
    if complete_in is not None and complete_in[0].is_complete(complete_in[1], item.source, item.version):
        return FileResult(item.source, "unchanged")
    try:
        loaded = item.load()
        skipped_records = loaded.skipped_records if isinstance(loaded, Extraction) else {}
        # the item's id is the source of record (a loader may spell a path differently, e.g. a non-UTF-8 name)
        documents = [d if d.source == item.source else replace(d, source=item.source) for d in loaded]
        documents = stamp_dates(documents, item.source)  # what date filters range over
        chunks = splitter.split(normalize_stage(documents, item.source), item.version)
        if not chunks:
            raise SkipSource("no text extracted")
    except SkipSource as exc:
        return FileResult(item.source, "skipped", str(exc))
    except DeepSearcherError:
        raise
    except Exception as exc:  # any other failure belongs to this source alone
        log.debug("loading %s failed", item.source, exc_info=True)
        return FileResult(item.source, "skipped", failure_reason(exc))
    return PreparedSource(chunks, dict(skipped_records), splitter.unrepresented(chunks))


def write_batch(store: VectorStore, collection: str, batch: Sequence[Chunk], vectors: Any,
                doc_chunks: Mapping[str, int]) -> tuple[int, dict[str, str]]:
    """Upsert one embedded batch; when the store refuses it and still answers, write each source's chunks alone, so
    a refusal is pinned on the sources that cause it.

    Args:
        batch: chunks; ``vectors`` their embeddings, shape (len(batch), dim).
        doc_chunks: source -> chunks of the whole source (stored with each chunk).

    Returns:
        (rows written, source -> why the store refused it).

    Raises:
        ProviderError: the store failed as a whole (it does not answer any more).
    """
    written, refused = _upsert(store, collection, batch, vectors, doc_chunks)
    after_batch_written()  # where a test pauses a load to interrupt it (ingest/pause.py); a no-op otherwise
    return written, refused


def _upsert(store: VectorStore, collection: str, batch: Sequence[Chunk], vectors: Any,
            doc_chunks: Mapping[str, int]) -> tuple[int, dict[str, str]]:
    try:
        return store.upsert(collection, batch, vectors, dict(doc_chunks)), {}
    except Exception as error:
        if _not_the_data(error):
            raise
        try:
            store.has_collection(collection)
        except Exception as exc:
            raise ProviderError(f"the vector store failed: {_store_reason(error)}",
                                hint=f"check the store ({_store_reason(exc)}); re-run the same load to resume, "
                                     "nothing is duplicated") from error
    rows: dict[str, list[int]] = {}
    for i, chunk in enumerate(batch):
        rows.setdefault(chunk.source, []).append(i)
    written, refused = 0, {}
    for source, index in rows.items():
        try:
            written += store.upsert(collection, [batch[i] for i in index], vectors[index], dict(doc_chunks))
        except Exception as exc:
            if _not_the_data(exc):
                raise
            log.debug("the store refused %s", source, exc_info=True)
            refused[source] = f"the vector store refused it: {failure_reason(_cause(exc))}"
    return written, refused


def _not_the_data(exc: Exception) -> bool:
    """A failure no single source causes: our own configuration or collection errors, or a store that is in use.
    A ``ProviderError`` of the store itself may be a refused value (``MilvusStore`` turns every pymilvus failure
    into one): ``write_batch`` asks the store whether it still answers before blaming the data."""
    return isinstance(exc, DeepSearcherError) and (not isinstance(exc, ProviderError)
                                                   or isinstance(exc, (StoreInUseError, DiskFullError)))


def _store_reason(exc: BaseException) -> str:
    """Why the store failed as a whole, in one line: our own message (it names the configured URI), never the store
    library's raw text (which may name an internal address)."""
    if isinstance(exc, DeepSearcherError) and exc.args:
        return " ".join(str(exc.args[0]).split())
    return failure_reason(exc)


def _cause(exc: BaseException) -> BaseException:
    """The store library's own exception behind a ``ProviderError`` (its type names the refusal), else ``exc``."""
    return exc.__cause__ if isinstance(exc, ProviderError) and exc.__cause__ is not None else exc


def failure_reason(exc: BaseException, limit: int = 300) -> str:
    """``"TypeName: message"`` on one line, at most ``limit`` characters: the reason a source was skipped."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
