"""Opening a pymilvus ``MilvusClient`` and turning its failures into one-line ``ProviderError`` messages.

pymilvus configures its own loggers when it is imported (``pymilvus.settings.init_log``: logger ``pymilvus`` with
its own stderr handler, level WARNING, ``propagate=False``; ``pymilvus.milvus_client`` and ``pymilvus.bulk_writer``
likewise at INFO), so levels set before the import are reset by it. Two of its children print tracebacks on a failed
call: ``pymilvus.decorators`` (``_log_rpc_error``: "RPC error: [get_loading_progress] ... Traceback: ...", ERROR)
and ``pymilvus.client.connection_manager`` ("Connection recovery failed", WARNING with ``exc_info``). The failure
itself reaches us as an exception, so ``quiet_logs.quiet_libraries`` silences those loggers after the import unless
the root logger is at DEBUG (``deepsearcher --debug``).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import re
from pathlib import Path
from typing import Any, Callable

from deepsearcher.errors import DiskFullError, ProviderError
from deepsearcher.quiet_logs import quiet_libraries

log = logging.getLogger(__name__)

#: gRPC status names in an exception chain, and what they mean for the user
_UNREACHABLE = {"UNAVAILABLE", "DEADLINE_EXCEEDED"}
_REFUSED = {"UNAUTHENTICATED", "PERMISSION_DENIED"}


def _grpc_status(exc: BaseException) -> str | None:
    """Name of the first gRPC status code in the exception's cause chain ("UNAVAILABLE", ...), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "code", None)
        if callable(code):
            try:
                status = code()
            except Exception:  # noqa: BLE001 - a code() that needs arguments is not a gRPC error
                status = None
            name = getattr(status, "name", None)
            if isinstance(name, str):
                return name
        current = current.__cause__ or current.__context__
    return None


#: how a full disk shows in a store's error text (Milvus server, Milvus Lite, MinIO, RocksDB, the OS)
_NO_SPACE = re.compile(r"no space left|ENOSPC|errno 28|disk (is )?full|disk quota exceeded|insufficient (disk|storage)"
                       r"|not enough (disk )?space|XMinioStorageFull|storage full", re.I)


def is_disk_full(exc: BaseException) -> bool:
    """True when ``exc`` or an exception in its cause chain says the disk is full (``OSError`` ENOSPC / EDQUOT, or
    a message such as "No space left on device")."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if _NO_SPACE.search(str(getattr(current, "message", None) or current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def disk_full_error(uri: str) -> DiskFullError:
    """"disk full at <folder>" for a Milvus Lite file, or the server's URI: the one line a full disk shows."""
    lite = not uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))
    where = str(Path(uri).resolve().parent) if lite else f"the Milvus server {uri}"
    return DiskFullError(f"disk full at {where}: the vector store cannot write; the load stopped, and the chunks "
                         "stored before are kept",
                         hint="free some space (or move vector_db.uri to a larger disk), then run the same load "
                              "again: it resumes where it stopped, nothing is duplicated")


def _message(exc: BaseException) -> str:
    """pymilvus's message without its ``<MilvusException: (code=.., message=..)>`` wrapping."""
    return str(getattr(exc, "message", None) or exc).strip()


def translate_error(exc: BaseException, uri: str, action: str, *, db_name: str | None = None,
                    token_set: bool = False) -> ProviderError:
    """One clear ``ProviderError`` for a failed pymilvus call.

    Args:
        exc: the pymilvus / gRPC exception.
        uri: the Milvus URI (named in the message).
        action: what was being done, e.g. "connect" or "search".
        db_name: the configured database (named when the server says it does not exist).
        token_set: whether a token was sent (changes the hint for a refused connection).
    """
    status = _grpc_status(exc)
    text = _message(exc)
    if is_disk_full(exc):
        return disk_full_error(uri)
    if status in _REFUSED:
        detail = "the token was refused" if token_set else "it requires authentication and no token was given"
        return ProviderError(f"Milvus at {uri} refused the connection: {detail}",
                             hint="put user:password (or a Zilliz Cloud API key) in an environment variable and "
                                  "name it in vector_db.token_env")
    if status in _UNREACHABLE or "server unavailable" in text:
        tls = uri.startswith("https://")
        return ProviderError(f"cannot reach Milvus at {uri} ({action}): the server is down or not listening there"
                             + (", or it does not speak TLS" if tls else ""),
                             hint=f"if the server does not use TLS, write http://{uri[len('https://'):]}" if tls else
                             "start the Milvus server, or fix vector_db.uri (e.g. http://localhost:19530)")
    if db_name and "database not found" in text:
        return ProviderError(f"Milvus at {uri} has no database {db_name!r}",
                             hint="create it (MilvusClient.create_database, or the Milvus CLI / Attu), or fix "
                                  "vector_db.db_name")
    return ProviderError(f"Milvus at {uri} failed to {action}: {text}",
                         hint="run with --debug for pymilvus's own log")


class GuardedClient:
    """A ``MilvusClient`` whose failing calls raise ``ProviderError`` naming the URI (see ``translate_error``).

    Attribute access is passed through; every callable is wrapped. The raw client is ``GuardedClient.raw``.
    """

    def __init__(self, client: Any, uri: str, *, db_name: str | None = None, token_set: bool = False) -> None:
        self.raw = client
        self._uri = uri
        self._db_name = db_name
        self._token_set = token_set

    @property
    def uri(self) -> str:
        """The URI the client was opened with (as configured)."""
        return self._uri

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.raw, name)
        if not callable(attr):
            return attr
        return self._guard(attr, name)

    def _guard(self, func: Callable[..., Any], name: str) -> Callable[..., Any]:
        from pymilvus.exceptions import MilvusException

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except MilvusException as exc:
                raise translate_error(exc, self._uri, name.replace("_", " "), db_name=self._db_name,
                                      token_set=self._token_set) from exc
            except Exception as exc:
                if is_disk_full(exc):
                    raise disk_full_error(self._uri) from exc
                if _grpc_status(exc) is None:
                    raise
                raise translate_error(exc, self._uri, name.replace("_", " "), db_name=self._db_name,
                                      token_set=self._token_set) from exc

        return call


def open_server_client(uri: str, token: str | None, db_name: str | None, timeout_s: float) -> GuardedClient:
    """Connect to a Milvus server or Zilliz Cloud and check the connection (server version, database).

    Args:
        uri: http(s)://host:port.
        token: ``user:password`` or an API key, or None.
        db_name: database, or None for "default".
        timeout_s: seconds to wait for the server to answer the connection (pymilvus' default is 10).

    Raises:
        ProviderError: the server is down, refuses the token, or has no such database (one line naming the URI).
    """
    quiet_libraries("pymilvus", "grpc")  # before pymilvus imports gRPC, which reads GRPC_VERBOSITY then
    from pymilvus import MilvusClient

    quiet_libraries("pymilvus", "grpc")  # and after: pymilvus sets its loggers' levels when first imported
    kwargs: dict[str, Any] = {"uri": uri, "timeout": timeout_s}
    if token:
        kwargs["token"] = token
    if db_name:
        kwargs["db_name"] = db_name
    try:
        client = MilvusClient(**kwargs)
    except Exception as exc:  # MilvusException, ConnectionConfigException, grpc errors
        raise translate_error(exc, uri, "connect", db_name=db_name, token_set=bool(token)) from exc
    guarded = GuardedClient(client, uri, db_name=db_name, token_set=bool(token))
    if db_name:
        guarded.list_collections()  # the connection does not check the database; the first call would
    return guarded
