"""The bases of every options model: a provider's (``ProviderOptions``) and an agent's (``AgentOptions``).

They sit below ``deepsearcher.settings`` so that each provider's options can live beside the provider
(``llm/options.py``, ``embedding/options.py``, ``vectordb/options.py``, ``ingest/options.py``,
``websearch/base.py``) while ``settings`` imports the defaults it needs without an import cycle.
``deepsearcher.settings`` re-exports both bases, the names plugin authors use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Union

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import Self

PathResolver = Callable[[Union[str, Path]], Path]


class StrictModel(BaseModel):
    """A config model: an unknown key is an error (``extra="forbid"``) and assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ProviderOptions(StrictModel):
    """Base of every provider's options model: the section's ``provider:`` name plus the provider's own keys.

    Plugin authors subclass it (or ``LoaderOptions`` / ``CrawlScope`` / ``VectorDBOptions`` for those kinds) with
    ``extra="forbid"`` kept, give every field a ``description``, and register the model with the provider.
    """

    provider: str = Field(..., description="Registered provider name (`deepsearcher config providers`).")

    def resolved(self, resolve: PathResolver) -> Self:
        """These options with relative file paths resolved (``resolve`` maps a path against the config folder);
        providers whose options hold paths override it."""
        return self


class AgentOptions(StrictModel):
    """Base of an agent's options model (the ``agents.<name>`` section of the config)."""
