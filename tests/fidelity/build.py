"""Build the fidelity suite: small documents of every format, each with the text that must be stored and the noise
that must not, into OUT_DIR (files + ``manifest.json``).

Usage: python tests/fidelity/build.py OUT_DIR

Deterministic (fixed seeds and zip timestamps) except the three encrypted PDFs, whose keys pypdf draws at random.
Synthetic text only, no personal data. Needs python-docx, python-pptx, openpyxl, pypdf with cryptography.
The cases of ../shared/cases/ingest are rebuilt here from a copy of their logic (``source_case`` names them), so the
suite runs where that folder is absent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.fidelity`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fidelity import fx_data, fx_docx, fx_html, fx_pdf, fx_pptx, fx_text  # noqa: E402
from tests.fidelity.fixture import Fixture  # noqa: E402


def all_fixtures() -> list[Fixture]:
    """Every fixture of the suite, in a stable order."""
    fixtures = [*fx_pdf.all_fixtures(), *fx_docx.all_fixtures(), *fx_pptx.all_fixtures(), *fx_html.all_fixtures(),
                *fx_text.all_fixtures(), *fx_data.all_fixtures()]
    names = [f.name for f in fixtures]
    if len(names) != len(set(names)):
        raise ValueError("duplicate fixture names")
    return fixtures


def build(out: Path) -> list[Fixture]:
    """Write every fixture under ``out`` and its manifest as ``out/manifest.json``."""
    fixtures = all_fixtures()
    for fixture in fixtures:
        path = out / fixture.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fixture.data)
    manifest = [f.manifest_entry() for f in fixtures]
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return fixtures


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    fixtures = build(Path(argv[0]))
    by_format: dict[str, int] = {}
    for f in fixtures:
        by_format[f.fmt] = by_format.get(f.fmt, 0) + 1
    print(f"{len(fixtures)} fixtures in {argv[0]}: " + ", ".join(f"{k} {v}" for k, v in sorted(by_format.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
