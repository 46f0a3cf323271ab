#!/usr/bin/env python3
"""Runs a command while every core is kept busy: the check that tests assert behaviour, not speed.

    python3 scripts/under_load.py [--cores N] [--max-seconds S] -- COMMAND [ARGS...]

One burner process per core (or `--cores`) spins a busy loop for as long as the command runs. The
burners stop when the command ends, and in any case after `--max-seconds` (default 3600): each
burner checks its own hard time bound, and it also ends when this script's process goes away (it
watches its parent), so a killed run leaves nothing spinning. The exit status is the command's.

Example: python3 scripts/under_load.py -- .venv/bin/python -m pytest tests/agents/llm -q
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time

# How often a burner looks at the clock and at its parent: each look costs nothing measurable.
_CHECK_EVERY = 200_000


def burn(max_seconds: float, parent: int) -> None:
    """Busy-loops until `max_seconds` have passed or the process `parent` is gone."""
    end = time.monotonic() + max_seconds
    spins = 0
    while True:
        spins += 1
        if spins % _CHECK_EVERY == 0 and (time.monotonic() >= end or os.getppid() != parent):
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cores = os.cpu_count() or 1
    parser.add_argument("--cores", type=int, default=cores, help="burners (default: every core)")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="hard bound on the burners")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")
    me = os.getpid()
    bound = args.max_seconds
    burners = [multiprocessing.Process(target=burn, args=(bound, me), daemon=True) for _ in range(args.cores)]
    for burner in burners:
        burner.start()
    print(f"under_load: {len(burners)} burners on {os.cpu_count()} cores, for {command[0]}", file=sys.stderr)
    try:
        status = subprocess.call(command)
    finally:
        for burner in burners:
            burner.terminate()
        for burner in burners:
            burner.join(10)
    return status


if __name__ == "__main__":
    sys.exit(main())
