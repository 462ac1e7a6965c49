"""The fidelity suite's fixture record and its scoring rule (shared by the tests and scripts/bench_fidelity.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Fixture:
    """One small document and what a loader must store from it.

    Attributes:
        name: file path relative to the build folder (also the fixture id), e.g. ``docx/sdt_block.docx``.
        fmt: format family: pdf, docx, pptx, xlsx, html, md, txt, json, epub.
        data: the file's bytes.
        expected: phrases that must be in the stored text (compared after whitespace folding).
        noise: strings that must not be in the stored text (base64 runs, NULs, deleted text, front matter keys...).
        once: phrases that must be stored at most once (a second copy is noise: text boxes, merged cells).
        pages: 1-based page/slide number -> phrases that must be in that page's Document.
        options: extractor options this fixture needs (e.g. ``{"text_path": "data[].body"}``).
        title: the Document title the extractor must give, when the document declares one.
        skip: a fragment of the SkipSource reason when the file must be skipped instead (nothing expected).
        skipped_records: JSON: how many records must be reported as dropped.
        source_case: the ../shared/cases/ingest script this fixture reproduces, if any.
        note: why the fixture exists (the kind of input it stands for).
    """

    name: str
    fmt: str
    data: bytes
    expected: tuple[str, ...] = ()
    noise: tuple[str, ...] = ()
    once: tuple[str, ...] = ()
    pages: dict[int, tuple[str, ...]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    skip: str | None = None
    skipped_records: int | None = None
    source_case: str | None = None
    note: str = ""

    def manifest_entry(self) -> dict[str, Any]:
        """JSON-serialisable manifest entry (everything but the bytes)."""
        return {"name": self.name, "format": self.fmt, "expected": list(self.expected), "noise": list(self.noise),
                "once": list(self.once), "pages": {str(k): list(v) for k, v in self.pages.items()},
                "options": self.options, "title": self.title, "skip": self.skip,
                "skipped_records": self.skipped_records, "source_case": self.source_case, "note": self.note}


def fold(text: str) -> str:
    """Fold every whitespace run to one space (the comparison is insensitive to line breaks and indentation)."""
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class Score:
    """Share of expected phrases found and share of noise items absent for one fixture and one extractor."""

    found: int
    expected: int
    clean: int
    noise: int
    missing: tuple[str, ...] = ()
    present_noise: tuple[str, ...] = ()

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def cleanliness(self) -> float:
        return self.clean / self.noise if self.noise else 1.0

    @property
    def perfect(self) -> bool:
        return self.found == self.expected and self.clean == self.noise


def score(fixture: Fixture, text: str) -> Score:
    """Score stored text (all Documents joined) against a fixture: expected found, noise absent, ``once`` <= 1."""
    folded = fold(text)
    missing = tuple(p for p in fixture.expected if fold(p) not in folded)
    bad = [n for n in fixture.noise if (fold(n) in folded if fold(n) else n in text)]  # e.g. a lone NBSP
    bad += [f"twice: {p}" for p in fixture.once if folded.count(fold(p)) > 1]
    n_noise = len(fixture.noise) + len(fixture.once)
    return Score(found=len(fixture.expected) - len(missing), expected=len(fixture.expected),
                 clean=n_noise - len(bad), noise=n_noise, missing=missing, present_noise=tuple(bad))
