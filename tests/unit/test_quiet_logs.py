"""Other libraries' logging is silenced in one place (``quiet_logs``), and ``--debug`` leaves it all alone."""

from __future__ import annotations

import logging
from typing import Iterator

import pytest

from deepsearcher.errors import ProviderError, first_line, without_hint
from deepsearcher.quiet_logs import LOGGERS, quiet_libraries


@pytest.fixture
def saved_levels(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Restore every logger level and GRPC_VERBOSITY the test changes."""
    names = [name for loggers in LOGGERS.values() for name in loggers]
    levels = {name: logging.getLogger(name).level for name in names}
    monkeypatch.delenv("GRPC_VERBOSITY", raising=False)
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def test_named_libraries_are_silenced_and_others_left_alone(saved_levels: None) -> None:
    import os

    logging.getLogger("ray").setLevel(logging.INFO)
    quiet_libraries("pymilvus", "grpc", debug=False)
    assert logging.getLogger("pymilvus.milvus_client").level == logging.CRITICAL + 1
    assert logging.getLogger("grpc._server").level == logging.CRITICAL
    assert os.environ["GRPC_VERBOSITY"] == "NONE"
    assert logging.getLogger("ray").level == logging.INFO
    quiet_libraries(debug=False)
    assert logging.getLogger("ray").level == logging.CRITICAL
    assert logging.getLogger("httpx").level == logging.ERROR


def test_debug_leaves_every_logger_as_it_is(saved_levels: None) -> None:
    import os

    logging.getLogger("httpx").setLevel(logging.INFO)
    quiet_libraries(debug=True)
    assert logging.getLogger("httpx").level == logging.INFO and "GRPC_VERBOSITY" not in os.environ


def test_an_error_is_shortened_one_way() -> None:
    error = ProviderError("the server refused the call\nline two", hint="start it")
    assert str(error) == "the server refused the call\nline two\n  hint: start it"
    assert first_line(error) == first_line(str(error)) == "the server refused the call"
    assert without_hint(error) == "the server refused the call\nline two"
    assert without_hint(ValueError()) == ""
