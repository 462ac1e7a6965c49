"""The test kit, also for plugin authors: fakes that satisfy each protocol (``fakes``: ``HashEmbedder``,
``MemoryStore``; ``scripted``: ``ScriptedChatModel``) and the ``VectorStore`` conformance suite (``conformance``).

Use them through the public constructor, never by writing private attributes::

    app = DeepSearcher(settings, embedder=HashEmbedder(), store=MemoryStore(), llm=ScriptedChatModel([...]))
"""

from deepsearcher.testing.fakes import HashEmbedder, MemoryStore
from deepsearcher.testing.scripted import ScriptedCall, ScriptedChatModel, ScriptExhaustedError

__all__ = ["HashEmbedder", "MemoryStore", "ScriptedCall", "ScriptedChatModel", "ScriptExhaustedError"]
