"""The `evigate` command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    sys.stderr.write(f"evigate: command not available yet: {' '.join(args)}\n")
    return 2
