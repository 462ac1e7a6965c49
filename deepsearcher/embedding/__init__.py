"""Embedding providers: text -> L2-normalised float32 vectors (the ``Embedder`` protocol is in
``deepsearcher.protocols``)."""
