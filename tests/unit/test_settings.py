import re
from pathlib import Path
from typing import Annotated

import pytest
import yaml
from pydantic import BaseModel, Field, ValidationError

from deepsearcher.errors import ConfigError
from deepsearcher.ingest.firecrawl import map_options
from deepsearcher.ingest.options import FirecrawlCrawlerOptions
from deepsearcher.options import ProviderOptions, QuerySettings
from deepsearcher.registry import registry
from deepsearcher.settings import _StrictLoader, load_settings, settings_model
from deepsearcher.embedding.options import BUNDLED_MODEL


def test_defaults_without_file():
    settings = load_settings(None)
    assert settings.config_path is None
    assert settings.embedding.model == BUNDLED_MODEL
    assert settings.vector_db.uri == "./milvus.db"
    assert settings.query.hybrid is True


def test_unknown_key_names_key_and_file(tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("ingest:\n  chunk_size_tokenz: 100\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert "ingest.chunk_size_tokenz: unknown key" in str(err.value)
    assert str(cfg) in str(err.value)


def test_wrong_type_names_key(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("query:\n  max_iter: many\n")
    with pytest.raises(ConfigError, match=r"query\.max_iter"):
        load_settings(cfg)


@pytest.mark.parametrize("text, key", [
    ("query:\n  relevance_check_strikes: true\n", "query.relevance_check_strikes"),  # a helper's: it ran as 1
    ("query:\n  concurrency: yes\n", "query.concurrency"),
    ("query:\n  top_k: off\n", "query.top_k"),
    ("llm:\n  provider: openai_compatible\n  model: m\n  temperature: on\n", "llm.temperature"),
    ("web_search:\n  provider: searxng\n  safesearch: yes\n", "web_search.safesearch"),  # Literal[0, 1, 2]
])
def test_a_boolean_for_a_number_is_an_error_naming_the_key(tmp_path: Path, text: str, key: str):
    # pydantic's lax mode reads true as 1 and false as 0; YAML reads yes/no/on/off as booleans
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert f"{key}: must be a number, got " in str(err.value)


def test_numbers_and_booleans_where_they_belong_still_load(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("query:\n  relevance_check_strikes: 3\n  relevance_check: no\n  hybrid: true\n"
                   "llm:\n  provider: openai_compatible\n  model: m\n  temperature: 0\n")
    settings = load_settings(cfg)
    assert (settings.query.relevance_check_strikes, settings.query.relevance_check, settings.query.hybrid) == \
        (3, False, True)
    assert settings.llm.temperature == 0


def test_a_boolean_for_a_number_is_listed_with_the_sections_other_errors(tmp_path: Path):
    # the first version raised before the fields were validated: the typo and the range error went unsaid
    cfg = tmp_path / "c.yaml"
    cfg.write_text("query:\n  concurrency: yes\n  top_k: 0\n  tpo_k: 3\n  agent: magic\n"
                   "llm:\n  provider: openai_compatible\n  model: m\n  temperature: on\n  base_url: localhost:80\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    text = str(err.value)
    for line in ("query.concurrency: must be a number, got true", "query.top_k: Input should be greater than 0",
                 "query.tpo_k: unknown key; did you mean 'top_k'?", "(the registered agents)",
                 "llm.temperature: must be a number", "llm.base_url: must start with http:// or https://"):
        assert line in text, text


def test_a_boolean_inside_a_list_or_dict_of_numbers_is_an_error_and_a_bool_union_keeps_it():
    class Plugin(ProviderOptions):
        weights: dict[str, float] = Field(default_factory=dict, description="w")
        sizes: list[int] = Field(default_factory=list, description="s")
        pair: tuple[int, str] = Field((1, "a"), description="p")
        either: int | bool = Field(0, description="e")
        level: Annotated[int, Field(ge=0)] | None = Field(None, alias="lvl", description="l")

    for data, key in [({"weights": {"a": 0.5, "b": True}}, "weights"), ({"sizes": [1, False]}, "sizes"),
                      ({"pair": [True, "x"]}, "pair"), ({"lvl": True}, "lvl")]:
        with pytest.raises(ValidationError) as err:
            Plugin.model_validate({"provider": "p", **data})
        assert [(e["loc"], e["type"]) for e in err.value.errors()] == [((key,), "number_not_bool")], data
    assert Plugin.model_validate({"provider": "p", "either": True, "pair": [2, "x"]}).either is True


def test_a_boolean_assigned_to_a_number_is_refused_too():
    # validate_assignment hands the model validator the model, not the value: a first version let this through
    query = QuerySettings()
    with pytest.raises(ValidationError, match="must be a number, got true"):
        query.top_k = True
    query.top_k, query.hybrid = 7, False
    assert (query.top_k, query.hybrid) == (7, False)


def test_a_plugin_agents_options_must_subclass_agent_options():
    class Loose(BaseModel):  # no extra="forbid", no number checks: a typo would be silently kept
        rounds: int = 1

    with registry.temporarily("agent", "loose", lambda options: None, Loose):
        with pytest.raises(ConfigError, match="does not subclass deepsearcher.options.AgentOptions"):
            settings_model()


def test_firecrawl_options_are_checked_with_the_config(tmp_path: Path):
    """crawler.options is part of the config: `config check` names every wrong option, with the section's other
    errors, instead of the first crawl finding the first of them."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("crawler:\n  provider: firecrawl\n  max_pages: 0\n  options:\n    onlyMainContent: true\n"
                   "    wait_for_ms: true\n    max_concurrency: many\n    proxy: fast\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    lines = str(err.value).splitlines()[1:]
    assert "  crawler.options.onlyMainContent: unknown key; did you mean 'only_main_content'?" in lines
    assert any(line.startswith("  crawler.options.wait_for_ms: must be a number, got true") for line in lines)
    assert any(line.startswith("  crawler.options.max_concurrency: ") for line in lines)
    assert any(line.startswith("  crawler.options.proxy: ") and "'basic'" in line for line in lines)
    assert any(line.startswith("  crawler.max_pages: ") for line in lines)
    assert len(lines) == 5


@pytest.mark.parametrize("yaml_text, line", [
    # a helper's findings (2026-12-03): the hint named the key itself, or nothing, for a key in the wrong place
    ("crawler:\n  provider: builtin\n  options:\n    mobile: true\n",
     "  crawler.options: unknown key; options is a key of crawler.provider firecrawl only"),
    ("crawler:\n  provider: firecrawl\n  only_main_content: true\n",
     "  crawler.only_main_content: unknown key; did you mean 'options.only_main_content'?"),
    ("crawler:\n  provider: firecrawl\n  options:\n    max_pages: 3\n",
     "  crawler.options.max_pages: unknown key; max_pages goes one level up: crawler.max_pages"),
    ("llm:\n  provider: openai_compatible\n  modle: x\n", "  llm.modle: unknown key; did you mean 'model'?"),
])
def test_a_key_in_the_wrong_place_is_told_where_it_goes(tmp_path: Path, yaml_text: str, line: str):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml_text)
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert line in str(err.value).splitlines()


def test_credential_headers_written_in_the_file_are_masked_by_config_check(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("crawler:\n  provider: firecrawl\n  options:\n    headers:\n"
                   "      Authorization: Bearer sk-live-1234567890\n      Cookie: sid=abcdefghijkl\n"
                   "      Accept-Language: de\n")
    headers = load_settings(cfg).masked()["crawler"]["options"]["headers"]
    assert headers == {"Authorization": "Bea…90", "Cookie": "sid…kl", "Accept-Language": "de"}


def test_options_of_settings_built_without_validation_are_checked_when_mapped():
    settings = FirecrawlCrawlerOptions(provider="firecrawl")
    assert map_options(settings.model_copy(update={"options": {"mobile": True}}))[0]["mobile"] is True
    with pytest.raises(ConfigError, match=r"invalid Firecrawl option in crawler.options: mobil: Extra inputs"):
        map_options(settings.model_copy(update={"options": {"mobil": True}}))


def test_firecrawl_options_map_to_the_sdk_keywords():
    settings = FirecrawlCrawlerOptions(provider="firecrawl", max_pages=7, same_site=False,
                                       options={"wait_for_ms": 500, "delay_s": 2, "only_main_content": False})
    scrape, crawl = map_options(settings)
    assert scrape == {"formats": ["markdown"], "only_main_content": False, "wait_for": 500}
    assert crawl["delay"] == 2 and crawl["limit"] == 7 and crawl["sitemap"] == "skip"
    assert crawl["allow_external_links"] is True and crawl["allow_subdomains"] is True


def test_unknown_key_inside_provider_section(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm:\n  provider: openai_compatible\n  modle: x\n")
    with pytest.raises(ConfigError, match=r"llm\.modle: unknown key"):
        load_settings(cfg)


def test_unknown_provider_is_an_error(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embedding:\n  provider: magic\n")
    with pytest.raises(ConfigError, match="embedding"):
        load_settings(cfg)


def test_missing_file_and_bad_yaml(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("llm: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(bad)


@pytest.mark.parametrize("text, key, lines", [
    # found by a new user: a second query: block silently dropped the first one's top_k: 7; config check said OK
    ("query:\n  top_k: 7\nllm: null\nquery:\n  max_iter: 2\n", "query", (1, 4)),
    ("query:\n  top_k: 7\n  top_k: 9\n", "top_k", (2, 3)),
])
def test_a_key_given_twice_is_an_error_not_a_silent_loss(tmp_path: Path, text: str, key: str, lines: tuple[int, int]):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    twice = re.escape(f"the key '{key}' is given twice (lines {lines[0]} and {lines[1]})")
    with pytest.raises(ConfigError, match=twice) as error:
        load_settings(cfg)
    assert str(cfg) in str(error.value) and "merge them" in (error.value.hint or "")


def test_a_yaml_merge_key_and_one_key_in_two_mappings_are_fine():
    loaded = yaml.load("d: &d {top_k: 3, max_iter: 2}\nq:\n  <<: *d\n  top_k: 7\nr: {top_k: 1}\n",
                       Loader=_StrictLoader)
    assert loaded["q"] == {"top_k": 7, "max_iter": 2} and loaded["r"] == {"top_k": 1}


@pytest.mark.parametrize("text", ["query: 5\n", "query: fast\n", "llm: [a, b]\n"])
def test_a_section_that_is_not_a_mapping_is_said_so_without_class_names(tmp_path: Path, text: str):
    # found by a new user: "query: 5" said "Input should be a valid dictionary or instance of QuerySettings"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match="must be a section of keys") as error:
        load_settings(cfg)
    assert "Settings" not in str(error.value) and "Options" not in str(error.value)


def test_relative_paths_resolve_against_config_folder(tmp_path: Path):
    sub = tmp_path / "conf"
    sub.mkdir()
    cfg = sub / "config.yaml"
    cfg.write_text("vector_db:\n  uri: ./data/m.db\n")
    settings = load_settings(cfg)
    assert settings.resolve_path(settings.vector_db.uri) == (sub / "data" / "m.db").resolve()


@pytest.mark.parametrize("uri", ["127.0.0.1:19530", "milvus.internal:19530", "milvus-0.svc:443/db"])
def test_a_server_address_without_scheme_is_refused_with_the_fix(tmp_path: Path, uri: str):
    """Resolved against the config's folder it became a Lite path, and pymilvus refused it with its own exception."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"vector_db:\n  uri: {uri}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert "vector_db.uri" in str(err.value) and f"write http://{uri}" in str(err.value)


def test_env_var_selects_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = tmp_path / "other.yaml"
    cfg.write_text("query:\n  top_k: 9\n")
    monkeypatch.setenv("DEEPSEARCHER_CONFIG", str(cfg))
    assert load_settings().query.top_k == 9


def test_literal_token_refused_and_secrets_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("vector_db:\n  token: root:Milvus\n")
    with pytest.raises(ConfigError, match="environment variable"):
        load_settings(cfg)
    monkeypatch.setenv("MY_KEY", "sk-abcdefghijklmnop")
    cfg.write_text("llm:\n  api_key_env: MY_KEY\n")
    masked = load_settings(cfg).masked()
    assert "sk-abcdefghijklmnop" not in str(masked)
    assert masked["llm"]["api_key_env"].startswith("MY_KEY (set: sk-")


def test_llm_may_be_disabled(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm: null\n")
    assert load_settings(cfg).llm is None


def test_unknown_key_suggests_the_close_key_at_its_place(tmp_path: Path):
    """A typo gets the allowed key it is closest to, at the same place (a provider's options, a list item);
    a key close to nothing gets no guess."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("lmm: null\nvector_db: {defualt_collection: x, xyz: 1}\nquery: {topk: 3}\n"
                   "server: {watch: [{path: /x, colection: a}]}\nagents: {deep_research: {token_budjet: 9}}\n"
                   "web_search: {provider: brave, searchlang: jp}\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    lines = set(str(err.value).splitlines())
    assert {"  lmm: unknown key; did you mean 'llm'?",
            "  vector_db.defualt_collection: unknown key; did you mean 'default_collection'?",
            "  vector_db.xyz: unknown key",
            "  query.topk: unknown key; did you mean 'top_k'?",
            "  server.watch.0.colection: unknown key; did you mean 'collection'?",
            "  agents.deep_research.token_budjet: unknown key; did you mean 'token_budget'?",
            "  web_search.searchlang: unknown key; did you mean 'search_lang'?"} <= lines


def test_a_config_that_is_not_utf8_is_named_with_the_fix(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_bytes("llm: null\n".encode("utf-16"))  # as some Windows editors save it
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert str(err.value) == f"{cfg}: not UTF-8 text (byte 0 cannot be decoded)\n  hint: save the file as UTF-8"
