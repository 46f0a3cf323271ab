"""The in-process App fixture of the gRPC tests, for the second world's gRPC run."""

from tests.server.conftest import app_factory

__all__ = ["app_factory"]
