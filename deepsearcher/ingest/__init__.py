"""Ingestion: loaders and crawlers produce Documents, the splitter makes Chunks, the pipeline upserts them."""
