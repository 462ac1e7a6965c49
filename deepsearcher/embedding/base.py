"""Helpers shared by embedding providers (the ``Embedder`` protocol is in ``deepsearcher.protocols``)."""

from __future__ import annotations

import numpy as np


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm (zero rows stay zero). Shape preserved."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms
