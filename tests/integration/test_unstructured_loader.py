"""The optional unstructured loader provider: runs where unstructured and its spaCy model are installed."""

from __future__ import annotations

import pytest

from deepsearcher.errors import ProviderError
from deepsearcher.ingest.options import LoaderOptions
from tests.conftest import DATA

pytestmark = pytest.mark.integration

unstructured = pytest.importorskip("unstructured", reason="extra `unstructured` not installed")


def test_unstructured_provider_or_clear_message(make_app):
    from deepsearcher.ingest.unstructured_loader import load_with_unstructured, missing_models

    path = DATA / "milvus_docs" / "limitations.md"
    options = LoaderOptions(provider="unstructured")
    missing = missing_models()
    if missing:
        # offline without the model: a clear, actionable error instead of a 30 s download attempt
        with pytest.raises(ProviderError, match=f"spaCy model {missing}.*") as err:
            load_with_unstructured(path, str(path), options)
        assert "loader.provider: builtin" in str(err.value)
        pytest.skip(f"spaCy model {missing} is not installed here (unstructured downloads it from GitHub)")
    docs = load_with_unstructured(path, str(path), options)
    assert docs and "collection" in " ".join(d.text for d in docs).lower()
    app = make_app({"loader": {"provider": "unstructured"}})
    summary = app.load([str(path)], "unstr")
    assert len(summary.loaded) == 1 and summary.chunks_written > 0
