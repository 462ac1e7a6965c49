"""ONNX Runtime backend for a local sentence-transformers model (BERT-style encoder + mean pooling).

The ONNX file is exported locally from the model's own weights (torch.onnx, TorchScript exporter) on first use and
cached. The export is then rewritten by onnxruntime's transformer graph optimizer
(``onnxruntime.transformers.optimizer.optimize_model``, model type ``bert``), which fuses each layer's attention
into one ``Attention`` op, the embeddings + LayerNorm into ``EmbedLayerNormalization``, residual Add + LayerNorm into
``SkipLayerNormalization`` and bias + GELU into ``BiasGelu``. With ``int8`` the fused graph is then dynamically
quantised (onnxruntime.quantization: int8 weights, activations quantised on the fly; ``Attention`` becomes
``QAttention``), which cuts CPU time per chunk. Nothing is downloaded. We export ourselves rather than through
sentence-transformers' ``backend="onnx"`` because that path needs optimum-onnx, which pins transformers < 4.58.

Export needs torch (already a core dependency) and the ``onnx`` package (extra ``onnx``); running an exported model
needs only onnxruntime and tokenizers. Pooling is mean over the attention mask, as all-MiniLM-L6-v2's
``1_Pooling/config.json`` specifies; vectors are L2-normalised.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from deepsearcher.errors import ProviderError

log = logging.getLogger(__name__)
# onnxruntime >= 1.29 sends usage telemetry on Linux/macOS too (microsoft/onnxruntime#27379: a 1DS uploader, seen here
# resolving mobile.events.data.microsoft.com ~9 s after the first session); ORT_DISABLE_TELEMETRY=1, set before the
# first session, is its documented full opt-out. A local-first tool keeps it off unless the user sets the variable.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

EXPORT_VERSION = 3  # bump when the export recipe changes, so caches are rebuilt
#: texts per forward pass. One: the int8 model quantises activations with one scale per batch, so a text's vector
#: depended on the texts (and padding) it was batched with (cosine to the same text alone: mean 0.9935, min 0.9825);
#: one text per run makes a chunk's vector the one its query-path twin gets, at the same chunks/s (35.5 vs 35.3) and
#: Recall@5 (0.603 vs 0.597) on 2Wiki (docs/benchmarks.md, "ONNX int8: batch-dependent vectors"). Runs still go in
#: parallel, one per CPU.
MAX_BATCH_ROWS = 1
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


def _not_a_folder(model_dir: str, src: Path) -> ProviderError:
    """Why ``model_dir`` cannot be exported: a Hugging Face name (the ONNX backend reads folders only), a missing
    folder, or a file."""
    by_name = "set embedding.backend: torch to load a model by name (offline only when it is in the Hugging Face cache)"
    if src.exists():
        return ProviderError(f"the embedding model {model_dir!r} is a file, not a model folder",
                             hint="point embedding.model at the sentence-transformers folder that holds it")
    if re.fullmatch(r"[\w.-]+/[\w.-]+", model_dir) and not model_dir.startswith("."):
        return ProviderError(f"the ONNX backend (embedding.backend: onnx, the default) runs a local model folder, "
                             f"and {model_dir!r} is a model name with no such folder here",
                             hint=f"{by_name}, or point embedding.model at a downloaded folder")
    return ProviderError(f"the embedding model folder {model_dir!r} does not exist",
                         hint=f"fix embedding.model (a relative path is relative to the config file's folder), or "
                              f"{by_name}")


def _pooling_is_mean(model_dir: Path) -> bool:
    cfg = model_dir / "1_Pooling" / "config.json"
    if not cfg.is_file():
        return True
    data = json.loads(cfg.read_text(encoding="utf-8"))
    return bool(data.get("pooling_mode_mean_tokens", True)) and not any(
        data.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_lasttoken"))


def ensure_export(model_dir: str | Path, *, int8: bool = True, cache_dir: Path | None = None) -> Path:
    """Export (once) a local sentence-transformers folder to ONNX, quantised to int8 if asked; return its folder.

    The folder holds ``model.onnx`` (fp32, fused, pooled output ``sentence_embedding``), ``model_int8.onnx`` when
    ``int8``, and the tokenizer files. Shapes: inputs ``input_ids``/``attention_mask``/``token_type_ids`` int64
    (batch, seq), padded on the right (the fused attention reads the mask as per-row lengths); output (batch, dim),
    not normalised. Uses onnxruntime contrib ops, so the files run on onnxruntime only.

    Raises:
        ProviderError: not a local folder, pooling other than mean, or the ``onnx`` package is missing.
    """
    src = Path(model_dir)
    if not src.is_dir():
        raise _not_a_folder(str(model_dir), src)
    if not _pooling_is_mean(src):
        raise ProviderError(f"{src}: the ONNX backend supports mean-pooling models only", hint="use backend: torch")
    target = (cache_dir or cache_root() / "onnx") / f"{src.name}-{_model_fingerprint(src)}"
    fp32, q8 = target / "model.onnx", target / "model_int8.onnx"
    if fp32.is_file() and (q8.is_file() or not int8):
        return target
    try:
        import onnx  # torch's exporter, the graph optimizer and the quantiser all need it
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ModuleNotFoundError as exc:
        raise ProviderError("exporting the embedding model to ONNX needs the onnx package",
                            hint="pip install 'deepsearcher[onnx]' (or set embedding.backend: torch)") from exc
    target.mkdir(parents=True, exist_ok=True)
    with _quiet_export():
        if not fp32.is_file():
            _export_fp32(src, fp32)
        if int8 and not q8.is_file():
            tmp = target / "model_int8.onnx.tmp"
            # per-channel weights keep cosine to fp32 at ~0.99 (per-tensor: ~0.95); reduce_range avoids the u8s8
            # saturation of AVX2 CPUs without VNNI; the embedding Gather stays fp32 (quantising it costs accuracy
            # for nothing). Shape inference cannot type contrib-op outputs, hence DefaultTensorType.
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                             op_types_to_quantize=["MatMul", "Attention"],
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            tmp.replace(q8)
    for name in TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, target / name)
    log.info("exported %s to ONNX in %s", src, target)
    return target


class _DropMessage(logging.Filter):
    """Drops log records whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


@contextlib.contextmanager
def _quiet_export() -> Iterator[None]:
    """Hide what the one-time export prints for model developers, not users (issue #13: a first run showed it):
    torch's ``TracerWarning`` and the TorchScript exporter's warnings and deprecation notices, transformers'
    weight-loading progress bar, and onnxruntime's "Please consider to run pre-processing before quantization" (that
    pre-processing is shape inference plus graph optimisation, which the transformer optimizer already did here).
    Our own warnings (attention not fused) go through ``logging`` and still show."""
    import transformers.utils.logging as hf_logging

    bar_was_on = hf_logging.is_progress_bar_enabled()
    quantiser_notice = _DropMessage("Please consider to run pre-processing")
    root = logging.getLogger()  # onnxruntime.quantization logs through the root logger
    root.addFilter(quantiser_notice)
    hf_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.removeFilter(quantiser_notice)
        if bar_was_on:
            hf_logging.enable_progress_bar()


def _export_fp32(src: Path, dest: Path) -> None:
    import torch
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel, AutoTokenizer

    # eager attention traces into a graph whose batch and sequence axes stay dynamic (the SDPA mask path does not)
    model = AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(src))

    class Pooled(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            # the model's own forward, mask included: the optimizer's Attention fusion matches the mask subgraph
            # transformers builds (a hand-made additive mask next to the scaling Mul defeats it)
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    sample = tokenizer(["an example sentence", "another, longer example sentence here"], padding=True,
                       return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    raw, tmp = dest.with_suffix(".raw.tmp"), dest.with_suffix(".onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(Pooled(model), tuple(sample[n] for n in names), str(raw), input_names=names,
                          output_names=["sentence_embedding"], opset_version=17, dynamo=False,
                          dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in names},
                                        "sentence_embedding": {0: "batch"}})
    # opt_level 0: the optimizer's Python fusions only, no hardware-specific onnxruntime rewrites baked into the file
    fused = optimize_model(str(raw), model_type="bert", num_heads=model.config.num_attention_heads,
                           hidden_size=model.config.hidden_size, opt_level=0)
    stats = {op: n for op, n in fused.get_fused_operator_statistics().items() if n}
    if stats.get("Attention", 0) != model.config.num_hidden_layers:
        log.warning("ONNX export: attention not fused in every layer (%s); the model works, only slower", stats)
    log.info("ONNX export fusions (onnxruntime transformers optimizer): %s", stats)
    fused.save_model_to_file(str(tmp))
    raw.unlink()
    tmp.replace(dest)


class OnnxSentenceEncoder:
    """A tiny stand-in for ``SentenceTransformer`` running an exported model with onnxruntime.

    CPU use: one single-threaded session run per batch, with as many batches in flight as there are CPUs
    (``OMP_NUM_THREADS`` if set, the variable torch honours). Whole batches in parallel beat onnxruntime's intra-op
    threads on small CPUs: no per-operator hand-off between threads, and nothing waits for a busy core.

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
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        path = export_dir / ("model_int8.onnx" if int8 else "model.onnx")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        threads = os.environ.get("OMP_NUM_THREADS", "")
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        workers = int(threads) if threads.isdigit() and int(threads) > 0 else cpus
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="onnx-embed") if workers > 1 else None
        self._dim: int | None = None

    @property
    def tokenizer(self) -> Any:
        """The model's Rust ``tokenizers.Tokenizer`` (the splitter counts tokens with a private copy of it).

        Not the Hugging Face ``AutoTokenizer``: loading that imports transformers and torch, ~5 s per process.
        """
        return self._fast

    def get_embedding_dimension(self) -> int:
        if self._dim is None:
            self._dim = int(self.encode(["dimension probe"]).shape[1])
        return self._dim

    def encode(self, texts: Sequence[str], batch_size: int = 64, *, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Embed texts: float32 (len(texts), dim), L2-normalised rows. Batches are formed by length (less padding).

        The keyword arguments mirror ``SentenceTransformer.encode``; output is always a normalised numpy array.
        ``batch_size`` is capped at ``MAX_BATCH_ROWS`` (1: a text's vector does not depend on its neighbours).
        """
        step = max(1, min(batch_size, MAX_BATCH_ROWS))
        encodings = self._fast.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        batches = [order[start:start + step] for start in range(0, len(order), step)]
        if not batches:
            return np.zeros((0, self.get_embedding_dimension()), dtype=np.float32)
        run = functools.partial(self._run, encodings)
        pooled = list(self._pool.map(run, batches) if self._pool and len(batches) > 1 else map(run, batches))
        out = np.zeros((len(texts), pooled[0].shape[1]), dtype=np.float32)
        for idx, vectors in zip(batches, pooled):
            out[idx] = vectors
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def _run(self, encodings: list, idx: list[int]) -> np.ndarray:
        """Pooled (not normalised) vectors of one batch, padded on the right to its longest text."""
        width = max(len(encodings[i].ids) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, i in enumerate(idx):
            enc = encodings[i]
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
        return self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
