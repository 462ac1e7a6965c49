"""Optional loader provider on ``unstructured`` (extra ``unstructured``): ``loader.provider: unstructured``.

Measured here, unstructured 0.27 sends a telemetry request at import unless ``DO_NOT_TRACK=1`` (set before import),
downloads a spaCy model from GitHub on first use (fails offline: reported as a clear error), needs
``unstructured-inference`` (torch) for PDFs, and its ``hi_res`` strategy fetches a layout model from a hub, so only
the ``fast`` and ``auto`` strategies are offered.
"""

from __future__ import annotations

import logging
import os
from typing import Any
from pathlib import Path

from deepsearcher.errors import ProviderError, SkipSource
from deepsearcher.ingest.options import LoaderOptions
from deepsearcher.ingest.sources import file_title
from deepsearcher.types import Document

log = logging.getLogger(__name__)

#: The spaCy pipeline unstructured 0.27 loads for sentence splitting (downloaded from GitHub when missing).
SPACY_MODEL = "en_core_web_sm"


def _partition() -> Any:
    os.environ["DO_NOT_TRACK"] = "1"  # must precede the import: unstructured phones home at import time
    os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    try:
        from unstructured.partition.auto import partition
    except ModuleNotFoundError as exc:
        raise ProviderError("loader.provider is 'unstructured' but the package is not installed",
                            hint="pip install 'deepsearcher[unstructured]', or set loader.provider: builtin") from exc
    missing = missing_models()
    if missing:
        raise ProviderError(
            f"unstructured needs the spaCy model {missing} and would download it from GitHub on first use",
            hint=f"install it while online (python -m spacy download {missing}), or set loader.provider: builtin")
    return partition


def missing_models() -> str | None:
    """Name of the spaCy model unstructured needs that is not installed here, or None when all are present."""
    try:
        import spacy.util
    except ModuleNotFoundError:
        return None  # an unstructured without the spaCy dependency needs no model
    return None if spacy.util.is_package(SPACY_MODEL) else SPACY_MODEL


class UnstructuredLoader:
    """The ``unstructured`` loader provider (``loader.provider: unstructured``).

    Args:
        options: the ``loader`` settings (``unstructured_strategy``).
    """

    def __init__(self, options: LoaderOptions) -> None:
        self.options = options

    def load(self, path: Path) -> list[Document]:
        """Documents of one file, one per page (see ``Loader.load``; the pipeline normalises them)."""
        if not path.read_bytes().strip():
            raise SkipSource("empty file")
        return load_with_unstructured(path, path.resolve().as_posix(), self.options)


def load_with_unstructured(path: Path, source: str, options: LoaderOptions) -> list[Document]:
    """Partition one file with unstructured and group its elements by page.

    Returns:
        One Document per page (page numbers from element metadata) or one for unpaged formats.

    Raises:
        ProviderError: unstructured is missing, or it needs a model that is not on this machine (offline).
        SkipSource: the file type is not supported by unstructured or holds no text.
    """
    partition = _partition()
    try:
        elements = partition(filename=str(path), strategy=options.unstructured_strategy)
    except (OSError, LookupError, RuntimeError) as exc:
        text = str(exc)
        if any(word in text for word in ("spacy", "en_core_web", "nltk", "punkt", "averaged_perceptron")) or \
                "Connection" in type(exc).__name__:
            raise ProviderError(f"unstructured needs a language model that is not installed here: {text}",
                                hint="install it while online (e.g. python -m spacy download en_core_web_sm), "
                                     "or set loader.provider: builtin") from exc
        raise SkipSource(f"unstructured could not read it ({type(exc).__name__}: {exc})") from exc
    except ValueError as exc:
        raise SkipSource(f"unsupported by unstructured ({exc})") from exc
    pages: dict[int | None, list[str]] = {}
    for el in elements:
        text = getattr(el, "text", "") or ""
        if text.strip():
            page = getattr(getattr(el, "metadata", None), "page_number", None)
            pages.setdefault(page, []).append(text)
    if not pages:
        raise SkipSource("no text extracted")
    return [Document(text="\n\n".join(parts), source=source, title=file_title(path), page=page,
                     metadata={"loader": "unstructured"}) for page, parts in pages.items()]
