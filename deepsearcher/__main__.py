"""``python -m deepsearcher``: the ``deepsearcher`` command (for an environment whose scripts folder is not on PATH)."""

from deepsearcher.cli import run

if __name__ == "__main__":
    run()
