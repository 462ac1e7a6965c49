"""Silencing other libraries' own log output, the one place that knows which loggers are noisy and how loud each may be.

Several libraries print to stderr through their own loggers what deepsearcher already reports through its events and
errors: pymilvus (tracebacks on a failed call; ``vectordb.connection`` explains its loggers), gRPC (keep-alive and TLS
notices of its C core; milvus-lite's in-process server logging unimplemented optional RPCs), Ray (its startup and
operator notices), httpx (one INFO line per request), sentence-transformers and transformers. Some of them set their
loggers' levels when first imported, so ``quiet_libraries`` is called again right after each import (``--debug``,
i.e. the root logger at DEBUG, leaves them all alone).
"""

from __future__ import annotations

import logging
import os

#: library -> (logger name -> the lowest level it still shows); CRITICAL + 1 shows nothing
LOGGERS: dict[str, dict[str, int]] = {
    "pymilvus": {"pymilvus": logging.CRITICAL + 1, "pymilvus.milvus_client": logging.CRITICAL + 1,
                 "pymilvus.bulk_writer": logging.CRITICAL + 1},
    # milvus-lite logs (with a traceback) what reaches us as an exception anyway, and a flush a Ctrl-C cut short
    "milvus_lite": {"milvus_lite": logging.CRITICAL},
    "grpc": {"grpc": logging.CRITICAL, "grpc._server": logging.CRITICAL},
    "ray": {"ray": logging.CRITICAL, "ray.data": logging.CRITICAL},
    "httpx": {"httpx": logging.ERROR},
    "transformers": {"sentence_transformers": logging.ERROR, "transformers": logging.ERROR},
}
#: library -> environment variables it reads when it starts (set only when unset)
ENVIRONMENT: dict[str, dict[str, str]] = {
    "grpc": {"GRPC_VERBOSITY": "NONE"},  # read by gRPC's C core when its first channel starts
}


def quiet_libraries(*libraries: str, debug: bool | None = None) -> None:
    """Silence the named libraries (default: all of ``LOGGERS``) unless ``debug`` (default: the root logger is at
    DEBUG, as with ``deepsearcher --debug``). Call it after importing a library that resets its loggers on import;
    call it before for the environment variables a library reads when it starts.

    Raises:
        KeyError: a library this module does not know (a programming error).
    """
    if debug is None:
        debug = logging.getLogger().isEnabledFor(logging.DEBUG)
    if debug:
        return
    for library in libraries or tuple(LOGGERS):
        for name, value in ENVIRONMENT.get(library, {}).items():
            os.environ.setdefault(name, value)
        for name, level in LOGGERS[library].items():
            logging.getLogger(name).setLevel(level)
