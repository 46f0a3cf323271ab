"""Data sources the tools read: log files, Prometheus and Alertmanager, embeddings for retrieval."""
