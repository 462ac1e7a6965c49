"""The package has no import cycles (issues #10, #18), counting function-level (lazy) imports *and* imports made
only for type checking (``if TYPE_CHECKING:``): a cycle closed by a type hint is still a cycle for a reader. The
layers point one way: the provider protocols name nothing from ``agents/``, and ``agents/`` receives what it uses
from ``ingest/`` from the composition root instead of importing it."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import deepsearcher


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("deepsearcher", exclude_type_checking_imports=False)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    cycles = sorted({tuple(sorted((module, other)))
                     for module in graph.modules
                     for other in graph.find_modules_directly_imported_by(module)
                     if graph.chain_exists(importer=other, imported=module)})
    assert not cycles, f"import cycles: {cycles}"


def type_checking_imports() -> list[tuple[str, str]]:
    """``(module, imported)`` for every ``from deepsearcher… import`` under ``if TYPE_CHECKING:`` in the package."""
    root = Path(deepsearcher.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                found += [(module, stmt.module) for stmt in node.body
                          if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").startswith("deepsearcher")]
    return found


def test_type_checking_imports_are_counted(graph: grimp.ImportGraph) -> None:
    found = type_checking_imports()
    assert ("deepsearcher.app", "deepsearcher.agents.state") in found
    missing = [(module, imported) for module, imported in found
               if not graph.direct_import_exists(importer=module, imported=imported, as_packages=True)]
    assert not missing, f"left out of the graph: {missing}"


@pytest.mark.parametrize("low, high", [
    ("deepsearcher.vectordb", "deepsearcher.ingest"),
    ("deepsearcher.vectordb", "deepsearcher.agents"),
    ("deepsearcher.ingest", "deepsearcher.agents"),
    ("deepsearcher.types", "deepsearcher.app"),
    ("deepsearcher.llm", "deepsearcher.agents"),
    ("deepsearcher.agents", "deepsearcher.server"),
    ("deepsearcher.protocols", "deepsearcher.agents"),
    ("deepsearcher.protocols", "deepsearcher.llm"),
    ("deepsearcher.agents", "deepsearcher.ingest"),
    ("deepsearcher.agents", "deepsearcher.compose"),
    ("deepsearcher.agents", "deepsearcher.app"),
])
def test_lower_layers_never_import_higher_ones(graph: grimp.ImportGraph, low: str, high: str) -> None:
    chains = graph.find_shortest_chains(importer=low, imported=high, as_packages=True)
    assert not chains, f"{low} reaches {high}: {sorted(chains)[:3]}"


def test_only_the_composition_root_uses_compose(graph: grimp.ImportGraph) -> None:
    assert graph.find_modules_that_directly_import("deepsearcher.compose") == {"deepsearcher.app"}
