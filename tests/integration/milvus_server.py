"""A real Milvus server for the tests: the embedded Milvus standalone of the PyPI package ``milvus``, or any server.

``milvus`` (2.3.5, the newest on PyPI; ``pip install milvus==2.3.5``, Linux/macOS wheels) ships the real Milvus
standalone binaries (etcd, RocksMQ and local storage built in) and starts them as a subprocess; nothing is
downloaded. ``start_embedded`` starts one in a folder on a free port with authentication on (user ``root``, password
``Milvus``, so wrong-token behaviour is testable) and stops it again. It takes ~10-20 s on 2 cores.

The session fixture ``milvus_server`` yields a ``MilvusServerHandle``. Set ``DEEPSEARCHER_TEST_MILVUS_URI`` (and
``DEEPSEARCHER_TEST_MILVUS_TOKEN`` when the server needs one) to run the same tests against any other server
instead: a Milvus 2.5+ standalone (``docker compose``), a cluster's proxy, or Zilliz Cloud. Tests needing
what only the embedded server offers (a known version, authentication) check the handle's fields.

The folders that use it import it in their conftest.py (``tests/integration``, ``tests/conformance``); the
session starts one server however many of them run.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

URI_ENV = "DEEPSEARCHER_TEST_MILVUS_URI"
TOKEN_ENV = "DEEPSEARCHER_TEST_MILVUS_TOKEN"
EMBEDDED_TOKEN = "root:Milvus"  # Milvus's default root account, active once authorization is enabled
_DATABASES = itertools.count()


@dataclass(frozen=True)
class MilvusServerHandle:
    """A running Milvus server.

    Attributes:
        uri: http://host:port.
        token: token to pass, or None.
        embedded: True for the server this session started (version 2.3.5, authentication on).
        version: what the server reports (``MilvusClient.get_server_version``).
        auth_required: whether the server refuses a connection without a valid token.
        pid: the server process on this machine (embedded only), e.g. to count its CPU time.
        base_dir: its data and log folder (embedded only).
    """

    uri: str
    token: str | None
    embedded: bool
    version: str
    auth_required: bool
    pid: int | None = None
    base_dir: Path | None = None

    def client(self, **kwargs: Any) -> Any:
        """A fresh pymilvus ``MilvusClient`` on this server (for set-up and checks outside deepsearcher)."""
        from pymilvus import MilvusClient

        return MilvusClient(uri=self.uri, token=self.token or "", **kwargs)

    @contextlib.contextmanager
    def database(self, prefix: str) -> Iterator[str]:
        """A new database named ``<prefix>_<pid>_<n>`` (``vector_db.db_name``), dropped with its collections on
        exit; skips the test where the server allows no databases (e.g. a Zilliz Cloud serverless cluster)."""
        admin = self.client()
        name = f"{prefix}_{os.getpid()}_{next(_DATABASES)}"
        try:
            admin.create_database(name)
        except Exception as exc:  # noqa: BLE001 - the server's refusal, whatever its type
            admin.close()
            pytest.skip(f"cannot create a database on {self.uri}: {exc}")
        try:
            yield name
        finally:
            inside = self.client(db_name=name)  # use_database() needs DescribeDatabase, which 2.3 lacks
            for collection in inside.list_collections():
                inside.drop_collection(collection)
            inside.close()
            admin.drop_database(name)
            admin.close()


class EmbeddedMilvus:
    """The ``milvus`` package's server in ``base_dir`` on a free port (context manager; ``stop`` ends it).

    Raises (from ``start``):
        RuntimeError: the package is missing, or the server exited or did not answer in ``timeout_s``
            (the message names the log folder).
    """

    def __init__(self, base_dir: Path, *, auth: bool = True, timeout_s: float = 180) -> None:
        self.base_dir = Path(base_dir)
        self.auth = auth
        self.timeout_s = timeout_s
        self.port: int | None = None
        self._server: Any = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        proc = getattr(self._server, "server_proc", None)
        return proc.pid if proc is not None else None

    def start(self) -> "EmbeddedMilvus":
        try:
            from milvus import MilvusServer, MilvusServerConfig
        except ModuleNotFoundError as exc:
            raise RuntimeError("the embedded Milvus server is not installed (pip install milvus==2.3.5)") from exc
        server = MilvusServer(MilvusServerConfig(), wait_for_started=False)
        server.set_base_dir(str(self.base_dir))
        server.listen_port = self.port = free_port()  # the other internal ports are found free by the package
        server.config.set("authorization_enabled", self.auth)
        _own_etcd_ports(server.config, self.base_dir)
        server.start()
        self._server = server
        try:
            server.wait_started(timeout=int(self.timeout_s * 1000))
        except (TimeoutError, RuntimeError) as exc:
            self.stop()
            raise RuntimeError(f"the embedded Milvus server did not start ({exc}); logs in "
                               f"{self.base_dir / 'logs'}") from exc
        _wait_for_proxy(self.port, self.timeout_s)
        return self

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); safe to call twice."""
        server, self._server = self._server, None
        if server is None or server.server_proc is None:
            return
        proc = server.server_proc
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: it did not stop in time
            proc.kill()
            proc.wait(timeout=10)
        server.stop()  # closes the log files

    def __enter__(self) -> "EmbeddedMilvus":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _own_etcd_ports(config: Any, base_dir: Path) -> None:
    """Give the embedded etcd free client and peer ports, so that two servers can run on one machine.

    The package only moves the port Milvus *connects* to; its embedded etcd always listens on 2379 and 2380, so a
    second server on the machine (another session's tests, a benchmark) fails with "listen tcp 127.0.0.1:2380:
    bind: address already in use". Milvus reads an etcd config file named by ``etcd.config.path``, which the
    package's template lacks: it is added to the written milvus.yaml.
    """
    client, peer = free_port(), free_port()
    config.set("etcd_port", client)
    etcd_yaml = base_dir / "configs" / "embed-etcd.yaml"
    etcd_yaml.parent.mkdir(parents=True, exist_ok=True)
    etcd_yaml.write_text(f"name: default\nlisten-client-urls: http://127.0.0.1:{client}\n"
                         f"advertise-client-urls: http://127.0.0.1:{client}\n"
                         f"listen-peer-urls: http://127.0.0.1:{peer}\n"
                         f"initial-advertise-peer-urls: http://127.0.0.1:{peer}\n"
                         f"initial-cluster: default=http://127.0.0.1:{peer}\n", encoding="utf-8")
    write_config = config.write_config

    def write_with_etcd_config() -> None:
        write_config()
        milvus_yaml = base_dir / "configs" / "milvus.yaml"
        text = milvus_yaml.read_text(encoding="utf-8")
        milvus_yaml.write_text(text.replace("\netcd:\n", f"\netcd:\n  config:\n    path: {etcd_yaml}\n", 1),
                               encoding="utf-8")

    config.write_config = write_with_etcd_config


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_proxy(port: int, timeout_s: float) -> None:
    """The health endpoint answers before the proxy's gRPC port accepts; wait for that too."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the embedded Milvus server does not listen on port {port}")


def _server_version(uri: str, token: str | None) -> str:
    from pymilvus import MilvusClient

    client = MilvusClient(uri=uri, token=token or "", timeout=10)
    try:
        return str(client.get_server_version())
    finally:
        client.close()


#: the session's server (or why there is none), shared by every conftest that imports ``milvus_server``
_SESSION_SERVER = pytest.StashKey["MilvusServerHandle | str"]()


@pytest.fixture(scope="session")
def milvus_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> MilvusServerHandle:
    """A Milvus server for the session: ``$DEEPSEARCHER_TEST_MILVUS_URI``, else the embedded one (skipped, with
    the reason, where it cannot start).

    Each conftest that imports this fixture registers its own copy; the handle is kept in the pytest config, so
    the whole session still starts one server (and stops it at the end) however many folders use it."""
    stash = request.config.stash
    if _SESSION_SERVER not in stash:
        stash[_SESSION_SERVER] = _start_for_session(request, tmp_path_factory)
    server = stash[_SESSION_SERVER]
    if isinstance(server, str):
        pytest.skip(server)
    return server


def _start_for_session(request: pytest.FixtureRequest,
                       tmp_path_factory: pytest.TempPathFactory) -> MilvusServerHandle | str:
    """The handle of the named or a newly started embedded server, or the reason there is none."""
    uri = os.environ.get(URI_ENV)
    if uri:
        token = os.environ.get(TOKEN_ENV) or None
        return MilvusServerHandle(uri=uri, token=token, embedded=False, version=_server_version(uri, token),
                                  auth_required=bool(token))
    if not sys.platform.startswith(("linux", "darwin")):
        return f"the embedded Milvus server has no build for {sys.platform}; set {URI_ENV} to a server"
    server = EmbeddedMilvus(tmp_path_factory.mktemp("milvus_server"))
    try:
        server.start()
    except RuntimeError as exc:
        return f"{exc}; or set {URI_ENV} to a running server"
    request.addfinalizer(server.stop)  # session scope: after the last test of the session
    return MilvusServerHandle(uri=server.uri, token=EMBEDDED_TOKEN, embedded=True,
                              version=_server_version(server.uri, EMBEDDED_TOKEN), auth_required=True,
                              pid=server.pid, base_dir=server.base_dir)
