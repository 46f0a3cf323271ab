"""What every `evigate` command shares: the error that becomes one line on stderr."""

from __future__ import annotations

DEFAULT_TARGET = "127.0.0.1:50051"


class CliError(Exception):
    """A message for the user; exit status 1."""
