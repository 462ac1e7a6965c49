"""Partition files with unstructured and print ``{path: {"text": ...} | {"error": ...}}`` as JSON (one process for
all files). Run by scripts/fidelity_candidates.py under the interpreter named by ``UNSTRUCTURED_PYTHON`` (a separate
venv: unstructured's dependencies conflict with the project's, see docs/benchmarks.md).

Usage: UNSTRUCTURED_PYTHON=/path/python scripts/unstructured_partition.py FILE...
"""

from __future__ import annotations

import json
import os
import sys

os.environ["DO_NOT_TRACK"] = "1"  # before the import: unstructured reports usage at import time otherwise
os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")


def main(paths: list[str]) -> int:
    from unstructured.partition.auto import partition

    out: dict[str, dict[str, str]] = {}
    for path in paths:
        try:
            elements = partition(filename=path, strategy="fast")
            out[path] = {"text": "\n\n".join(e.text for e in elements if getattr(e, "text", ""))}
        except Exception as exc:  # a library failing on a fixture is the measured outcome
            out[path] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
