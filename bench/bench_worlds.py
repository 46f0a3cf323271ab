"""How many labelled questions each world answers correctly, per family and language.

    python bench/bench_worlds.py              # the second world (tests/worlds/tidewater) and the demo
    python bench/bench_worlds.py --failures   # and every wrong answer with its reasons

Each world is a --data-dir; its questions and their code-judged expectations are in
tests/worlds/<world>/questions.json (tests/worlds/judge.py says how an answer is judged). The
offline agents run on a throwaway SQLite database, as `evigate serve --data-dir` would.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evigate.storage import Database  # noqa: E402
from tests.worlds.judge import DATA_DIRS, failures, run_world, table  # noqa: E402


async def main(show_failures: bool) -> int:
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(f"sqlite+aiosqlite:///{tmp}/bench.db", pool_size=5)
        try:
            for world in DATA_DIRS:
                judgements = await run_world(world, db)
                print(table(world, judgements))
                if show_failures:
                    print(failures(judgements))
        finally:
            await db.close()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--failures", action="store_true", help="print every wrong answer")
    sys.exit(asyncio.run(main(parser.parse_args().failures)))
