"""Embedding providers: text -> L2-normalised float32 vectors."""

from deepsearcher.embedding.base import Embedder

__all__ = ["Embedder"]
