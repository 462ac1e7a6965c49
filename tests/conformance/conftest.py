"""Fixtures of this folder: the session's Milvus server (started on first use; one per session)."""

from tests.integration.milvus_server import milvus_server  # noqa: F401 - registered as a fixture by this import
