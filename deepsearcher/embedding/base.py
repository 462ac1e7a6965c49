"""The ``Embedder`` protocol every embedding provider implements."""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (the collection metric is COSINE).

    Attributes:
        model_name: identifier recorded in each collection's properties; a collection refuses another one.
        dimension: vector length d.
        max_tokens: longest input (in the model's tokens) embedded without truncation, or None when unknown.
    """

    model_name: str

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int | None: ...

    def tokenizer(self) -> Any | None:
        """A Hugging Face tokenizer matching the model, or None (the splitter then counts characters / 4)."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed chunks. Returns float32 array of shape (len(texts), dimension), rows L2-normalised."""

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query. Returns float32 array of shape (dimension,), L2-normalised."""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm (zero rows stay zero). Shape preserved."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms
