"""The package has no import cycles (issue #10), counting function-level (lazy) imports and leaving out imports
made only for type checking; and the layers point one way."""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("deepsearcher", exclude_type_checking_imports=True)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    cycles = sorted({tuple(sorted((module, other)))
                     for module in graph.modules
                     for other in graph.find_modules_directly_imported_by(module)
                     if graph.chain_exists(importer=other, imported=module)})
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("low, high", [
    ("deepsearcher.vectordb", "deepsearcher.ingest"),
    ("deepsearcher.vectordb", "deepsearcher.agents"),
    ("deepsearcher.ingest", "deepsearcher.agents"),
    ("deepsearcher.types", "deepsearcher.app"),
    ("deepsearcher.llm", "deepsearcher.agents"),
    ("deepsearcher.agents", "deepsearcher.server"),
])
def test_lower_layers_never_import_higher_ones(graph: grimp.ImportGraph, low: str, high: str) -> None:
    chains = graph.find_shortest_chains(importer=low, imported=high, as_packages=True)
    assert not chains, f"{low} reaches {high}: {sorted(chains)[:3]}"
