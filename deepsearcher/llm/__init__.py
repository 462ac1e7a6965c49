"""Chat models: the ``ChatModel`` protocol, the OpenAI-compatible and in-process llama.cpp providers, the scripted fake
used by tests, and ``output`` (reasoning stripping and tolerant JSON parsing used at every call site)."""

from deepsearcher.llm.base import ChatModel, ChatResult, Message, MeteredChatModel
from deepsearcher.llm.scripted import ScriptedChatModel, ScriptExhaustedError

__all__ = ["ChatModel", "ChatResult", "Message", "MeteredChatModel", "ScriptedChatModel", "ScriptExhaustedError"]
