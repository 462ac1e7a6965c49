"""Distributed ingestion on Ray Data (``ingest.engine: ray``, extra ``ray``): the driver side.

The driver lists the files (``ingest.sources.expand_paths``, as for a local load), checks or creates the collection,
then streams the files through three stages (``ingest.ray_stages``): read + normalise + split in tasks, embed in an
actor pool (``ingest.ray.embed_actors`` models, one CPU each), upsert in batches of ``ingest.batch_size``. It turns
the rows coming back into the same progress events and ``LoadSummary`` as a local load, and once every chunk of a
source is written deletes that source's chunks of older versions. Ids, version hashes and completeness checks are
the local engine's (``prepare_source``, ``write_batch``), so a re-run writes nothing and an interrupted run resumes
with no duplicates. URL sources are crawled and written on the driver by the local pipeline (the crawler's politeness
and address rules live in one process).

Milvus Lite is refused: one process per file, and here many processes write. Extraction tasks and the writer
reserve no CPU (on text corpora they are a few per cent of the work next to embedding; docs/scale.md), so a
machine's every CPU can hold an embedding actor without the pipeline waiting for a free one.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
import warnings
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.events import EventCallback, LoadBatch, LoadSource, LoadStart
from deepsearcher.ingest.pause import PAUSE_VAR
from deepsearcher.ingest.pipeline import LoadPipeline
from deepsearcher.ingest.ray_stages import (KIND_REFUSED, KIND_RESULT, KIND_WRITTEN, RayJob, WorkerOptions,
                                             result_extras)
from deepsearcher.ingest.sources import SourceItem, display_path, file_items
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.protocols import Embedder, Loader, VectorStore
from deepsearcher.quiet_logs import quiet_libraries
from deepsearcher.settings import RaySettings
from deepsearcher.types import CollectionDescription, FileResult, LoadSummary

log = logging.getLogger(__name__)

#: Ray Data blocks at most: one file per block up to this many files. A stage hands its output on per block, so
#: small blocks keep progress (and the pipeline) flowing: with 16 files per block the first batch of a 2Wiki load
#: was written after 78-95 s instead of seconds.
MAX_BLOCKS = 2000


def check_store(store: VectorStore) -> None:
    """Refuse a store only one process may open (Milvus Lite).

    Raises:
        ConfigError: the store has a file lock.
    """
    if store.capabilities.file_lock:
        raise ConfigError(f"the Ray engine writes from many processes, but {store.uri} is a Milvus Lite file, which "
                          "one process at a time may open",
                          hint="point vector_db.uri at a Milvus server (http://host:19530) or Zilliz Cloud, or set "
                               "ingest.engine: local")


def load_with_ray(files: Sequence[Path], driver_items: Iterable[SourceItem] | None, collection: str,
                  description: str, *, ray_options: RaySettings, workers: WorkerOptions, store: VectorStore,
                  embedder: Embedder, loader: Loader, splitter: Splitter, signature: str, force_new: bool,
                  batch_size: int, on_event: EventCallback, placeholder: bool = False) -> LoadSummary:
    """Load ``files`` through Ray Data, then ``driver_items`` (crawled pages) through the local pipeline.

    Args:
        files: the files to load (already expanded and filtered).
        driver_items: sources loaded on the driver afterwards (URL pages), or None.
        collection, description: target collection and the description it gets when created.
        ray_options: the ``ingest.ray`` options (where Ray runs, how many embedding actors).
        workers: the resolved options of the providers each worker builds.
        store, embedder, loader, splitter, signature: the driver's providers and the version-hash salt (the
            loader is only used to list the files' versions here; the workers build their own).
        force_new: drop and rebuild the collection (before the pipeline starts, when there are files).
        batch_size: chunks per upsert.
        on_event: receives LoadStart, LoadSource and LoadBatch events, as from a local load.

    Raises:
        ConfigError: the store is Milvus Lite.
        ProviderError: Ray is not installed or cannot start or connect, or a stage failed.
        CollectionError: the collection uses another embedding model.
    """
    check_store(store)
    started = time.perf_counter()
    exists = store.has_collection(collection)
    if exists and not force_new:
        store.check_embedding(collection, embedder.model_name, embedder.dimension)
    on_event(LoadStart(collection=collection, total=len(files) if driver_items is None else None))
    order = {display_path(f): i for i, f in enumerate(files)}
    unchanged: list[FileResult] = []
    stale = 0  # chunks of other versions deleted from unchanged files
    if files and exists and not force_new:
        files, unchanged, stale = _split_unchanged(files, store, collection, loader, signature, on_event)
    done = _Written()
    if files:
        job = RayJob(run_id=uuid.uuid4().hex, collection=collection, signature=signature, workers=workers)
        done = _load_files(files, job, description, exists=exists, force_new=force_new, store=store,
                           embedder=embedder, splitter=splitter, ray_options=ray_options, batch_size=batch_size,
                           on_event=on_event, placeholder=placeholder)
    results = sorted(unchanged + done.results, key=lambda r: order.get(r.source, len(order)))
    summary = LoadSummary(collection=collection, files=results, chunks_written=done.written,
                          chunks_deleted=done.deleted + stale, seconds=time.perf_counter() - started,
                          embed_seconds=done.embed_seconds, engine="ray", created=done.created,
                          description=CollectionDescription(collection, description,
                                                            "placeholder" if placeholder else "given")
                          if done.created else None)
    if driver_items is None:
        return summary
    web = LoadPipeline(store, embedder, splitter, batch_size, on_event).run(driver_items, collection,
                                                                            description=description,
                                                                            placeholder=placeholder)
    return _add_up(summary, web, started)


@dataclass(frozen=True)
class _Written:
    """What the Ray pipeline did to the collection: one result per file, chunks written and deleted, embedding
    seconds summed over the actors, and whether the load created the collection."""

    results: list[FileResult] = field(default_factory=list)
    written: int = 0
    deleted: int = 0
    embed_seconds: float = 0.0
    created: bool = False


def _load_files(files: Sequence[Path], job: RayJob, description: str, *, exists: bool, force_new: bool,
                store: VectorStore, embedder: Embedder, splitter: Splitter, ray_options: RaySettings,
                batch_size: int, on_event: EventCallback, placeholder: bool = False) -> _Written:
    """(Re)create the collection when needed, run the pipeline, then delete the loaded sources' chunks of older
    versions and seal. A collection this load created and wrote nothing into is dropped again (as by a local load:
    a collection is only made by a write)."""
    collection = job.collection
    if exists and force_new:
        store.drop_collection(collection)
    if not exists or force_new:
        store.create_collection(collection, description=description, model_name=embedder.model_name,
                                dim=embedder.dimension)
        if placeholder:  # a stand-in until DeepSearcher.load describes it: never shown as the user's
            store.set_description(collection, description, generated=True)
    results, written, embed_seconds, versions = _run_pipeline(files, job, splitter, ray_options, batch_size, on_event)
    deleted = sum(store.delete_stale(collection, r.source, versions[r.source]) for r in results
                  if r.status == "loaded")
    store.seal(collection)
    created = not exists or force_new
    if not written and not exists and not any(r.status == "loaded" for r in results):
        store.drop_collection(collection)
        created = False
    return _Written(results, written, deleted, embed_seconds, created)


def _add_up(summary: LoadSummary, web: LoadSummary, started: float) -> LoadSummary:
    """The Ray part's summary with the driver's (crawled pages) added."""
    return replace(summary, files=summary.files + web.files,
                   chunks_written=summary.chunks_written + web.chunks_written,
                   chunks_deleted=summary.chunks_deleted + web.chunks_deleted, seconds=time.perf_counter() - started,
                   embed_seconds=summary.embed_seconds + web.embed_seconds, created=summary.created or web.created,
                   description=summary.description or web.description)


def _split_unchanged(files: Sequence[Path], store: VectorStore, collection: str, loader: Loader, signature: str,
                     on_event: EventCallback) -> tuple[list[Path], list[FileResult], int]:
    """Answer on the driver the files whose every chunk at their current version is stored ("unchanged", with their
    ``LoadSource`` events), so that an unchanged re-run starts no Ray at all and the workers never ask again; the
    rest go to the pipeline (a file that cannot be read too: its task reports why). An unchanged file loses any
    chunk of another version (left by a load interrupted before it deleted them); returns the rows deleted too."""
    todo: list[Path] = []
    unchanged: list[FileResult] = []
    deleted = 0
    for path, item in zip(files, file_items(files, loader, signature)):
        if not item.error and store.is_complete(collection, item.source, item.version):
            deleted += store.delete_stale(collection, item.source, item.version)
            unchanged.append(FileResult(item.source, "unchanged"))
            on_event(LoadSource(source=item.source, status="unchanged", reason="", chunks=0))
        else:
            todo.append(path)
    return todo, unchanged, deleted


def _run_pipeline(files: Sequence[Path], job: RayJob, splitter: Splitter, options: RaySettings, batch_size: int,
                  on_event: EventCallback) -> tuple[list[FileResult], int, float, dict[str, str]]:
    """Run the three stages and turn the rows coming back into events.

    Returns:
        (one FileResult per file, in the order rows came back, chunks written, embedding seconds summed over the actors,
        source -> version of every loaded source).
    """
    results: dict[str, FileResult] = {}
    versions: dict[str, str] = {}
    refused: dict[str, str] = {}
    written = queued = 0
    embed_seconds = 0.0
    with RaySession(options, job) as ray_data:
        for row in _stream(ray_data, files, job, splitter, options, batch_size):
            kind, source = row["kind"], row["source"]
            if kind == KIND_RESULT:
                skipped_records, notice = result_extras(row["metadata"])
                result = FileResult(source, row["status"], row["reason"], int(row["chunks"]),
                                    skipped_records=skipped_records, notice=notice)
                queued += result.chunks
                results[source] = result
                if result.status == "loaded":
                    versions[source] = row["doc_hash"]
                on_event(LoadSource(source=source, status=result.status,  # type: ignore[arg-type]
                                    reason=result.reason, chunks=result.chunks,
                                    skipped_records=result.skipped_records, notice=result.notice))
            elif kind == KIND_WRITTEN:
                written += int(row["chunks"])
                embed_seconds += float(row["embed_seconds"])
                on_event(LoadBatch(chunks=int(row["chunks"]), written=written, queued=queued))
            elif kind == KIND_REFUSED:
                refused[source] = row["reason"]
    final = [FileResult(s, "skipped", refused[s]) if s in refused else r for s, r in results.items()]
    return final, written, embed_seconds, {s: v for s, v in versions.items() if s not in refused}


def _stream(ray_data: Any, files: Sequence[Path], job: RayJob, splitter: Splitter, options: RaySettings,
            batch_size: int) -> Iterator[dict[str, Any]]:
    """The rows coming out of the writer stage, as they come."""
    from deepsearcher.ingest.ray_stages import EmbedActor, WriteActor, extract_batch

    blocks = max(1, min(len(files), MAX_BLOCKS))
    ds = ray_data.from_items([{"path": str(f)} for f in files], override_num_blocks=blocks)
    import ray

    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    ds = ds.map_batches(extract_batch, fn_kwargs={"job": job, "splitter": splitter}, batch_size=None, num_cpus=0,
                        compute=ray_data.TaskPoolStrategy(size=cpus))
    # max_restarts=0 (Ray Data's own advice for its map actors): a failed actor fails the load, and a re-run
    # resumes with no duplicates; with restarts on, Ray's core logs an error line about the actors' object-store
    # arguments on every load. Passing it this way is deprecated in Ray 2.60 with no named replacement yet.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
        ds = ds.map_batches(EmbedActor, fn_constructor_kwargs={"job": job}, batch_size=options.embed_batch_size,
                            num_cpus=1, compute=ray_data.ActorPoolStrategy(size=options.embed_actors),
                            max_restarts=0)
        ds = ds.map_batches(WriteActor, fn_constructor_kwargs={"job": job}, batch_size=batch_size, num_cpus=0,
                            compute=ray_data.ActorPoolStrategy(size=1), max_restarts=0)
    for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
        for i in range(len(batch["kind"])):
            yield {key: batch[key][i] for key in ("kind", "source", "status", "reason", "chunks", "doc_hash",
                                                  "metadata", "embed_seconds")}


LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for single-machine Ray (its default on macOS and Windows): with it off, Ray's node address is the
loopback one, so every Ray server process (GCS, raylet, object manager, workers) listens on 127.0.0.1 only and no
other host can submit work to the local Ray a load starts. (``ray.init(_node_ip_address="127.0.0.1")`` is not
enough: Ray turns a loopback node address into the machine's LAN address.) Token authentication is Ray's default
for local clusters since 2.59, the floor of the ``ray`` extra; ``RAY_AUTH_MODE=disabled`` in the environment
switches it off, and the loopback binding still holds."""


@contextmanager
def _single_machine(ray: Any) -> Iterator[None]:
    """Ray on loopback only while the block runs (``LOCAL_ONLY``): the environment variable for the processes Ray
    starts, Ray's own constant (read at its import, which may have happened already) for this one; both put back
    afterwards, so a later load on a cluster (``ingest.ray.address``) is unaffected."""
    from ray._private import ray_constants

    before_env, before_flag = os.environ.get(LOCAL_ONLY), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[LOCAL_ONLY] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before_flag
        if before_env is None:
            os.environ.pop(LOCAL_ONLY, None)
        else:
            os.environ[LOCAL_ONLY] = before_env


class RaySession:
    """Ray for one load: a local Ray started with ``ingest.ray.num_cpus`` (stopped afterwards), or the cluster at
    ``ingest.ray.address`` (disconnected afterwards). Entering returns the ``ray.data`` module.

    Telemetry stays off (``RAY_USAGE_STATS_ENABLED=0`` unless set), as does the dashboard; workers import the same
    deepsearcher as the driver (a local Ray gets its folder on ``PYTHONPATH``; a cluster gets it as a ``py_modules``
    upload) and the vector store token (and the tests' pause point, ``ingest/pause.py``) from the driver's
    environment.

    Raises (on enter):
        ProviderError: ray is not installed, or Ray cannot start or reach the cluster.
    """

    def __init__(self, options: RaySettings, job: RayJob) -> None:
        self.options = options
        self.token_env = getattr(job.workers.vector_db, "token_env", None)
        self._local = ExitStack()

    def __enter__(self) -> Any:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        debug = logging.getLogger().isEnabledFor(logging.DEBUG)
        try:
            import ray
            import ray.data
        except ModuleNotFoundError as exc:
            raise ProviderError("the Ray engine needs ray (ingest.engine: ray)",
                                hint="pip install 'deepsearcher[ray]', or set ingest.engine: local") from exc
        # Ray configures its own loggers at import; the load reports through our events, and a failure that
        # matters reaches us as an exception
        quiet_libraries("ray", debug=debug)
        if not debug:  # "the operator only received 1 input(s)": a small load, nothing to fix
            warnings.filterwarnings("ignore", message=".*only received", category=UserWarning, module="ray")
        package = Path(__file__).resolve().parents[1]  # the deepsearcher package the workers import
        env_vars = {"RAY_USAGE_STATS_ENABLED": "0", "DO_NOT_TRACK": "1"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", PAUSE_VAR, self.token_env):
            if var and os.environ.get(var):
                env_vars[var] = os.environ[var]
        runtime_env: dict[str, Any] = {"env_vars": env_vars}
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": debug,
                                  "logging_level": logging.DEBUG if debug else logging.CRITICAL}
        if self.options.address:
            runtime_env["py_modules"] = [str(package)]
            kwargs["address"] = self.options.address
        else:
            env_vars["PYTHONPATH"] = os.pathsep.join(p for p in (str(package.parent),
                                                                 os.environ.get("PYTHONPATH", "")) if p)
            kwargs["num_cpus"] = self.options.num_cpus or os.cpu_count() or 1
            self._local.enter_context(_single_machine(ray))  # loopback only, until __exit__
        try:
            _start_ray(ray, runtime_env, kwargs)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError from a bad address
            self._local.close()
            where = self.options.address or "a local Ray"
            raise ProviderError(f"could not start or reach Ray ({where}): {exc}",
                                hint="check ingest.ray.address, or leave it empty to start a local Ray") from exc
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # progress is reported through our events
        return ray.data

    def __exit__(self, *exc: object) -> None:
        import ray

        ray.shutdown()
        self._local.close()


def _start_ray(ray: Any, runtime_env: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """``ray.init``, tried twice: on a loaded machine a local raylet can miss Ray's fixed 30 s registration window
    ("The current node timed out during startup"), seen once in the tests with the 2 cores busy; the half-started
    node is shut down before the second try. A bad address fails the same way twice."""
    from tenacity import Retrying, stop_after_attempt, wait_fixed

    for attempt in Retrying(stop=stop_after_attempt(2), wait=wait_fixed(1), reraise=True,
                            before_sleep=lambda _state: ray.shutdown()):
        with attempt:
            ray.init(runtime_env=runtime_env, **kwargs)
