"""What the default ONNX embedding backend says about an ``embedding.model`` it cannot run: a Hugging Face name (it
reads folders only: the fix is ``backend: torch``), a folder that does not exist, a file (found by a new user:
all three said "needs a local model folder" with a hint that never named ``backend: torch``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.embedding.onnx_backend import ensure_export
from deepsearcher.errors import ProviderError


@pytest.mark.parametrize("name", ["BAAI/bge-small-en-v1.5", "someorg/not-cached-model"])
def test_a_model_name_points_at_the_torch_backend(name: str, tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="is a model name with no such folder here") as error:
        ensure_export(name, cache_dir=tmp_path)
    assert "embedding.backend: torch" in (error.value.hint or "")


@pytest.mark.parametrize("where", ["/nonexistent/model", "./models/e5", "models/e5/"])
def test_a_missing_folder_is_said_missing(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProviderError, match=f"the embedding model folder '{where}' does not exist") as error:
        ensure_export(where, cache_dir=tmp_path)
    assert "fix embedding.model" in (error.value.hint or "")


def test_a_file_is_no_model_folder(tmp_path: Path) -> None:
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights")
    with pytest.raises(ProviderError, match="is a file, not a model folder"):
        ensure_export(str(model), cache_dir=tmp_path)


def test_a_model_name_in_the_hugging_face_cache_is_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.embedding.sentence_transformers import cached_model_folder

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--someorg--cached-model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    assert Path(cached_model_folder("someorg/cached-model")) == snapshot
    assert cached_model_folder("someorg/not-cached-model") == "someorg/not-cached-model"  # never downloaded
    assert cached_model_folder(str(tmp_path)) == str(tmp_path)
