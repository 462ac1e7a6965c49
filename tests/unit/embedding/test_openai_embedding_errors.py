"""An OpenAI-compatible embeddings endpoint that cannot be reached is named, with its cause and the fix (found by a
new user: "embeddings endpoint failed: Connection error." named neither the URL nor the refusal)."""

from __future__ import annotations

import socket

import pytest
from pydantic import ValidationError

from deepsearcher.embedding.openai_compatible import OpenAICompatibleEmbedder
from deepsearcher.embedding.options import OpenAICompatibleEmbeddingOptions
from deepsearcher.errors import ProviderError


def test_a_refused_connection_names_the_endpoint_and_the_fix():
    with socket.socket() as sock:  # a port nothing listens on: a real refusal
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    embedder = OpenAICompatibleEmbedder(OpenAICompatibleEmbeddingOptions(model="e", base_url=url, max_retries=0))
    with pytest.raises(ProviderError) as err:
        embedder.embed_query("hello")
    assert f"cannot reach the embeddings endpoint at {url}: " in str(err.value)
    assert "refused" in str(err.value).lower()
    assert (err.value.hint or "").startswith("start the server or fix embedding.base_url")


def test_a_base_url_without_its_scheme_is_a_config_error():
    with pytest.raises(ValidationError, match="must start with http:// or https://"):
        OpenAICompatibleEmbeddingOptions(model="e", base_url="localhost:8080/v1")
