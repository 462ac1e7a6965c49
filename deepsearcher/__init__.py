"""deepsearcher: local-first agentic RAG over your own documents, with cited reports.

Public API::

    from deepsearcher import DeepSearcher, load_settings
    app = DeepSearcher(load_settings("config.yaml"))
    app.load(["./docs"], collection="docs", description="Our product manuals")
    hits = app.retrieve("How do I rotate keys?")

Providers implement the protocols in ``deepsearcher.protocols`` and register in ``deepsearcher.registry``; progress
events are the dataclasses of ``deepsearcher.events``; test fakes are in ``deepsearcher.testing``.
"""

from deepsearcher.app import DeepSearcher
from deepsearcher.errors import (
    CollectionError,
    ConfigError,
    DeepSearcherError,
    IngestError,
    LLMOutputError,
    ProviderError,
    QuestionError,
)
from deepsearcher.events import Event
from deepsearcher.settings import Settings, load_settings
from deepsearcher.types import Chunk, CollectionInfo, Document, FileResult, Hit, LoadSummary, Report, Source, Usage

__all__ = [
    "DeepSearcher", "Settings", "load_settings", "DeepSearcherError", "ConfigError", "ProviderError",
    "LLMOutputError", "CollectionError", "IngestError", "QuestionError", "Chunk", "CollectionInfo", "Document", "Event",
    "FileResult", "Hit", "LoadSummary", "Usage", "Report", "Source",
]
