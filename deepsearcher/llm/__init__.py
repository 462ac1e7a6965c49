"""Chat models: the OpenAI-compatible and in-process llama.cpp providers, the scripted fake used by tests
(``scripted``), the usage meter (``base``) and ``output`` (reasoning stripping and tolerant JSON parsing used at every
call site). The ``ChatModel`` protocol is in ``deepsearcher.protocols``."""
