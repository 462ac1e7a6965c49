"""``python -m deepsearcher.cli``: the same entry point as the ``deepsearcher`` command."""

from deepsearcher.cli.commands import main

if __name__ == "__main__":  # pragma: no cover
    main()
