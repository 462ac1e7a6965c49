"""Options of the vector stores (the ``vector_db`` section of config.yaml): the base every store's options
subclass (``VectorDBOptions``, what the load and query paths read) and Milvus's own.

Kept apart from ``vectordb.milvus`` so that validating a config never imports pymilvus.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator
from typing_extensions import Self

from deepsearcher.options import PathResolver, ProviderOptions
from deepsearcher.vectordb.names import is_remote, lacks_scheme


class VectorDBOptions(ProviderOptions):
    """Base of every ``vector_db`` provider's options: what the load and query paths read."""

    default_collection: str = Field("deepsearcher", description="Collection used when none is given.")


class MilvusOptions(VectorDBOptions):
    """Milvus: a Lite file path, or a server / Zilliz Cloud URI (same code path)."""

    provider: Literal["milvus"] = "milvus"
    uri: str = Field("./milvus.db", description="Milvus Lite file (*.db) or http(s)://host:19530.")
    token: str | None = Field(None, description="Literal token is refused; use token_env.")
    token_env: str | None = Field(None, description="Environment variable holding user:password or API key.")
    db_name: str | None = Field(None, description="Database on a Milvus server.")
    connect_timeout_s: float = Field(10, gt=0, description="Seconds to wait for a Milvus server to answer the "
                                                           "connection before reporting it unreachable.")
    bm25_analyzer: Literal["standard", "jieba"] = Field(
        "standard", description="How BM25 splits text into words in collections created from now on: standard "
                                "(words between spaces and punctuation; a run of Chinese or Japanese characters is "
                                "one word, so BM25 finds nothing in such text and searches of it run dense, with a "
                                "notice) or jieba (Chinese word segmentation, also the kanji words of Japanese; "
                                "English as standard; on Milvus Lite needs pip install 'deepsearcher[cjk]').")
    hnsw_m: int = Field(16, ge=2, le=2048, description="Server collections: HNSW links per node (Milvus M); "
                                                       "more = better recall, more memory. Lite searches exactly.")
    hnsw_ef_construction: int = Field(200, ge=8, description="Server collections: HNSW candidate list while "
                                                             "building the index (Milvus efConstruction).")
    hnsw_ef: int = Field(256, ge=1, description="Server collections: HNSW candidate list per search (Milvus ef; "
                                                "raised to the number of results asked for). Measured recall@10 "
                                                "of exact: 0.988 at 100k chunks, 0.957 at 1M (512: 0.979); "
                                                "docs/benchmarks.md.")

    @field_validator("uri")
    @classmethod
    def _scheme_for_servers(cls, v: str) -> str:
        # checked before the path is resolved against the config's folder, which would hide the host:port
        if lacks_scheme(v):
            raise ValueError(f"{v!r} is a server address without its scheme: write http://{v} (a Milvus Lite file "
                             "is a path ending in .db)")
        return v

    @field_validator("token")
    @classmethod
    def _no_literal_token(cls, v: str | None) -> str | None:
        if v:
            raise ValueError("secrets are not read from the file: put the token in an environment variable "
                             "and name it in vector_db.token_env")
        return v

    def resolved(self, resolve: PathResolver) -> Self:
        return self if is_remote(self.uri) else self.model_copy(update={"uri": str(resolve(self.uri))})
