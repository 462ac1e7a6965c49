"""A load says when a source's text is in a script the embedding model cannot represent (the bundled MiniLM maps
Thai letters to [UNK]) instead of embedding it silently; text it can represent gets no notice."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.events import Event, LoadSource

pytestmark = pytest.mark.integration

THAI = "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย และเป็นเมืองที่มีประชากรมากที่สุด"
GERMAN = "Berlin ist die Hauptstadt Deutschlands und mit rund 3,8 Millionen Einwohnern die größte Stadt."


def test_thai_text_gets_a_load_notice_and_german_does_not(make_app, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bangkok.txt").write_text(THAI, encoding="utf-8")
    (docs / "berlin.txt").write_text(GERMAN, encoding="utf-8")
    events: list[Event] = []
    summary = make_app().load([str(docs)], "cities", "Capitals", on_event=events.append)
    notices = {Path(f.source).name: f.notice for f in summary.files}
    assert notices["berlin.txt"] == ""
    assert notices["bangkok.txt"].endswith("of its letters (Thai) are unknown to the embedding model and stored as "
                                           "[UNK]: dense search cannot find that text (BM25 can); configure a "
                                           "multilingual embedding model for it")
    share = int(notices["bangkok.txt"].split("%")[0])
    assert 50 <= share <= 100  # Thai consonants are letters; its vowel signs are marks, not counted
    (event,) = [e for e in events if isinstance(e, LoadSource) and e.source.endswith("bangkok.txt")]
    assert event.notice == notices["bangkok.txt"]
