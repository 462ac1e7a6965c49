"""Shared fixtures. Every test runs offline (HF_HUB_OFFLINE=1) and keeps config and data in tmp_path."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.pop("DEEPSEARCHER_CONFIG", None)
# A suite started in the background of a script (`cmd &` without job control) has SIGINT ignored, and a child process
# inherits an ignored signal through exec: its Python then installs no Ctrl-C handler, so the tests that press Ctrl-C
# on a CLI child saw it finish (exit 0) or wait forever at its pause point. Children get the default back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
#: the evaluation data: ``$DEEPSEARCHER_SHARED_DATA``, else ``../shared/data`` beside the checkout
SHARED_DATA = Path(os.environ.get("DEEPSEARCHER_SHARED_DATA") or REPO.parent / "shared" / "data")


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
    from deepsearcher.embedding.options import SentenceTransformersOptions

    embedder = SentenceTransformersEmbedder(SentenceTransformersOptions())
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


def make_deep(root: Path, levels: int) -> None:
    """``root/top.md`` and ``root/d/d/.../d/bottom.md`` (``levels`` folders), made with relative names so that
    paths longer than PATH_MAX can exist."""
    root.mkdir()
    (root / "top.md").write_text("Top file: Milvus Lite stores vectors in one local file.")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        Path("bottom.md").write_text("Bottom file: Milvus Lite runs inside a Python process.")
    finally:
        os.chdir(cwd)


def remove_deep(root: Path) -> None:
    """Empty what ``make_deep`` made, bottom-up without recursion (shutil.rmtree, and so pytest's tmp_path
    clean-up, recurses once per level and fails past ~1,000)."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        depth = 0
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        for name in os.listdir("."):
            os.unlink(name)
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(cwd)


@pytest.fixture
def deep_tree(tmp_path: Path):
    """``deep_tree(name, levels) -> root``: a ``make_deep`` tree in tmp_path, emptied after the test."""
    made: list[Path] = []

    def make(name: str, levels: int) -> Path:
        make_deep(tmp_path / name, levels)
        made.append(tmp_path / name)
        return tmp_path / name

    yield make
    for root in made:
        remove_deep(root)
