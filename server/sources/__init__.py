"""Data sources the tools read: files, metrics and log back ends, embeddings."""
