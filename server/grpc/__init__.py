"""The gRPC surface: servicers, interceptors, error mapping, validation, health, metrics."""
