"""BM25 on Chinese and Japanese text in Milvus Lite: the standard analyzer cannot segment it, so such searches run
dense with a notice (never a silent empty BM25 list); ``vector_db.bm25_analyzer: jieba`` segments it and BM25 finds
the passage."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.events import Event, RetrievalNotice

pytestmark = pytest.mark.integration

PASSAGES = {
    "beijing.txt": "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "tokyo.txt": "東京は日本の首都であり、日本で最大の都市です。",
    "paris.txt": "Paris is the capital of France and its largest city.",
}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in PASSAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def names(hits) -> list[str]:
    return [Path(h.chunk.source).name for h in hits]


def test_standard_analyzer_says_bm25_cannot_serve_chinese_and_runs_dense(make_app, docs: Path) -> None:
    app = make_app()
    app.load([str(docs)], "cities", "Capitals")
    events: list[Event] = []
    hits = app.retrieve("中国的首都是哪里", top_k=3, mode="bm25", on_event=events.append)
    (notice,) = [e for e in events if isinstance(e, RetrievalNotice)]
    assert (notice.requested, notice.mode) == ("bm25", "dense")
    assert notice.notice.startswith("BM25 cannot serve this language here: collection 'cities' splits words with "
                                    "the standard analyzer")
    assert len(hits) == 3  # dense ran: results, not the empty list BM25 gives
    english: list[Event] = []
    assert names(app.retrieve("capital of France", top_k=1, mode="bm25", on_event=english.append)) == ["paris.txt"]
    assert english == []  # English text: BM25 serves it, no notice


def test_jieba_analyzer_finds_chinese_and_japanese_by_bm25(make_app, docs: Path) -> None:
    pytest.importorskip("jieba", reason="the jieba analyzer needs pip install 'deepsearcher[cjk]'")
    app = make_app({"vector_db": {"uri": str(docs.parent / "cjk.db"), "bm25_analyzer": "jieba"}})
    app.load([str(docs)], "cities", "Capitals")
    events: list[Event] = []
    assert names(app.retrieve("政治中心", top_k=1, mode="bm25", on_event=events.append)) == ["beijing.txt"]
    assert names(app.retrieve("日本の最大の都市", top_k=1, mode="bm25", on_event=events.append)) == ["tokyo.txt"]
    assert names(app.retrieve("capital of France", top_k=1, mode="bm25", on_event=events.append)) == ["paris.txt"]
    assert events == []
    assert app.store.text_analyzer("cities") == "jieba"
