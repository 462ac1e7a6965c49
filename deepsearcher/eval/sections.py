"""What the benchmark scripts share: writing a measured section into docs/benchmarks.md, and the sample app they
measure agents on (data/ loaded into a temporary Milvus Lite file as two collections)."""

from __future__ import annotations

import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from deepsearcher.app import DeepSearcher


def replace_section(path: Path, heading: str, text: str) -> None:
    """Put ``text`` (which starts with ``heading``, a ``## …`` line) into ``path``: in place of the section with that
    heading (up to the next ``## `` heading), else at the end. A missing file starts as ``# Benchmarks``."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = old.find(heading)
    if start == -1:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        nxt = old.find("\n## ", start + len(heading))
        new = old[:start] + text + (old[nxt:] if nxt != -1 else "")
    path.write_text(new, encoding="utf-8")


def publish(text: str, heading: str, out: str | Path | None) -> None:
    """Print a section; with ``out``, also write it into that Markdown file (``replace_section``)."""
    print(text)
    if out:
        replace_section(Path(out), heading, text)
        print(f"written to {out}", file=sys.stderr)


@contextmanager
def sample_app(data: Path) -> Iterator[DeepSearcher]:
    """A ``DeepSearcher`` without an LLM over a fresh Milvus Lite file holding ``data`` (the repository's data/) as
    two collections: ``milvus_docs`` (data/milvus_docs) and ``samples`` (the PDF, office files and web page)."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        app = DeepSearcher(load_settings(None, {"vector_db": {"uri": str(Path(tmp) / "bench.db")}, "llm": None}))
        try:
            app.load([str(data / "milvus_docs")], "milvus_docs",
                     "Milvus documentation: overview, Milvus Lite, consistency, limits, sparse vectors")
            app.load([str(data / "pdf"), str(data / "office"), str(data / "html")], "samples",
                     "Sample files: a PDF about Milvus, an employee handbook, a slide deck, a web page about ducks")
            yield app
        finally:
            app.close()
