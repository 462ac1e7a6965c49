"""docs/configuration.md's reference is generated from the settings models; every option is described (#10)."""

from __future__ import annotations

from deepsearcher.cli import config_docs
from deepsearcher.registry import registry
from deepsearcher.settings import IngestSettings, QuerySettings, ServerSettings, Settings
from tests.conftest import REPO


def test_configuration_md_matches_the_settings_models() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert config_docs.generated_part(text) == config_docs.reference(), \
        "regenerate: python -m deepsearcher.cli.config_docs"


def test_every_option_of_every_built_in_provider_and_section_is_described() -> None:
    models = [IngestSettings, QuerySettings, ServerSettings, Settings]
    models += [p.options_model() for p in registry.providers() if p.options_model() is not None]  # type: ignore
    missing = [f"{model.__name__}.{row['name']}" for model in models for row in config_docs.option_rows(model)
               if not row["description"]]
    assert not missing, f"fields without a description: {missing}"
