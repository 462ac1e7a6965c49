"""The worker side of the Ray engine: the three Ray Data stages and the rows they pass on.

Each stage calls the steps the local engine runs (``ingest.pipeline``), so both engines make the same chunks, ids,
versions and writes:

1. ``extract_batch`` (tasks): paths -> ``file_items`` (the file's version hash) -> ``prepare_source`` (the loader
   provider, its normalisation, and the splitter; the driver already answered the files stored unchanged) -> chunk
   rows plus one result row per source.
2. ``EmbedActor`` (an actor pool, one model per actor): embeds the chunk rows of each batch with the configured
   embedder (the same ONNX path; it embeds in order of length).
3. ``WriteActor``: ``write_batch`` (upsert, and per source on a refusal) -> result rows passed on, one ``written``
   row per batch, one ``refused`` row per refused source.

Rows are flat columns (``ROW_COLUMNS``) so Ray Data can hold them as Arrow blocks; ``kind`` says what a row is.
Providers are built once per worker process from the resolved options the driver sends (``RayJob``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from deepsearcher.ingest.pipeline import prepare_source, write_batch
from deepsearcher.ingest.sources import file_items
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.types import Chunk, FileResult

#: every column of every row; ``vector`` is added by the embedding stage
ROW_COLUMNS = ("kind", "source", "status", "reason", "chunks", "id", "text", "title", "page", "chunk_index",
               "doc_hash", "metadata", "doc_chunks", "embed_seconds")
KIND_CHUNK, KIND_RESULT, KIND_WRITTEN, KIND_REFUSED = "chunk", "result", "written", "refused"


@dataclass(frozen=True)
class WorkerOptions:
    """The options (paths resolved) of the providers every worker builds for itself through the registry: the
    ``loader``, ``embedding`` and ``vector_db`` sections."""

    loader: Any
    embedding: Any
    vector_db: Any


@dataclass(frozen=True)
class RayJob:
    """What the workers of one load need: the target and the resolved provider options (small, so actors get it
    inline; the extraction tasks get the splitter besides).

    Attributes:
        run_id: identifies the load (providers are cached per worker process and load).
        collection: target collection.
        signature: the split settings mixed into every version hash (``ingest.load.split_signature``).
        workers: the options of the providers each worker builds.
    """

    run_id: str
    collection: str
    signature: str
    workers: WorkerOptions


_PROVIDERS: dict[tuple[str, str], Any] = {}


def provider(job: RayJob, kind: str) -> Any:
    """The ``kind`` provider ("loader", "embedding" or "vector_db") of this worker process for ``job``."""
    key = (job.run_id, kind)
    if key not in _PROVIDERS:
        from deepsearcher.registry import registry

        _PROVIDERS[key] = registry.create(kind, getattr(job.workers, kind))
    return _PROVIDERS[key]


def _rows() -> dict[str, list[Any]]:
    return {column: [] for column in ROW_COLUMNS}


def _add(rows: dict[str, list[Any]], kind: str, source: str, **values: Any) -> None:
    defaults = {"status": "", "reason": "", "chunks": 0, "id": "", "text": "", "title": "", "page": -1,
                "chunk_index": 0, "doc_hash": "", "metadata": "{}", "doc_chunks": 0, "embed_seconds": 0.0}
    defaults.update(values, kind=kind, source=source)
    for column in ROW_COLUMNS:
        rows[column].append(defaults[column])


def _add_result(rows: dict[str, list[Any]], result: FileResult, version: str = "") -> None:
    """A source's result row; its ``skipped_records`` and ``notice`` travel as JSON in the ``metadata`` column
    (``result_extras`` reads them)."""
    _add(rows, KIND_RESULT, result.source, status=result.status, reason=result.reason, chunks=result.chunks,
         doc_hash=version, metadata=json.dumps({"skipped_records": result.skipped_records, "notice": result.notice}))


def result_extras(metadata: str) -> tuple[dict[str, int], str]:
    """``(skipped_records, notice)`` of a result row's ``metadata`` column (``_add_result``)."""
    extras = json.loads(metadata)
    return dict(extras.get("skipped_records") or {}), str(extras.get("notice") or "")


def extract_batch(batch: dict[str, np.ndarray], job: RayJob, splitter: Splitter) -> dict[str, list[Any]]:
    """Stage 1: read, normalise (the loader) and split the files of ``batch["path"]`` with the driver's splitter
    (it pickles with its tokenizer); one result row per source."""
    loader = provider(job, "loader")
    rows = _rows()
    for path in batch["path"]:
        for item in file_items([Path(str(path))], loader, job.signature):
            prepared = prepare_source(item, splitter, None)
            if isinstance(prepared, FileResult):
                _add_result(rows, prepared)
                continue
            chunks = prepared.chunks
            for c in chunks:
                _add(rows, KIND_CHUNK, c.source, id=c.id, text=c.text, title=c.title,
                     page=-1 if c.page is None else c.page, chunk_index=c.chunk_index, doc_hash=c.doc_hash,
                     metadata=json.dumps(c.metadata, ensure_ascii=False), doc_chunks=len(chunks))
            _add_result(rows, FileResult(item.source, "loaded", chunks=len(chunks),
                                         skipped_records=prepared.skipped_records, notice=prepared.notice),
                        item.version)
    return rows


class EmbedActor:
    """Stage 2: one embedding model per actor; adds ``vector`` (zeros on non-chunk rows) and puts the batch's
    embedding time in its first row's ``embed_seconds``."""

    def __init__(self, job: RayJob) -> None:
        self.job = job
        self.embedder = provider(job, "embedding")

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        out: dict[str, Any] = dict(batch)
        chunk_rows = [i for i, kind in enumerate(batch["kind"]) if kind == KIND_CHUNK]
        vectors = np.zeros((len(batch["kind"]), self.embedder.dimension), dtype=np.float32)
        seconds = np.zeros(len(batch["kind"]))
        if chunk_rows:
            started = time.perf_counter()
            vectors[chunk_rows] = self.embedder.embed_documents([str(batch["text"][i]) for i in chunk_rows])
            seconds[0] = time.perf_counter() - started
        out["vector"], out["embed_seconds"] = vectors, seconds
        return out


class WriteActor:
    """Stage 3: upserts the chunk rows of each batch (``write_batch``); passes result rows on and reports what was
    written and refused."""

    def __init__(self, job: RayJob) -> None:
        self.job = job
        self.store = provider(job, "vector_db")

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        rows = _rows()
        index = [i for i, kind in enumerate(batch["kind"]) if kind == KIND_CHUNK]
        for i, kind in enumerate(batch["kind"]):
            if kind == KIND_RESULT:
                _add(rows, KIND_RESULT, str(batch["source"][i]), status=str(batch["status"][i]),
                     reason=str(batch["reason"][i]), chunks=int(batch["chunks"][i]), doc_hash=str(batch["doc_hash"][i]),
                     metadata=str(batch["metadata"][i]))
        chunks = [_chunk(batch, i) for i in index]
        doc_chunks = {str(batch["source"][i]): int(batch["doc_chunks"][i]) for i in index}
        written, refused = write_batch(self.store, self.job.collection, chunks, np.asarray(batch["vector"])[index],
                                       doc_chunks) if chunks else (0, {})
        _add(rows, KIND_WRITTEN, "", chunks=written, embed_seconds=float(np.sum(batch["embed_seconds"])))
        for source, reason in refused.items():
            _add(rows, KIND_REFUSED, source, reason=reason)
        return rows


def _chunk(batch: dict[str, np.ndarray], i: int) -> Chunk:
    page = int(batch["page"][i])
    return Chunk(id=str(batch["id"][i]), text=str(batch["text"][i]), source=str(batch["source"][i]),
                 title=str(batch["title"][i]), page=None if page < 0 else page,
                 chunk_index=int(batch["chunk_index"][i]), doc_hash=str(batch["doc_hash"][i]),
                 metadata=json.loads(str(batch["metadata"][i])))
