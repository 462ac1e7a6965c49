"""What an OpenAI-compatible server says about its model: the context window and a tokenizer endpoint.

Each server family reports these differently (none through the OpenAI API itself), so each is asked once, with a
short timeout, and whatever answers is remembered for the provider's lifetime:

==================  ===========================================  ==============================================
server              context window                               tokenizer
==================  ===========================================  ==============================================
vLLM                ``GET /v1/models`` → ``max_model_len``        ``POST /tokenize`` ``{"model", "prompt"}``
llama.cpp server    ``GET /props`` → ``n_ctx``                    ``POST /tokenize`` ``{"content"}``
llama-cpp-python    (not reported: learned from its first         ``POST /extras/tokenize/count`` ``{"input"}``
                    overflow error, which names it)
Ollama              ``GET /api/ps`` → ``context_length`` of the   (none: estimated)
                    *loaded* model, else ``POST /api/show`` →
                    ``num_ctx`` parameter, else
                    ``OLLAMA_DEFAULT_CONTEXT``
LM Studio, hosted   ``/v1/models`` → ``context_length`` where     (none: estimated)
                    given
==================  ===========================================  ==============================================

Ollama cuts an over-long prompt silently instead of refusing it, so its window must be known in advance: its
documented default has been 2,048 tokens (4,096 in later versions), and 2,048 is assumed when the model sets no
``num_ctx``; set ``llm.context_window`` to the ``OLLAMA_CONTEXT_LENGTH`` you run with.

The window Ollama runs a model with is the one it was *loaded* with (``OLLAMA_CONTEXT_LENGTH``, a client's
``num_ctx``), which ``/api/show`` does not say: ``/api/ps`` does, for a model already loaded, and wins.

What the server is and how many requests it serves at once (``identify`` → ``ServerKind``) is read the same way:
llama-cpp-python's server names itself in ``/openapi.json`` (its FastAPI title) and serves one request at a time;
llama.cpp's ``llama-server`` reports ``total_slots`` in ``/props``; Ollama answers ``/api/version``; vLLM lists
``owned_by: "vllm"`` models. The provider sends no more requests at once than the server has slots
(``server_gate``), so a request never waits in the server's queue with its timeout running, and llama-cpp-python's
server never interrupts a streamed reply because another request of ours arrived.

Hosted APIs report no window at all; for the hosts in ``HOSTED_WINDOWS`` the smallest window of the provider's
current chat models is assumed (no probe is sent), and a model with less is learned from its first refusal, which
these APIs word as "maximum context length is N tokens".
"""

from __future__ import annotations

import logging
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from urllib.parse import urlparse

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0
OLLAMA_DEFAULT_CONTEXT = 2048
#: host -> the smallest context window of that provider's current chat models (their model pages, 2025)
HOSTED_WINDOWS = {"api.openai.com": 128_000, "api.deepseek.com": 65_536,
                  "generativelanguage.googleapis.com": 1_048_576}


def hosted_window(base_url: str | None) -> tuple[int, str] | None:
    """The assumed window of a hosted API (``HOSTED_WINDOWS``; None = OpenAI), else None."""
    host = urlparse(base_url or "https://api.openai.com/v1").hostname or ""
    size = HOSTED_WINDOWS.get(host)
    return (size, f"{host} (documented minimum)") if size else None
_MODEL_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")


def server_root(base_url: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080`` (the native endpoints live at the root)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


class ServerInfo:
    """Context window and token counting of one OpenAI-compatible server.

    Args:
        base_url: the API base URL (``…/v1``).
        model: the model name as the server knows it.
        headers: request headers (the API key).
        client: an ``httpx.Client``-like object (tests pass one); made on first use otherwise.
        gate: the server's request gate (``server_gate``): every probe and token count takes a slot like a chat
            request, since llama-cpp-python's server serves them under the same lock and cuts a streamed reply
            off for them too.
    """

    def __init__(self, base_url: str, model: str, headers: dict[str, str] | None = None, client: Any = None,
                 gate: ServerGate | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.root = server_root(base_url)
        self.model = model
        self.headers = headers or {}
        self._client = client
        self._counter: Callable[[str], int] | None = None
        self._counter_probed = False
        self._kind: ServerKind | None = None
        self.gate = gate or ServerGate()

    @property
    def client(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=PROBE_TIMEOUT_S, headers=self.headers)
        return self._client

    def _get(self, url: str) -> Any:
        with self.gate.slot():
            resp = self.client.get(url)
        return resp.json() if resp.status_code == 200 else None

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        with self.gate.slot():
            resp = self.client.post(url, json=body)
        return resp.json() if resp.status_code == 200 else None

    def context_window(self) -> tuple[int, str] | None:
        """``(tokens, where it was read)`` or None when the server reports nothing (every probe is best effort)."""
        known = hosted_window(self.base_url)
        if known:
            return known
        for probe in (self._from_models, self._from_props, self._from_ollama):
            try:
                found = probe()
            except Exception as exc:  # an endpoint this server lacks: 404, HTML, a refused connection
                log.debug("%s: %s", probe.__name__, exc)
                continue
            if found:
                log.info("context window of %s at %s: %d tokens (%s)", self.model, self.root, *found)
                return found
        return None

    def _from_models(self) -> tuple[int, str] | None:
        data = self._get(f"{self.base_url}/models")
        entries = data.get("data", []) if isinstance(data, dict) else []
        entries = [e for e in entries if isinstance(e, dict)]
        mine = [e for e in entries if e.get("id") == self.model] or entries[:1]
        for entry in mine:
            for key in _MODEL_KEYS:
                value = entry.get(key) or (entry.get("meta") or {}).get(key)
                if isinstance(value, int) and value > 0:
                    return value, f"server /v1/models {key}"
        return None

    def _from_props(self) -> tuple[int, str] | None:
        data = self._get(f"{self.root}/props")
        if not isinstance(data, dict):
            return None
        settings = data.get("default_generation_settings") or {}
        value = settings.get("n_ctx") or data.get("n_ctx")
        return (int(value), "server /props n_ctx") if isinstance(value, int) and value > 0 else None

    def _from_ollama(self) -> tuple[int, str] | None:
        loaded = self._ollama_loaded_window()
        if loaded:
            return loaded
        data = self._post(f"{self.root}/api/show", {"model": self.model})
        if not isinstance(data, dict) or "modelfile" not in data and "parameters" not in data:
            return None
        match = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(data.get("parameters") or ""))
        if match:
            return int(match.group(1)), "Ollama num_ctx"
        return OLLAMA_DEFAULT_CONTEXT, "Ollama default (set llm.context_window to OLLAMA_CONTEXT_LENGTH)"

    def _ollama_loaded_window(self) -> tuple[int, str] | None:
        """The window of the model as Ollama has it loaded now (``/api/ps``), which is what it cuts prompts to."""
        data = self._get(f"{self.root}/api/ps")
        models = data.get("models") if isinstance(data, dict) else None
        for entry in models or []:
            if isinstance(entry, dict) and self.model in (entry.get("name"), entry.get("model")):
                value = entry.get("context_length")
                if isinstance(value, int) and value > 0:
                    return value, "Ollama /api/ps context_length (the window the model is loaded with)"
        return None

    def identify(self) -> ServerKind:
        """What the server is and how many requests it serves at once; probed once, best effort (each probe is an
        endpoint only that family has, none of which waits for a running generation)."""
        if self._kind is None:
            self._kind = self._identify()
            log.info("LLM server at %s: %s", self.root, self._kind.describe())
        return self._kind

    def _identify(self) -> ServerKind:
        for probe in (self._llama_cpp_python, self._llama_server, self._ollama, self._vllm):
            try:
                found = probe()
            except Exception as exc:  # an endpoint this server lacks
                log.debug("%s: %s", probe.__name__, exc)
                continue
            if found is not None:
                return found
        return ServerKind("unknown")

    def _llama_cpp_python(self) -> ServerKind | None:
        data = self._get(f"{self.root}/openapi.json")
        title = str(((data or {}).get("info") or {}).get("title", "")) if isinstance(data, dict) else ""
        if "llama.cpp python" not in title.lower():
            return None
        return ServerKind("llama-cpp-python", slots=1, note="answers one request at a time and, unless started "
                          "with --interrupt_requests False, cuts a streamed reply off when another request arrives")

    def _llama_server(self) -> ServerKind | None:
        data = self._get(f"{self.root}/props")
        if not isinstance(data, dict) or not ("total_slots" in data or "default_generation_settings" in data):
            return None
        slots = data.get("total_slots")
        return ServerKind("llama.cpp", slots=slots if isinstance(slots, int) and slots > 0 else None,
                          note="llama-server: --parallel sets its slots")

    def _ollama(self) -> ServerKind | None:
        data = self._get(f"{self.root}/api/version")
        if not isinstance(data, dict) or "version" not in data:
            return None
        return ServerKind("ollama", note="cuts a prompt longer than the loaded window silently")

    def _vllm(self) -> ServerKind | None:
        data = self._get(f"{self.base_url}/models")
        entries = data.get("data", []) if isinstance(data, dict) else []
        if any(isinstance(e, dict) and e.get("owned_by") == "vllm" for e in entries):
            return ServerKind("vllm")
        return None

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's tokenizer, or None when it has no tokenizer endpoint."""
        if not self._counter_probed:
            self._counter_probed = True
            self._counter = self._find_counter()
        return self._counter(text) if self._counter is not None else None

    def _find_counter(self) -> Callable[[str], int] | None:
        candidates: list[tuple[str, Callable[[str], dict[str, Any]], Callable[[Any], int]]] = [
            (f"{self.root}/extras/tokenize/count", lambda t: {"input": t}, lambda d: int(d["count"])),
            (f"{self.root}/tokenize", lambda t: {"content": t, "prompt": t, "model": self.model, "add_special": False},
             lambda d: int(d["count"]) if "count" in d else len(d["tokens"])),
        ]
        for url, body, read in candidates:
            try:
                data = self._post(url, body("probe"))
                if data is None:
                    continue
                read(data)
            except Exception as exc:
                log.debug("no tokenizer at %s: %s", url, exc)
                continue
            log.info("counting tokens with the server's tokenizer at %s", url)

            def count(text: str, url: str = url, body: Any = body, read: Any = read) -> int:
                with self.gate.slot():
                    resp = self.client.post(url, json=body(text))
                return int(read(resp.raise_for_status().json()))

            return count
        return None


@dataclass(frozen=True)
class ServerKind:
    """What an OpenAI-compatible server is.

    Attributes:
        name: "llama-cpp-python", "llama.cpp", "ollama", "vllm" or "unknown".
        slots: requests it serves at once (None = unknown: no limit is applied).
        note: what matters about it, for the log.
    """

    name: str
    slots: int | None = None
    note: str = ""

    def describe(self) -> str:
        slots = f", {self.slots} slot{'s' if self.slots != 1 else ''}" if self.slots else ""
        return f"{self.name}{slots}{': ' + self.note if self.note else ''}"


class ServerGate:
    """At most ``limit`` requests at once to one server (None = no limit); the limit can be lowered while requests
    run (those running finish; new ones wait until they are under it). A thread that holds a slot and sends another
    request (a window probe while handling a reply) uses the slot it has."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._limit: int | None = None
        self._active = 0
        self._held = threading.local()
        self.reasons: set[str] = set()

    @property
    def limit(self) -> int | None:
        return self._limit

    def set_limit(self, limit: int, reason: str) -> bool:
        """Lower the limit to ``limit``; True when it changed (the caller says so once)."""
        with self._cond:
            self.reasons.add(reason)
            if self._limit is not None and self._limit <= limit:
                return False
            self._limit = max(1, limit)
            self._cond.notify_all()
            return True

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the server's slots for one request (re-entrant within a thread)."""
        if getattr(self._held, "depth", 0):
            self._held.depth += 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        with self._cond:
            while self._limit is not None and self._active >= self._limit:
                self._cond.wait()
            self._active += 1
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._active -= 1
                self._cond.notify_all()


_GATES: dict[str, ServerGate] = {}
_GATES_LOCK = threading.Lock()


def server_gate(base_url: str) -> ServerGate:
    """The one gate of the server at ``base_url`` (shared by every provider talking to it in this process)."""
    key = server_root(base_url)
    with _GATES_LOCK:
        return _GATES.setdefault(key, ServerGate())
