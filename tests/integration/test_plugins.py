"""A third-party distribution registers an embedder, a chat model and an agent through the ``deepsearcher.providers``
entry-point group; they are used from config.yaml and ``--agent`` exactly like built-ins, with no change to the
package (issue #10).

The distribution is written into tmp_path as an installed package would leave it (a module plus a ``.dist-info``
folder with ``entry_points.txt``), and the CLI runs in a subprocess with that folder on ``PYTHONPATH``, so
``importlib.metadata`` discovers it the way it discovers a pip-installed plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

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


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "ds_demo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "deepsearcher_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deepsearcher-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[deepsearcher.providers]\ndemo = ds_demo_plugin:register\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "HF_HUB_OFFLINE": "1",
            "DO_NOT_TRACK": "1", "COLUMNS": "200"}


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
           "openai_compatible, demo_hash" in unknown
    bad_agent = cli(plugin_env, tmp_path, "query", "q", "--agent", "nope")
    assert bad_agent.returncode == 2 and "'nope' is not one of 'auto', 'deep_search'" in bad_agent.stderr
    assert "'demo_first_hit'" in bad_agent.stderr
