"""Hybrid retrieval finds a chunk that matches the query only by an exact rare keyword (a product code)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CODE = "QX-8812-ZT"
# 60 chunks about water filters: more than the hybrid search's candidate depth, so the dense list is all water filters
BRANDS = ["AquaPure", "ClearFlow", "BlueSpring", "PureTap", "HydroMax", "RiverStone"]
KINDS = ["countertop", "under-sink", "pitcher", "refrigerator", "shower"]
FEATURES = ["removes chlorine and improves the taste of tap water",
            "uses an activated carbon cartridge that lasts six months"]
WATER = [f"The {brand} {kind} water filter {feature}." for brand in BRANDS for kind in KINDS for feature in FEATURES]
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
