"""What every `evigate` command shares: the error that becomes one line on stderr."""

from __future__ import annotations

from evigate.rules.errors import EvigateError

DEFAULT_TARGET = "127.0.0.1:50051"


class CliError(EvigateError):
    """A message for the user; exit status 1."""
