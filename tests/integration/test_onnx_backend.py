"""The ONNX backend: local export (fp32 + int8, fused) of a sentence-transformers folder, pooled output equal to torch.

Uses a tiny randomly initialised BERT in the bundled model's folder layout, so the export takes seconds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from deepsearcher.embedding.onnx_backend import OnnxSentenceEncoder, cache_root, ensure_export
from deepsearcher.errors import ProviderError

pytestmark = pytest.mark.integration
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

TEXTS = ["Milvus Lite keeps data in a local file.", "short", "", "Another sentence, with more words than the first."]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BertConfig, BertModel

    from deepsearcher.embedding.sentence_transformers import bundled_model_path

    folder = tmp_path_factory.mktemp("tiny") / "tiny-bert"
    shutil.copytree(bundled_model_path(), folder, ignore=shutil.ignore_patterns("model.safetensors", "*.onnx"))
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    pooling = folder / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "word_embedding_dimension": 32}))
    return folder


def test_export_matches_sentence_transformers(tiny_model: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    export = ensure_export(tiny_model, int8=True, cache_dir=tmp_path)
    assert {"model.onnx", "model_int8.onnx", "tokenizer.json"} <= {p.name for p in export.iterdir()}
    assert ensure_export(tiny_model, int8=True, cache_dir=tmp_path) == export  # cached: no second export

    expected = SentenceTransformer(str(tiny_model), device="cpu").encode(TEXTS, normalize_embeddings=True)
    fp32 = OnnxSentenceEncoder(export, int8=False)
    got = fp32.encode(TEXTS, batch_size=2)  # batches of mixed lengths: padding must not leak into the mean
    assert got.shape == (4, 32) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-4
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert fp32.get_embedding_dimension() == 32 and fp32.max_seq_length == 256
    many = fp32.encode(TEXTS * 5, batch_size=64)  # above MAX_BATCH_ROWS: split into several length-sorted runs
    assert np.abs(many - np.tile(expected, (5, 1))).max() < 1e-4

    import onnx

    # onnxruntime's transformer optimizer fused the graph (Attention needs the model's own attention-mask subgraph)
    ops = {n.op_type for n in onnx.load(str(export / "model.onnx")).graph.node}
    assert {"Attention", "EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu"} <= ops
    assert "QAttention" in {n.op_type for n in onnx.load(str(export / "model_int8.onnx")).graph.node}

    int8 = OnnxSentenceEncoder(export, int8=True).encode(TEXTS)
    assert (int8 * expected).sum(axis=1).min() > 0.9  # quantised: close, not equal


def test_export_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="local model folder"):
        ensure_export("sentence-transformers/all-MiniLM-L6-v2", cache_dir=tmp_path)
    cls_model = tmp_path / "cls"
    (cls_model / "1_Pooling").mkdir(parents=True)
    (cls_model / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true, '
                                                         '"pooling_mode_mean_tokens": false}')
    with pytest.raises(ProviderError, match="mean-pooling"):
        ensure_export(cls_model, cache_dir=tmp_path)


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEEPSEARCHER_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("DEEPSEARCHER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_root() == tmp_path / "x" / "deepsearcher"


def test_the_first_export_shows_users_no_developer_warnings(tiny_model: Path, tmp_path: Path,
                                                            capfd: pytest.CaptureFixture[str],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A first run printed torch's TracerWarning, the TorchScript exporter's warnings, transformers' weight-loading
    bar and onnxruntime's "consider pre-processing" (issue #13); the export hides them, and restores what it
    changed."""
    import warnings

    import transformers.utils.logging as hf_logging

    bar_before = hf_logging.is_progress_bar_enabled()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # a user running with -W default would see every warning
        ensure_export(tiny_model, int8=True, cache_dir=tmp_path)
    said = capfd.readouterr().err + "\n".join(r.getMessage() for r in caplog.records)
    assert not seen, [str(w.message)[:80] for w in seen]
    for noise in ("TracerWarning", "consider to run pre-processing", "Loading weights", "aten::index"):
        assert noise not in said
    assert hf_logging.is_progress_bar_enabled() == bar_before
    import logging

    assert not any(type(f).__name__ == "_DropMessage" for f in logging.getLogger().filters)
