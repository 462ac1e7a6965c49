"""Web sources: start URLs -> the configured crawler -> SourceItems for the load pipeline.

The crawler named by ``crawler.provider`` (``builtin``, ``firecrawl``, or a plugin registered under kind "crawler")
fetches pages. Each fetched page becomes one ``SourceItem``: its source is the final URL after redirects, its version
hashes the fetched bytes with the split settings (so re-loading an unchanged site writes nothing and a changed page
replaces its chunks, as for files), and its ``load()`` hands the bytes to the file loaders, which dispatch on magic
bytes first (a PDF served under an HTML-looking URL is still a PDF). A page that failed or is not indexable is an item
whose ``load()`` raises ``SkipSource`` with the reason, so it appears in the summary as skipped.

After the pipeline ran, ``UrlItems.check`` turns a start URL that gave no document into an ``IngestError``
("0 documents fetched from URL ...: reason"). The pipeline creates a collection on its first write only, so such a
load leaves no empty collection behind.
"""

from __future__ import annotations

import logging
from collections import Counter
from functools import partial
from typing import Iterator, Sequence
from urllib.parse import urldefrag, urlsplit, urlunsplit

from deepsearcher.errors import DeepSearcherError, IngestError, SkipSource, without_hint
from deepsearcher.events import EventCallback
from deepsearcher.ingest.ids import bytes_hash
from deepsearcher.ingest.loaders import HTML_SUFFIXES, JSON_SUFFIXES, TEXT_SUFFIXES, load_bytes, sniff
from deepsearcher.ingest.sources import SourceItem
from deepsearcher.protocols import Crawler
from deepsearcher.registry import Registry
from deepsearcher.ingest.options import CrawlScope, LoaderOptions
from deepsearcher.types import Document, FetchedPage, FileResult, LoadSummary

log = logging.getLogger(__name__)

_KNOWN_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | JSON_SUFFIXES | {".pdf", ".docx", ".pptx", ".xlsx", ".epub"}


def url_items(urls: Sequence[str], options: CrawlScope, loader: LoaderOptions, signature: str,
              on_event: EventCallback, registry: Registry, *, allow_private_urls: bool | None = None,
              crawler: Crawler | None = None) -> UrlItems:
    """SourceItems for http(s) start URLs, crawled by the configured provider.

    The provider is built and the URLs are validated here, before the pipeline writes anything; fetching starts when
    the result is iterated.

    Args:
        urls: start URLs as the user gave them.
        options: the ``crawler`` section, paths resolved (its ``provider`` selects the crawler).
        loader: the ``loader`` section (drives the format loaders).
        signature: split settings mixed into every version hash.
        on_event: receives ``CrawlQueued`` / ``CrawlFetched`` events.
        registry: where the crawler provider is looked up.
        allow_private_urls: the caller's address rule (``crawler_options``); None = the crawler setting.
        crawler: a ready crawler instead of the configured one (a query's page reader replaying the pages it read;
            it was built with the caller's address rule already).

    Raises:
        IngestError: a start URL is malformed.
        ConfigError: the crawler provider is unknown or its options are invalid.
        ProviderError: the provider's optional dependency is not installed.
    """
    by_key: dict[str, str] = {}
    bad: list[str] = []
    for url in urls:
        try:
            key = url_key(normalize_url(url))
        except ValueError:
            bad.append(url)
            continue
        by_key.setdefault(key, url)  # "https://x/" and "https://x/#top" are one start URL
    if bad:
        raise IngestError("not a valid http(s) URL: " + ", ".join(bad),
                          hint="give a full address such as https://example.com/docs/; nothing was written")
    starts = list(by_key.values())
    if crawler is None:
        crawler = registry.create("crawler", crawler_options(options, allow_private_urls))
    return UrlItems(crawler, starts, loader, signature, on_event)


def crawler_options(options: CrawlScope, allow_private_urls: bool | None) -> CrawlScope:
    """The crawler's options with a caller's address rule applied.

    The HTTP server passes its resolved ``server.allow_private_urls`` so that loads it runs obey it whatever the
    crawler section says, except that ``crawler.allow_private_urls: false`` always wins (stricter is kept). Every
    crawler provider receives the rule as its ``allow_private_urls`` option (``CrawlScope``) and must honour it.
    """
    if allow_private_urls is None or options.allow_private_urls is False:
        return options
    return options.model_copy(update={"allow_private_urls": allow_private_urls})


class UrlItems:
    """Iterable of SourceItems over the pages of some start URLs; remembers which page came from which start URL.

    Args:
        crawler: the crawler provider.
        start_urls: distinct start URLs.
        loader: settings for the format loaders.
        signature: split settings mixed into every version hash.
        on_event: progress callback passed to the crawler.
    """

    def __init__(self, crawler: Crawler, start_urls: Sequence[str], loader: LoaderOptions, signature: str,
                 on_event: EventCallback) -> None:
        self.crawler = crawler
        self.start_urls = list(start_urls)
        self.loader = loader
        self.signature = signature
        self.on_event = on_event
        self.sources: dict[str, list[str]] = {u: [] for u in self.start_urls}
        self.error: DeepSearcherError | None = None

    def __iter__(self) -> Iterator[SourceItem]:
        yielded: set[str] = set()
        try:
            for page in self.crawler.crawl(self.start_urls, self.on_event):
                self.sources.setdefault(page.start_url, []).append(page.url)
                if page.duplicate or page.url in yielded:  # two URLs led to one page: load it once
                    continue
                yielded.add(page.url)
                body = page.content if not page.error else page.error.encode("utf-8")
                yield SourceItem(source=page.url, version=bytes_hash(body, extra=self.signature),
                                 load=partial(page_documents, page, self.loader))
        except DeepSearcherError as exc:
            # the provider failed as a whole: stop crawling, let the pipeline finish what it has, report in check()
            log.debug("crawler failed", exc_info=True)
            self.error = exc

    def check(self, summary: LoadSummary) -> None:
        """Raise when a start URL gave no document (loaded or unchanged), naming the reasons.

        Raises:
            IngestError: "0 documents fetched from URL <url>: <reason>", one line per such start URL.
        """
        by_source = {f.source: f for f in summary.files}
        lines: list[str] = []
        for start in self.start_urls:
            results = [by_source[s] for s in self.sources.get(start, []) if s in by_source]
            if any(r.status in {"loaded", "unchanged"} for r in results):
                continue
            lines.append(f"0 documents fetched from URL {start}: {self._reason(results)}")
        if lines:
            hint = self.error.hint if self.error and self.error.hint else "see docs/crawling.md for crawler settings"
            if summary.loaded:
                hint += (f"; the other inputs were loaded ({len(summary.loaded)} loaded, "
                         f"{summary.chunks_written} chunks written to {summary.collection})")
            raise IngestError("\n".join(lines), hint=hint)
        if self.error is not None:
            raise self.error

    def _reason(self, results: list[FileResult]) -> str:
        if not results:
            return without_hint(self.error) if self.error else "the crawler returned no pages"
        reasons = Counter(r.reason or r.status for r in results)
        if len(results) == 1:
            return results[0].reason
        listed = "; ".join(f"{reason} ({n})" for reason, n in reasons.most_common(5))
        return f"{len(results)} pages, none loaded: {listed}"


def page_documents(page: FetchedPage, loader: LoaderOptions) -> list[Document]:
    """Documents of one fetched page, by magic bytes, then content type, then the URL's suffix.

    Raises:
        SkipSource: the fetch failed, the body is empty or binary, or no text was extracted.
    """
    if page.error:
        raise SkipSource(page.error)
    if not page.content.strip():
        raise SkipSource("empty response")
    path = urlsplit(page.url).path
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    # the suffix only helps when the server sent no content type (and an unknown one would mislead the sniffer)
    suffix = suffix if suffix in _KNOWN_SUFFIXES and not page.content_type else ""
    kind = sniff(page.content, suffix=suffix, content_type=page.content_type)
    if kind == "other":
        media = (page.content_type or "").split(";")[0].strip() or "no content type"
        raise SkipSource(f"binary content ({media}) is not indexed")
    title = page.title or path.rstrip("/").rsplit("/", 1)[-1] or urlsplit(page.url).hostname or page.url
    return load_bytes(page.content, page.url, suffix=suffix, content_type=page.content_type, title=title,
                      options=loader, charset=page.charset)


def normalize_url(url: str) -> str:
    """The form of a URL that is fetched, so one page is fetched once per run.

    courlan's ``normalize_url``: scheme and host lower-cased, default port dropped, query parameters sorted and
    tracking ones (``utm_*``, ...) removed; plus: fragment removed, ``/`` for an empty path.

    Raises:
        ValueError: not an http(s) URL with a host (white space in the host, a malformed port).
    """
    from courlan import normalize_url as courlan_normalize

    clean, _ = urldefrag(url.strip())
    parts = urlsplit(clean)
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname or any(c.isspace() for c in parts.netloc):
        raise ValueError(f"not an http(s) URL: {url}")
    _ = parts.port  # raises ValueError on a malformed port
    out = urlsplit(courlan_normalize(clean, strict=False, trailing_slash=True))
    return urlunsplit(out._replace(path=out.path or "/", fragment=""))


def url_key(url: str) -> str:
    """Identity of a page within a run: the normalised URL without a trailing slash (``/docs/`` = ``/docs``)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(parts._replace(path=path))
