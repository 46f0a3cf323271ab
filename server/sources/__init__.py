"""Live evidence sources (Prometheus, Alertmanager, ...): typed clients below the tool layer."""
