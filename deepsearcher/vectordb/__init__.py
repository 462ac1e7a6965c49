"""Vector stores: chunk storage with dense (and BM25) search."""
