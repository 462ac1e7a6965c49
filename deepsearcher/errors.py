"""Error hierarchy: every failure the library raises carries a message that says what to do.

The CLI (and the HTTP server) turn these into one-line messages; ``--debug`` shows the traceback.
Pattern after simonw/llm's ``ModelError`` and paper-qa's retryable errors.
"""

from __future__ import annotations


class DeepSearcherError(Exception):
    """Base class of every error deepsearcher raises on purpose.

    Attributes:
        hint: optional text telling the user how to fix the problem.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:  # the CLI prints str(error)
        base = super().__str__()
        return f"{base}\n  hint: {self.hint}" if self.hint else base


def first_line(error: BaseException | str) -> str:
    """The first line of an error's message: the message without its hint (``DeepSearcherError.__str__`` puts the
    hint on a line of its own) or a traceback-like tail, for a one-line event field or note."""
    return str(error).split("\n")[0]


def without_hint(error: BaseException) -> str:
    """An error's message without its hint (which ``DeepSearcherError.__str__`` appends), for a text that shows the
    hint apart or not at all."""
    return str(error.args[0]) if error.args else str(error)


class ConfigError(DeepSearcherError):
    """The configuration file or an option is invalid (names the key and the file)."""


class ProviderError(DeepSearcherError):
    """A provider (LLM, embedder, vector DB, crawler) is missing, unreachable or refused the call."""


class LLMOutputError(DeepSearcherError):
    """The LLM's reply could not be parsed or validated against the step's schema.

    Attributes:
        retryable: True when asking the model again (showing it the error) may succeed.
        raw: the reply text that failed.
    """

    def __init__(self, message: str, *, raw: str = "", retryable: bool = True, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.raw = raw
        self.retryable = retryable


class CollectionError(DeepSearcherError):
    """A collection is missing, has an invalid name, or was built with another embedding model."""


class IngestError(DeepSearcherError):
    """Loading documents failed as a whole (a missing path, zero documents from a URL, ...)."""


class StoreInUseError(ProviderError):
    """The Milvus Lite file is opened by another process."""


class DiskFullError(ProviderError):
    """The disk under the store is full (ENOSPC, or a Milvus server saying it has no space): a load stops at once,
    keeping what is stored, instead of blaming each file."""


class ContextWindowError(ProviderError):
    """The prompt did not fit the model's context window (callers may retry with less context).

    Attributes:
        limit: the window in tokens when the server named it ("maximum context length is 2048 tokens"), else None.
    """

    def __init__(self, message: str, *, hint: str | None = None, limit: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.limit = limit


class QuestionError(DeepSearcherError):
    """The question cannot be researched as given: empty, or longer than the limit (refused before any LLM call)."""


class SkipSource(Exception):
    """One source (file or fetched page) holds nothing to index; ``str(exc)`` is the reason shown to the user.

    Raised by loaders; the load pipeline records the source as skipped and goes on (never a ``DeepSearcherError``:
    it is not a failure of the load).
    """


class ExportError(DeepSearcherError):
    """A report cannot be written in the format asked for (unknown format, or PDF without its library)."""
