"""The one ingestion entry point, used by ``DeepSearcher.load`` and the HTTP server: sources -> documents -> chunks ->
store.

``load_sources`` validates the inputs before anything is written (collection name, paths, URLs, the crawler's
options), turns files and crawled pages into ``SourceItem``s and runs the ``LoadPipeline`` over them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from deepsearcher.errors import ConfigError, IngestError
from deepsearcher.events import EventCallback, ignore_event
from deepsearcher.ingest.formats import EXTRACTION_VERSION
from deepsearcher.ingest.normalize import NORMALIZE_VERSION
from deepsearcher.ingest.options import CrawlScope, LoaderOptions
from deepsearcher.ingest.pipeline import LoadPipeline
from deepsearcher.ingest.sources import (Expansion, PathAllowed, SourceItem, display_path, expand_paths, file_items,
                                         in_scope, is_url)
from deepsearcher.ingest.splitter import Splitter
from deepsearcher.protocols import Crawler, Embedder, Loader, VectorStore
from deepsearcher.registry import Registry
from deepsearcher.settings import IngestSettings
from deepsearcher.types import FileResult, LoadSummary
from deepsearcher.vectordb.capabilities import LITE_SLOW_AT, lite_size_notice
from deepsearcher.vectordb.names import validate_collection_name
from deepsearcher.vectordb.schema import stored_source

log = logging.getLogger(__name__)

#: the reason of a source the store refused: its old version is kept (a re-load tries it again)
REFUSED = "the vector store refused it"

if TYPE_CHECKING:
    from deepsearcher.ingest.ray_stages import WorkerOptions
    from deepsearcher.ingest.web import UrlItems


def split_signature(ingest: IngestSettings, loader: LoaderOptions, embedder: Embedder) -> str:
    """What decides the stored chunks besides a source's bytes: split and loader settings and the extractor and
    normaliser versions. Part of every source's version hash, so changing one (or upgrading to new extractors)
    re-extracts unchanged files once."""
    return (f"{ingest.chunk_size_tokens}/{ingest.chunk_overlap_tokens}/{embedder.model_name}/{loader.provider}/"
            f"{loader.json_text_path}/{loader.json_title_path}/{int(loader.docx_headers_footers)}/"
            f"x{EXTRACTION_VERSION}/n{NORMALIZE_VERSION}")


def make_splitter(ingest: IngestSettings, embedder: Embedder) -> Splitter:
    """The token-sized splitter for ``embedder`` (its own tokenizer measures chunks)."""
    return Splitter(ingest.chunk_size_tokens, ingest.chunk_overlap_tokens, tokenizer=embedder.tokenizer(),
                    model_max_tokens=embedder.max_tokens)


#: how the stand-in description of a collection created without one begins (``default_description``)
PLACEHOLDER_PREFIX = "Documents loaded from "


def default_description(inputs: Sequence[str]) -> str:
    """The stand-in description of a collection created without one, until one is generated (at the end of the
    load, or by the next load when this one was interrupted): where its documents came from."""
    shown = ", ".join(list(inputs)[:3]) + (" …" if len(inputs) > 3 else "")
    return f"{PLACEHOLDER_PREFIX}{shown}"


def is_placeholder(text: str) -> bool:
    """A stored description that is still the stand-in: the load that created the collection was stopped before it
    described it. Told by its text, so that collections made before the stand-in was marked as generated are
    described too."""
    return text.startswith(PLACEHOLDER_PREFIX)


def load_sources(inputs: Sequence[str], collection: str, description: str | None, *, ingest: IngestSettings,
                 loader_options: LoaderOptions, crawler_options: CrawlScope, store: VectorStore, embedder: Embedder,
                 loader: Loader, registry: Registry, workers: WorkerOptions | None = None, force_new: bool = False,
                 batch_size: int | None = None, path_allowed: PathAllowed | None = None,
                 allow_private_urls: bool | None = None, on_event: EventCallback = ignore_event,
                 crawler: Crawler | None = None, keep_missing: bool = False,
                 only: Sequence[str] | None = None) -> LoadSummary:
    """Load files, folders, glob patterns and URLs into a collection.

    Args:
        inputs: paths, glob patterns or http(s) URLs.
        collection, description: the target collection and its description used for routing (only set when the
            collection is created; default ``default_description(inputs)``).
        ingest, loader_options, crawler_options: the ``ingest``, ``loader`` and ``crawler`` sections (paths
            resolved); ``ingest.engine`` chooses the engine: ``local``, or ``ray``, which needs a Milvus server.
        store, embedder, loader: the providers to use; registry: where the crawler provider is looked up (URLs).
        workers: the resolved provider options each Ray worker builds its own providers from (Ray engine only).
        force_new: drop and rebuild the collection (on its first write).
        batch_size: chunks per embed/upsert batch (default ``ingest.batch_size``).
        path_allowed: ``path -> bool`` asked about every file found; a refused file is treated as absent (never
            listed, so the answer does not tell whether it exists). The HTTP server passes its allowed roots.
        allow_private_urls: the caller's address rule for the crawler (``web.crawler_options``); None = the
            crawler setting as configured.
        on_event: receives load and crawl events.
        crawler: a ready crawler for the URLs instead of the configured one (``query --save-to`` passes the query's
            page reader, which replays the pages it read without fetching them again).
        keep_missing: keep the chunks of files that are gone from a loaded folder or no longer load (default: they
            are removed, ``remove_missing``).

    Returns:
        A LoadSummary with one FileResult per source; every per-source failure (unreadable, removed during the load,
        an undecodable or unparsable file, a value the store refuses, a folder that cannot be listed) is a skipped
        result with its reason.

    Raises:
        IngestError: a path does not exist (nothing written), or a URL yielded zero documents.
        CollectionError: invalid name, or the collection uses another embedding model.
        ConfigError: the Ray engine with a Milvus Lite file, or without ``workers``.
        ProviderError: the Ray engine cannot start or reach Ray.
    """
    name = validate_collection_name(collection)
    found = _files(inputs, loader_options, path_allowed, allow_empty=only is not None)
    to_load = found.files if only is None else changed_files(found.files, only)
    if ingest.engine == "ray":
        _check_ray(store, workers)  # before any crawl or write
    signature = split_signature(ingest, loader_options, embedder)
    urls = [i for i in inputs if is_url(i)]
    web = _web(urls, crawler_options, loader_options, signature, on_event, registry, allow_private_urls,
               crawler) if urls else None  # validates before any write
    placeholder = description is None  # stored marked as generated; DeepSearcher.load writes the real one
    target = _Target(name, default_description(inputs) if description is None else description, force_new,
                     placeholder)
    splitter, batch = make_splitter(ingest, embedder), batch_size or ingest.batch_size
    summary = _run(to_load, web, target, ingest, workers, store=store, embedder=embedder, loader=loader,
                   splitter=splitter, signature=signature, batch_size=batch, on_event=on_event)
    if web is not None:
        web.check(summary)  # a URL that gave 0 documents is an error (the collection is only made on a write)
    if found.skipped:
        summary = replace(summary, files=summary.files + found.skipped)
    if not keep_missing and not force_new:
        removed = remove_missing(store, name, [i for i in inputs if not is_url(i)], found, summary.files,
                                 loader_options, path_allowed)
        summary = replace(summary, removed=removed)
    return replace(summary, notices=size_notices(store, name))


@dataclass(frozen=True)
class _Target:
    """Where a load writes: the collection, the description it gets when created, and whether to rebuild it."""

    name: str
    description: str
    force_new: bool
    placeholder: bool = False  # the description is the stand-in (stored marked as generated)


def _files(inputs: Sequence[str], options: LoaderOptions, path_allowed: PathAllowed | None, *,
           allow_empty: bool = False) -> Expansion:
    """The files among ``inputs`` (URLs left out).

    Raises:
        IngestError: a path does not exist, or there is nothing at all to load (every file filtered out) and
            ``allow_empty`` is false.
    """
    found = expand_paths([i for i in inputs if not is_url(i)], options, path_allowed)
    if not found.files and not found.skipped and not allow_empty and not any(is_url(i) for i in inputs):
        raise IngestError(f"no files to load in {', '.join(inputs)}",
                          hint="the folders are empty or every file was filtered out "
                               f"(include: {options.include or 'all'}; exclude: {options.exclude})")
    return found


def changed_files(files: Sequence[Path], only: Sequence[str]) -> list[Path]:
    """The files of ``files`` at or below one of the paths ``only``: what a watch batch loads. A folder in ``only``
    (moved or copied in whole) selects every file below it."""
    exact = {display_path(Path(p)) for p in only}
    folders = tuple(p + "/" for p in exact)
    return [f for f in files if (d := display_path(f)) in exact or d.startswith(folders)]


def _check_ray(store: VectorStore, workers: WorkerOptions | None) -> None:
    """The Ray engine's preconditions, checked before any crawl or write.

    Raises:
        ConfigError: the store is a Milvus Lite file, or the caller gave no options for the workers.
    """
    from deepsearcher.ingest.ray_engine import check_store

    check_store(store)
    if workers is None:
        raise ConfigError("ingest.engine is ray, but the load was given no provider options for the Ray workers",
                          hint="pass workers=WorkerOptions(...) to load_sources (DeepSearcher.load does), or set "
                               "ingest.engine: local")


def _web(urls: Sequence[str], options: CrawlScope, loader_options: LoaderOptions, signature: str,
         on_event: EventCallback, registry: Registry, allow_private_urls: bool | None,
         crawler: Crawler | None) -> UrlItems:
    """The start URLs' items, validated (and the crawler built) before anything is written."""
    from deepsearcher.ingest.web import url_items

    return url_items(urls, options, loader_options, signature, on_event, registry,
                     allow_private_urls=allow_private_urls, crawler=crawler)


def _run(files: Sequence[Path], web: UrlItems | None, target: _Target, ingest: IngestSettings,
         workers: WorkerOptions | None, *, store: VectorStore, embedder: Embedder, loader: Loader, splitter: Splitter,
         signature: str, batch_size: int, on_event: EventCallback) -> LoadSummary:
    """Run the configured engine over the files, then the crawled pages."""
    if ingest.engine == "ray" and workers is not None:
        from deepsearcher.ingest.ray_engine import load_with_ray

        return load_with_ray(files, web, target.name, target.description, ray_options=ingest.ray, workers=workers,
                             store=store, embedder=embedder, loader=loader, splitter=splitter, signature=signature,
                             force_new=target.force_new, batch_size=batch_size, on_event=on_event,
                             placeholder=target.placeholder)
    items: Iterable[SourceItem] = file_items(files, loader, signature)
    pipeline = LoadPipeline(store, embedder, splitter, batch_size, on_event)
    return pipeline.run(_chain(items, web) if web is not None else items, target.name,
                        description=target.description, force_new=target.force_new,
                        total=len(files) if web is None else None, placeholder=target.placeholder)


def remove_missing(store: VectorStore, collection: str, inputs: Sequence[str], found: Expansion,
                   results: Sequence[FileResult], options: LoaderOptions,
                   allowed: PathAllowed | None = None) -> list[FileResult]:
    """After a completed load, delete the chunks the inputs no longer have, so that a re-load of a folder leaves
    exactly the folder's current content.

    The rule:

    - a stored source below a loaded *folder* (its real path, the same ``include`` / ``exclude`` rules) that the
      walk did not find now (deleted, renamed, now excluded) is removed, unless it lies in a sub-folder that could
      not be listed this time;
    - a loaded *file* (from a folder, a single path or a glob) that is skipped now (emptied, binary, unreadable, a
      loader failure) loses its old chunks, except when the store refused its new ones (they are tried again);
    - nothing else: a single-file or glob load removes no other file, folder A's load never touches folder B's
      chunks, and URLs are never removed.

    Returns:
        One "removed" FileResult per source removed, with the reason and the rows deleted.
    """
    if not hasattr(store, "sources") or not store.has_collection(collection):
        return []
    roots = [display_path(p).rstrip("/") + "/" for p in (Path(i).expanduser() for i in inputs) if p.is_dir()]
    present = {stored_source(display_path(f)) for f in found.files}
    unreadable = [f.source.rstrip("/") + "/" for f in found.skipped]
    gone_now = {stored_source(r.source): r.reason for r in results
                if r.status == "skipped" and stored_source(r.source) in present and not r.reason.startswith(REFUSED)}
    if not roots and not gone_now:
        return []  # files only, all loaded: nothing to compare (and no scan of the collection)
    removed: list[FileResult] = []
    for source in store.sources(collection):
        if source in gone_now:
            why = f"no longer loadable: {gone_now[source]}"
        else:
            root = next((r for r in roots if source.startswith(r)), None)
            if (root is None or source in present or any(source.startswith(u) for u in unreadable)
                    or not in_scope(Path(source[len(root):]), options)
                    or (allowed is not None and not allowed(Path(source)))):
                continue
            why = "no longer in the folder"
        rows = store.delete_source(collection, source)
        log.info("removed %s (%d chunks): %s", source, rows, why)
        removed.append(FileResult(source, "removed", why, chunks=rows))
    return removed


def size_notices(store: VectorStore, collection: str) -> list[str]:
    """Advice about a collection's size after a load: one line when it has outgrown Milvus Lite's exact search
    (``vectordb.capabilities.lite_size_notice``), else none."""
    engine = store.capabilities.engine
    if engine not in LITE_SLOW_AT or not store.has_collection(collection):
        return []
    notice = lite_size_notice(collection, engine, store.count(collection))
    return [notice] if notice else []


def _chain(*iterables: Iterable[SourceItem]) -> Iterator[SourceItem]:
    for it in iterables:
        yield from it
