"""ONNX Runtime backend for a local sentence-transformers model (BERT-style encoder + mean pooling).

The ONNX file is exported locally from the model's own weights (torch.onnx, TorchScript exporter) on first use and
cached; with ``int8`` it is then dynamically quantised (onnxruntime.quantization: int8 weights, activations quantised
on the fly), which cuts CPU time per chunk. Nothing is downloaded. We export ourselves rather than through
sentence-transformers' ``backend="onnx"`` because that path needs optimum-onnx, which pins transformers < 4.58.

Export needs torch (already a core dependency) and the ``onnx`` package (extra ``onnx``); running an exported model
needs only onnxruntime and tokenizers. Pooling is mean over the attention mask, as all-MiniLM-L6-v2's
``1_Pooling/config.json`` specifies; vectors are L2-normalised.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from deepsearcher.errors import ProviderError

log = logging.getLogger(__name__)

EXPORT_VERSION = 2  # bump when the export recipe changes, so caches are rebuilt
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json",
                   "sentence_bert_config.json", "modules.json", "config_sentence_transformers.json")


def cache_root() -> Path:
    """``$DEEPSEARCHER_CACHE`` or ``$XDG_CACHE_HOME/deepsearcher`` or ``~/.cache/deepsearcher``."""
    env = os.environ.get("DEEPSEARCHER_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "deepsearcher"


def _model_fingerprint(model_dir: Path) -> str:
    h = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        path = model_dir / name
        if path.is_file():
            h.update(name.encode())
            h.update(str(path.stat().st_size).encode())
            with path.open("rb") as fh:
                h.update(fh.read(1 << 20))  # the first MiB and the size identify the weights well enough
    return h.hexdigest()[:16]


def _pooling_is_mean(model_dir: Path) -> bool:
    cfg = model_dir / "1_Pooling" / "config.json"
    if not cfg.is_file():
        return True
    data = json.loads(cfg.read_text(encoding="utf-8"))
    return bool(data.get("pooling_mode_mean_tokens", True)) and not any(
        data.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_lasttoken"))


def ensure_export(model_dir: str | Path, *, int8: bool = True, cache_dir: Path | None = None) -> Path:
    """Export (once) a local sentence-transformers folder to ONNX, quantised to int8 if asked; return its folder.

    The folder holds ``model.onnx`` (fp32, pooled output ``sentence_embedding``), ``model_int8.onnx`` when ``int8``,
    and the tokenizer files. Shapes: inputs ``input_ids``/``attention_mask``/``token_type_ids`` int64 (batch, seq);
    output (batch, dim), not normalised.

    Raises:
        ProviderError: not a local folder, pooling other than mean, or the ``onnx`` package is missing.
    """
    src = Path(model_dir)
    if not src.is_dir():
        raise ProviderError(f"the ONNX backend needs a local model folder, got {model_dir!r}",
                            hint="use the bundled model or a local sentence-transformers folder")
    if not _pooling_is_mean(src):
        raise ProviderError(f"{src}: the ONNX backend supports mean-pooling models only", hint="use backend: torch")
    target = (cache_dir or cache_root() / "onnx") / f"{src.name}-{_model_fingerprint(src)}"
    fp32, q8 = target / "model.onnx", target / "model_int8.onnx"
    if fp32.is_file() and (q8.is_file() or not int8):
        return target
    try:
        import onnx  # noqa: F401  (torch's exporter and the quantiser both need it)
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ModuleNotFoundError as exc:
        raise ProviderError("exporting the embedding model to ONNX needs the onnx package",
                            hint="pip install 'deepsearcher[onnx]' (or set embedding.backend: torch)") from exc
    target.mkdir(parents=True, exist_ok=True)
    if not fp32.is_file():
        _export_fp32(src, fp32)
    if int8 and not q8.is_file():
        tmp = target / "model_int8.onnx.tmp"
        # per-channel weights keep cosine to fp32 at ~0.99 (per-tensor: ~0.95); reduce_range avoids the u8s8
        # saturation of AVX2 CPUs without VNNI; MatMul only: quantising the embedding Gather costs accuracy for nothing
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                         op_types_to_quantize=["MatMul"])
        tmp.replace(q8)
    for name in TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, target / name)
    log.info("exported %s to ONNX in %s", src, target)
    return target


def _export_fp32(src: Path, dest: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    # eager attention traces into a graph whose batch and sequence axes stay dynamic (the SDPA mask path does not)
    model = AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(src))

    class Pooled(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            additive = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
            hidden = self.encoder.encoder(hidden, attention_mask=additive).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    sample = tokenizer(["an example sentence", "another, longer example sentence here"], padding=True,
                       return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    tmp = dest.with_suffix(".onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(Pooled(model), tuple(sample[n] for n in names), str(tmp), input_names=names,
                          output_names=["sentence_embedding"], opset_version=17, dynamo=False,
                          dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in names},
                                        "sentence_embedding": {0: "batch"}})
    tmp.replace(dest)


class OnnxSentenceEncoder:
    """A tiny stand-in for ``SentenceTransformer`` running an exported model with onnxruntime.

    Args:
        export_dir: folder made by ``ensure_export``.
        int8: run ``model_int8.onnx`` instead of ``model.onnx``.
        max_seq_length: word pieces per text (longer texts are truncated, as sentence-transformers does).
    """

    def __init__(self, export_dir: Path, *, int8: bool = True, max_seq_length: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.export_dir = export_dir
        cfg = export_dir / "sentence_bert_config.json"
        seq = json.loads(cfg.read_text(encoding="utf-8")).get("max_seq_length") if cfg.is_file() else None
        self.max_seq_length = int(max_seq_length or seq or 512)
        self._fast = Tokenizer.from_file(str(export_dir / "tokenizer.json"))
        self._fast.enable_truncation(self.max_seq_length)
        self._fast.no_padding()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads = os.environ.get("OMP_NUM_THREADS", "")
        if threads.isdigit():  # honour the variable torch honours, so both backends use the same CPU share
            options.intra_op_num_threads = int(threads)
        path = export_dir / ("model_int8.onnx" if int8 else "model.onnx")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._dim: int | None = None
        self._hf_tokenizer: Any = None

    @property
    def tokenizer(self) -> Any:
        """The Hugging Face tokenizer (for the splitter), loaded on first use."""
        if self._hf_tokenizer is None:
            from transformers import AutoTokenizer

            self._hf_tokenizer = AutoTokenizer.from_pretrained(str(self.export_dir))
        return self._hf_tokenizer

    def get_embedding_dimension(self) -> int:
        if self._dim is None:
            self._dim = int(self.encode(["dimension probe"]).shape[1])
        return self._dim

    def encode(self, texts: Sequence[str], batch_size: int = 64, *, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Embed texts: float32 (len(texts), dim), L2-normalised rows. Batches are formed by length (less padding).

        The keyword arguments mirror ``SentenceTransformer.encode``; output is always a normalised numpy array.
        """
        encodings = self._fast.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out: np.ndarray | None = None
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, i in enumerate(idx):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
            pooled = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            if out is None:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
        if out is None:
            return np.zeros((0, self.get_embedding_dimension()), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
