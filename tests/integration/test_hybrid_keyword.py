"""Hybrid retrieval finds a chunk that matches the query only by an exact rare keyword (a product code)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CODE = "QX-8812-ZT"
WATER = [
    "The countertop water filter removes chlorine and improves the taste of tap water in minutes.",
    "Replace the water filter cartridge every six months to keep the flow rate high.",
    "Our under-sink water filtration system uses activated carbon to reduce sediment and odours.",
    "A pitcher water filter is the cheapest way to get cleaner drinking water at home.",
    "Reverse osmosis water filters remove dissolved salts but waste some water while filtering.",
    "The refrigerator water filter should be flushed with two gallons after installation.",
    "Shower head water filters soften hard water and protect hair and skin from chlorine.",
    "Whole-house water filtration protects pipes and appliances from scale and rust.",
]
TARGET = f"Spare sealing ring for the pressure cooker lid, order code {CODE}, fits six-litre pots made after 2019."


@pytest.fixture
def app(make_app, tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(WATER):
        (docs / f"water_{i}.txt").write_text(text, encoding="utf-8")
    (docs / "gasket.txt").write_text(TARGET, encoding="utf-8")
    app = make_app()
    app.load([str(docs)], "products", "Product catalogue")
    return app


def test_hybrid_returns_the_exact_code_match_that_dense_misses(app) -> None:
    query = f"water filter {CODE}"
    sources = {mode: [Path(h.chunk.source).name for h in app.retrieve(query, top_k=3, mode=mode)]
               for mode in ("dense", "bm25", "hybrid")}
    assert "gasket.txt" not in sources["dense"]  # semantically the query is about water filters
    assert sources["bm25"][0] == "gasket.txt"  # the rare code tokens dominate BM25
    assert "gasket.txt" in sources["hybrid"]
    assert any(name.startswith("water_") for name in sources["hybrid"])  # and the semantic matches stay
