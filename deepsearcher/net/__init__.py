"""Network rules shared by every component that connects out: ``policy`` decides which addresses may be reached
(docs/security.md), ``http`` is the guarded HTTP client that applies it to every connection."""
