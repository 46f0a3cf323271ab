"""`python -m evigate.server` = `evigate serve` (with any extra serve flags);
`python -m evigate.server chat …` too."""

from __future__ import annotations

import sys

from evigate.server.cli import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        args = ["serve", *args]
    raise SystemExit(main(args))
