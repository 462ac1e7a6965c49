"""The load pipeline: sources -> Documents -> Chunks -> embeddings -> upsert, idempotent and incremental.

Each source (a file or a fetched URL) has a version hash. A source whose every chunk at that version is already stored
is skipped without parsing (an unchanged re-load writes nothing). A changed source upserts its new chunks, then deletes
the chunks of its old version. Chunk ids are content hashes, so an interrupted load that is run again completes with
no duplicates. Chunks are embedded in large batches (sentence-transformers sorts each batch by length) and upserted
in bulk.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from deepsearcher.embedding.base import Embedder
from deepsearcher.errors import IngestError
from deepsearcher.ingest.ids import file_hash
from deepsearcher.ingest.loaders import SkipSource, load_path
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.settings import LoaderSettings
from deepsearcher.types import Chunk, Document, Event, EventCallback, FileResult, LoadSummary, ignore_event
from deepsearcher.vectordb.milvus import MilvusStore, validate_collection_name

log = logging.getLogger(__name__)

URL_PREFIXES = ("http://", "https://")


@dataclass
class SourceItem:
    """One source to load: its id, its version hash, and how to get its Documents.

    Attributes:
        source: absolute POSIX path or URL (the ``source`` stored with each chunk).
        version: hash of the content plus split settings; equal version = nothing to do.
        load: returns the Documents or raises ``SkipSource``.
    """

    source: str
    version: str
    load: Callable[[], list[Document]]


def is_url(text: str) -> bool:
    return text.startswith(URL_PREFIXES)


def expand_paths(inputs: Sequence[str], options: LoaderSettings) -> list[Path]:
    """Expand files, folders (recursive) and glob patterns into a sorted, de-duplicated list of files.

    Folders honour ``options.include`` / ``options.exclude`` glob patterns (matched against the path relative to the
    folder and against the file name).

    Raises:
        IngestError: a path does not exist or a pattern matches nothing (the message names every such input).
    """
    files: list[Path] = []
    missing: list[str] = []
    not_regular: list[str] = []
    for raw in inputs:
        path = Path(raw).expanduser()
        if any(ch in raw for ch in "*?["):
            matches = [Path(m) for m in glob.glob(str(path), recursive=True)]
            found = [m for m in matches if m.is_file()]
            found += [f for m in matches if m.is_dir() for f in _walk(m, options)]
            if not found:
                missing.append(raw)
            files.extend(found)
        elif path.is_dir():
            files.extend(_walk(path, options))
        elif path.is_file():
            files.append(path)
        elif os.path.lexists(path):
            not_regular.append(raw)
        else:
            missing.append(raw)
    if missing or not_regular:
        problems = ([f"not found: {', '.join(missing)}"] if missing else []) + (
            [f"not a regular file or folder (a device, pipe, or broken/looping link): {', '.join(not_regular)}"]
            if not_regular else [])
        raise IngestError("; ".join(problems), hint="check the paths; nothing was written")
    seen: dict[str, Path] = {}
    for f in files:
        seen.setdefault(f.resolve().as_posix(), f)
    return [seen[k] for k in sorted(seen)]


def _walk(folder: Path, options: LoaderSettings) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder)
        if any(_match(rel, pat) for pat in options.exclude):
            continue
        if options.include and not any(_match(rel, pat) for pat in options.include):
            continue
        yield path


def _match(rel: Path, pattern: str) -> bool:
    # PurePath.match matches from the right; "**/" prefixes also match top-level files
    return rel.match(pattern) or rel.match(pattern.removeprefix("**/")) or Path(rel.name).match(pattern)


def file_items(files: Iterable[Path], options: LoaderSettings, split_signature: str) -> Iterator[SourceItem]:
    """SourceItems for local files; the version is the file's hash plus the loader/splitter settings."""
    for path in files:
        source = path.resolve().as_posix()
        yield SourceItem(source=source, version=file_hash(path, extra=split_signature),
                         load=lambda p=path: load_path(p, options))


class LoadPipeline:
    """Load sources into one collection.

    Args:
        store: the vector store.
        embedder: the embedding provider.
        splitter: the token-sized splitter.
        batch_size: chunks embedded and upserted together.
        on_event: receives "load.start", "load.source" and "load.batch" events.
    """

    def __init__(self, store: MilvusStore, embedder: Embedder, splitter: Splitter, batch_size: int,
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
        validate_collection_name(collection)
        start = time.perf_counter()
        embed_seconds = 0.0
        store, model_name = self.store, self.embedder.model_name
        dim = self.embedder.dimension
        exists = store.has_collection(collection)
        # --force-new-collection drops the old collection only when the first new batch is written, so a load that
        # yields nothing (all skipped, an unreachable URL) leaves the old collection as it was
        drop_first = exists and force_new
        if drop_first:
            exists = False
        elif exists:
            store.check_embedding(collection, model_name, dim)
        self.on_event(Event("load.start", {"collection": collection, "total": total}))

        results: list[FileResult] = []
        pending: list[Chunk] = []
        pending_sources: list[tuple[str, str]] = []  # (source, version) whose chunks are all in ``pending``
        doc_chunks: dict[str, int] = {}
        written = deleted = 0

        def write(batch: list[Chunk]) -> None:
            nonlocal written, embed_seconds, exists, drop_first
            t0 = time.perf_counter()
            vectors = self.embedder.embed_documents([c.text for c in batch])
            embed_seconds += time.perf_counter() - t0
            if drop_first:
                store.drop_collection(collection)
                drop_first = False
            if not exists:
                store.create_collection(collection, description=description, model_name=model_name, dim=dim)
                exists = True
            written += store.upsert(collection, batch, vectors, doc_chunks)
            self.on_event(Event("load.batch", {"chunks": len(batch), "written": written}))

        def flush(final: bool = False) -> None:
            nonlocal deleted
            while pending and (final or len(pending) >= self.batch_size):
                write(pending[:self.batch_size])
                del pending[:self.batch_size]
            # a source is complete once none of its chunks wait: only then drop its old version
            waiting = {c.source for c in pending}
            for source, version in [sv for sv in pending_sources if sv[0] not in waiting]:
                deleted += store.delete_stale(collection, source, version)
                pending_sources.remove((source, version))
                doc_chunks.pop(source, None)

        for item in items:
            if exists and store.is_complete(collection, item.source, item.version):
                result = FileResult(item.source, "unchanged")
            else:
                try:
                    docs = item.load()
                    chunks = self.splitter.split(docs, item.version)
                    if not chunks:
                        raise SkipSource("no text extracted")
                except SkipSource as exc:
                    result = FileResult(item.source, "skipped", str(exc))
                except (OSError, ValueError, UnicodeError, RuntimeError, KeyError) as exc:
                    log.debug("loader failed on %s", item.source, exc_info=True)
                    result = FileResult(item.source, "skipped", f"{type(exc).__name__}: {exc}")
                else:
                    doc_chunks[item.source] = len(chunks)
                    pending.extend(chunks)
                    pending_sources.append((item.source, item.version))
                    flush()
                    result = FileResult(item.source, "loaded", chunks=len(chunks))
            results.append(result)
            self.on_event(Event("load.source", {"source": result.source, "status": result.status,
                                                "reason": result.reason, "chunks": result.chunks}))
        flush(final=True)
        if exists:
            store.seal(collection)  # unflushed Milvus Lite data is re-scanned by every search (see MilvusStore.seal)
        return LoadSummary(collection=collection, files=results, chunks_written=written, chunks_deleted=deleted,
                           seconds=time.perf_counter() - start, embed_seconds=embed_seconds)
