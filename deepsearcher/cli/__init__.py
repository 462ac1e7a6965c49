"""The command line: click commands (``commands``) and the only code that prints (``render``, ``render_research``,
``render_eval``; outside strings through ``safe_text``); ``config_docs`` writes the configuration reference."""

from deepsearcher.cli.commands import main, run

__all__ = ["main", "run"]
