"""Data sources the tools read: log files, and later Prometheus, Alertmanager, embeddings."""
