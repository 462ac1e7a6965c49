"""Milvus Lite specifics: which engine is installed (3.x, pure Python; 2.x, the C++ engine), opening a database,
refusing one of the other engine, probing the file lock, and where Lite 2.x keeps what it has no collection
properties for.

Two engines share the package name ``milvus-lite``: 3.x (a database is a folder, locked with ``flock`` on
``<folder>/LOCK``) and 2.x (a ``milvus`` subprocess; one file, locked with ``lockf`` on ``.<file>.lock`` beside it).
Neither opens the other's database.

Lite 2.x has no collection properties and cannot alter a collection (``alter_collection_properties`` answers
UNIMPLEMENTED, measured with milvus-lite 2.5.1), so ``MilvusStore`` keeps the embedding model, dimension and
description as a JSON object in the schema description at creation, and a description changed later (``collections
describe``) in a small JSON file beside the database (``description_file``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from deepsearcher.errors import ProviderError, StoreInUseError
from deepsearcher.quiet_logs import quiet_libraries
from deepsearcher.vectordb.connection import GuardedClient
from deepsearcher.vectordb.names import lacks_scheme

log = logging.getLogger(__name__)

PROP_MODEL = "deepsearcher.embedding_model"
PROP_DIM = "deepsearcher.embedding_dim"
PROP_DESC = "deepsearcher.description"
PROP_DESC_GENERATED = "deepsearcher.description_generated"
#: Lite files this process opened: a lock probe from the same process would see its own lock (held by milvus-lite's
#: server in this process, ours or a pymilvus client's of the caller) as "another process".
OPENED_IN_THIS_PROCESS: set[str] = set()
#: Open clients per Lite file (absolute path) in this process. milvus-lite 3.x serves each file from an in-process
#: gRPC server (a thread pool, sockets, the file's lock) that lives until the process ends unless released; the
#: last close releases it, so a long-lived process (serve, the MCP server, a test suite) does not gather one
#: server per file it ever opened, and the file is free for other processes again. (milvus-lite keeps one server
#: per file per process: a pymilvus client the caller opened on the same file shares it and loses it then too.)
LITE_HOLDERS: Counter[str] = Counter()


@functools.cache
def lite_engine_major() -> int:
    """Major version of the installed milvus-lite (read once per process): 3+ is pure Python, 2.x the C++ engine."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("milvus-lite").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 3


@functools.cache
def lite_version() -> str:
    """The installed milvus-lite's version, "" when unknown (read once per process; 2.x has no GetVersion RPC)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("milvus-lite")
    except PackageNotFoundError:
        return ""


#: the first bytes of a Milvus Lite 2.x database (an SQLite file)
LITE2_MAGIC = b"SQLite format 3\x00"


def check_lite_format(path: Path) -> None:
    """Refuse a Lite database written by the other engine (3.x: a folder; 2.x: one file) with the way out.

    Raises:
        ProviderError: the file's format does not match the installed milvus-lite, or (3.x) the path is a file that
            is no Lite 2.x database either (empty, or anything else).
    """
    major = lite_engine_major()
    if major < 3 and path.is_dir():
        raise ProviderError(f"{path} is a Milvus Lite 3.x database (a folder), but milvus-lite 2.x is installed",
                            hint="point vector_db.uri at a new file for the 2.x engine and load again, or "
                                 "pip install 'milvus-lite>=3.2'")
    if major >= 3 and path.is_file():
        with path.open("rb") as fh:
            head = fh.read(len(LITE2_MAGIC))
        if head == LITE2_MAGIC:
            raise ProviderError(f"{path} is a Milvus Lite 2.x database (one file), but milvus-lite 3.x is installed",
                                hint="pip install 'milvus-lite==2.5.1' 'setuptools<81' to open it, or point "
                                     "vector_db.uri at a new path and load again")
        what = "an empty file" if not head else "a file that is not a Milvus Lite database"
        raise ProviderError(f"{path} is {what} (Milvus Lite 3.x keeps its database in a folder there)",
                            hint="point vector_db.uri at a new path, or move that file away if it is not yours to "
                                 "keep, and load again")


def collection_props(desc: dict[str, Any]) -> dict[str, str]:
    """A collection's deepsearcher properties, from its properties or (Milvus Lite 2.x) its JSON description."""
    props = dict(desc.get("properties") or {})
    if PROP_MODEL not in props:
        try:
            stored = json.loads(desc.get("description") or "")
        except ValueError:
            stored = None
        if isinstance(stored, dict) and PROP_MODEL in stored:
            props.update({k: str(v) for k, v in stored.items()})
    return props


def lite_file_locked(path: Path) -> bool:
    """True when another process holds Milvus Lite's lock on the file.

    Milvus Lite 3.x takes an advisory ``flock`` on ``<file>/LOCK`` (the file is a folder); 2.x a POSIX ``lockf`` on
    ``.<file>.lock`` beside it.
    """
    try:
        import fcntl
    except ModuleNotFoundError:  # Windows: let milvus-lite report it
        return False
    probes = ((path / "LOCK", fcntl.flock), (path.parent / f".{path.name}.lock", fcntl.lockf))
    for lock, take in probes:
        if not lock.is_file():
            continue
        mode = "rb" if take is fcntl.flock else "ab"  # lockf needs a descriptor open for writing
        with lock.open(mode) as fh:
            try:
                take(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            take(fh.fileno(), fcntl.LOCK_UN)
    return False


def description_file(uri: str) -> Path:
    """The Lite 2.x file of changed descriptions: ``.<db file>.descriptions.json`` beside the database."""
    path = Path(uri)
    return path.parent / f".{path.name}.descriptions.json"


def read_descriptions(uri: str) -> dict[str, dict[str, Any]]:
    """Collection -> ``{PROP_DESC: text, PROP_DESC_GENERATED: "0"/"1"}`` from ``description_file`` ({} if none)."""
    path = description_file(uri)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:
        return {}  # a torn write: the descriptions fall back to the ones given at creation
    return data if isinstance(data, dict) else {}


def write_description(uri: str, name: str, props: dict[str, str] | None) -> None:
    """Record (``props``) or forget (None) collection ``name``'s changed description in ``description_file``."""
    data = read_descriptions(uri)
    if props is None and name not in data:
        return
    if props is None:
        data.pop(name, None)
    else:
        data[name] = props
    path = description_file(uri)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def open_lite_client(uri: str) -> GuardedClient:
    """Open a Milvus Lite database (created when missing).

    Raises:
        ProviderError: the URI is neither a ``.db`` path nor a server URL, milvus-lite is not installed, the path is
            unusable, or the file is of the other engine.
        StoreInUseError: another process has the file open.
    """
    if not uri.endswith(".db"):  # pymilvus takes only a path ending in .db as Milvus Lite
        raise ProviderError(f"vector_db.uri {uri!r} is neither a Milvus Lite file nor a server URL",
                            hint=f"for a Milvus server write http://{uri}" if lacks_scheme(uri) else
                            "a Milvus Lite file is a path ending in .db (e.g. ./milvus.db); a server is "
                            "http://host:19530")
    # gRPC's C core prints keep-alive GOAWAY notices to stderr during long embedding pauses; they are harmless
    quiet_libraries("grpc")
    try:
        with warnings.catch_warnings():  # milvus-lite 2.x imports pkg_resources, which warns on every run
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            import milvus_lite  # noqa: F401
    except ModuleNotFoundError as exc:
        raise ProviderError(
            "Milvus Lite is not available on this platform (package milvus-lite)",
            hint="pip install milvus-lite (Linux/macOS), or point vector_db.uri at a Milvus server "
                 "(http://host:19530, e.g. Milvus standalone in Docker) or Zilliz Cloud") from exc
    from pymilvus import MilvusClient

    quiet_libraries("pymilvus")
    try:
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in Path(uri).parents if p.exists() and not p.is_dir()), None)
        why = f"{blocking} is a file, not a folder" if blocking else exc.strerror or str(exc)
        raise ProviderError(f"cannot create the Milvus Lite file {uri}: {why}",
                            hint="set vector_db.uri to a path in a writable folder") from exc
    check_lite_format(Path(uri))
    # milvus-lite's in-process gRPC server logs unimplemented optional RPCs (AllocTimestamp) at ERROR
    quiet_libraries("grpc")
    in_use = StoreInUseError(f"the Milvus Lite file {uri} is in use by another process",
                             hint="wait for the other deepsearcher process to finish (Milvus Lite allows one "
                                  "process per file), use another vector_db.uri, or run a Milvus server for "
                                  "concurrent access")
    if uri not in OPENED_IN_THIS_PROCESS and lite_file_locked(Path(uri)):
        raise in_use
    try:
        client = MilvusClient(uri=uri)
    except Exception as exc:  # pymilvus raises MilvusException / ConnectionConfigException / RuntimeError
        text = str(exc).lower()
        if "lock" in text or "in use" in text or "opened" in text or lite_file_locked(Path(uri)):
            raise in_use from exc
        raise ProviderError(f"cannot open Milvus Lite at {uri}: {exc}",
                            hint="check vector_db.uri") from exc
    OPENED_IN_THIS_PROCESS.add(uri)
    LITE_HOLDERS[os.path.abspath(uri)] += 1
    return GuardedClient(client, uri)


def close_lite_client(client: GuardedClient) -> None:
    """Close a client from ``open_lite_client``; the file's last client also stops milvus-lite's server for it.

    The stop releases the file's lock and lets a later open in this process start a fresh server (milvus-lite's
    ``release_server``; a milvus-lite without it keeps the server, as before).
    """
    try:
        client.raw.close()
    finally:
        path = os.path.abspath(client.uri)
        LITE_HOLDERS[path] -= 1
        if LITE_HOLDERS[path] <= 0:
            del LITE_HOLDERS[path]
            _release_server(path)


def _release_server(path: str) -> None:
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return
    release = getattr(server_manager_instance, "release_server", None)
    if release is None:
        return
    try:
        release(path)
    except Exception as exc:  # a failing stop must not turn a finished command into an error
        log.debug("milvus-lite did not release %s: %s", path, exc)
    # the file stays in OPENED_IN_THIS_PROCESS: a pymilvus client of the caller's own on the same file (it starts
    # its own server, which holds the lock) is this process, not another; were another process to take the file
    # meanwhile, the open fails and the probe after the failure names it
