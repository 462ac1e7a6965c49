"""Web search options models and result cleaning (no network)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from deepsearcher.websearch import PROVIDERS, BraveOptions, JinaOptions, SearxngOptions, TavilyOptions
from deepsearcher.websearch.results import Hit, clean_text, finish

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("model", [SearxngOptions, BraveOptions, TavilyOptions, JinaOptions])
def test_a_literal_key_is_refused_with_the_way_out(model) -> None:
    with pytest.raises(ValidationError) as info:
        model(api_key="tvly-secret")
    assert "put the key in an environment variable" in str(info.value) and "api_key_env" in str(info.value)


@pytest.mark.parametrize("model", [SearxngOptions, BraveOptions, TavilyOptions, JinaOptions])
def test_unknown_keys_and_non_http_base_urls_are_errors(model) -> None:
    with pytest.raises(ValidationError, match="max_result"):
        model(max_result=5)
    with pytest.raises(ValidationError, match="must start with http"):
        model(base_url="api.example.org")


def test_every_field_is_described_and_names_match_the_registry() -> None:
    from deepsearcher.registry import registry
    from deepsearcher.settings import ProviderOptions

    assert registry.names("web_search") == list(PROVIDERS)
    for name, (target, model, description) in PROVIDERS.items():
        assert model.model_fields["provider"].default == name and issubclass(model, ProviderOptions)
        assert target.startswith(f"deepsearcher.websearch.{name}:") and description
        assert registry.get("web_search", name).options_model() is model
        undocumented = [f for f, info in model.model_fields.items() if f != "provider" and not info.description]
        assert undocumented == [], (name, undocumented)


def test_defaults_are_the_documented_endpoints_and_variables() -> None:
    assert (BraveOptions().base_url, BraveOptions().api_key_env) == ("https://api.search.brave.com/res/v1",
                                                                      "BRAVE_SEARCH_API_KEY")
    assert (TavilyOptions().base_url, TavilyOptions().api_key_env) == ("https://api.tavily.com", "TAVILY_API_KEY")
    assert (JinaOptions().base_url, JinaOptions().api_key_env) == ("https://s.jina.ai", "JINA_API_KEY")
    assert SearxngOptions().api_key_env is None
    assert SearxngOptions(base_url="http://search.lan:8080/").base_url == "http://search.lan:8080"


def test_importing_the_package_does_not_import_httpx() -> None:
    """Config validation imports the options models; the HTTP stack loads only when a provider is built."""
    code = "import sys, deepsearcher.websearch; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("raw, clean", [
    ("The <strong>mallard</strong>s &amp; teals", "The mallards & teals"),
    ("  two\n\tlines  ", "two lines"),
    ("a < b and c > d", "a < b and c > d"),
    ("https://example.org/looks-like-a-url", "https://example.org/looks-like-a-url"),
    ("", ""),
])
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_finish_keeps_the_first_of_each_page_and_only_web_urls() -> None:
    hits = [Hit("A", "https://Example.org/a?utm_source=x#top", "one"), Hit("A again", "https://example.org/a/", "dup"),
            Hit("Mail", "mailto:someone@example.org", "no"), Hit("B", "http://example.org/b", "two", " 2024-01-01 "),
            Hit("C", "https://example.org/c", "three")]
    results = finish(hits, "brave", max_results=2)
    assert [(r.title, r.url, r.rank, r.published) for r in results] == [
        ("A", "https://example.org/a", 1, None), ("B", "http://example.org/b", 2, "2024-01-01")]


@pytest.mark.parametrize("provider, options, message", [
    ("brave", {"country": "Germany"}, "country must be a 2-letter country code (US, DE) or ALL, got 'Germany'"),
    ("brave", {"freshness": "last week"}, "freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD"),
    ("jina", {"gl": "deu"}, "must be a 2-letter code (us, de), got 'deu'"),
    ("brave", {"search_lang": "ja"}, "search_lang 'ja' is not a language Brave accepts (it answers 422); write jp"),
    ("brave", {"search_lang": "zh"}, "write zh-hans or zh-hant"),
    ("brave", {"search_lang": "klingon"}, "accepted: ar, eu, bn"),
    ("searxng", {"language": "English"}, "language must be all, auto or a locale such as en, de-CH"),
    ("searxng", {"language": "en_US"}, "got 'en_US'"),
])
def test_documented_value_formats_are_checked_with_the_config(provider, options, message) -> None:
    from deepsearcher.settings import load_settings

    with pytest.raises(Exception) as info:
        load_settings(None, {"web_search": {"provider": provider, **options}})
    assert message in str(info.value)
    assert load_settings(None, {"web_search": {"provider": "brave", "country": "DE", "freshness": "2024-01-01to"
                                                                                           "2024-06-30"}})


@pytest.mark.parametrize("provider, options", [
    ("brave", {"search_lang": "jp"}), ("brave", {"search_lang": "pt-BR"}), ("brave", {"search_lang": "zh-hant"}),
    ("searxng", {"language": "de"}), ("searxng", {"language": "de-CH"}), ("searxng", {"language": "zh-Hant-TW"}),
    ("searxng", {"language": "all"}), ("searxng", {"language": "es-419"}),
])
def test_documented_language_values_are_accepted(provider, options) -> None:
    from deepsearcher.settings import load_settings

    assert load_settings(None, {"web_search": {"provider": provider, **options}}).web_search is not None
