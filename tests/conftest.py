"""Shared fixtures. Every test runs offline (HF_HUB_OFFLINE=1) and keeps config and data in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.pop("DEEPSEARCHER_CONFIG", None)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run each test in its own folder so a stray ./config.yaml or ./milvus.db is never the user's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEEPSEARCHER_CONFIG", raising=False)


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (the evaluation data); skipped where this checkout has no shared folder beside it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (only present in the project workspace)")
    return SHARED_DATA


@pytest.fixture
def config_file(tmp_path: Path):
    """Write a config.yaml in tmp_path; returns a function(text) -> Path."""

    def write(text: str = "") -> Path:
        path = tmp_path / "config.yaml"
        path.write_text(text or "vector_db:\n  uri: ./milvus.db\nllm: null\n", encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def bundled_embedder():
    """The real bundled all-MiniLM-L6-v2 embedder, loaded once per session."""
    from deepsearcher.embedding.sentence_transformers import SentenceTransformersEmbedder
    from deepsearcher.settings import SentenceTransformersEmbedding

    embedder = SentenceTransformersEmbedder(SentenceTransformersEmbedding())
    _ = embedder.dimension
    return embedder


@pytest.fixture
def make_app(tmp_path: Path, bundled_embedder):
    """Build a DeepSearcher on a Milvus Lite file in tmp_path with the shared real embedder."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    apps = []

    def build(overrides: dict | None = None, db: str = "milvus.db") -> DeepSearcher:
        settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / db)}, "llm": None, **(overrides or {})})
        app = DeepSearcher(settings, embedder=bundled_embedder)
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.close()
