"""How many labelled questions each world answers correctly, per family and language.

    python bench/bench_worlds.py                  # tidewater and the demo, then kestrel on its own
    python bench/bench_worlds.py --world kestrel  # one world
    python bench/bench_worlds.py --failures       # and every wrong answer with its reasons

Each world is a --data-dir; its questions and their code-judged expectations are in
tests/worlds/<world>/questions.json (tests/worlds/judge.py says how an answer is judged). The
offline agents run on a throwaway SQLite database, as `evigate serve --data-dir` would.

kestrel was written questions-first, before the service learnt anything of it, so it is reported
apart from the two worlds that grew with the code, with its score per way of asking. Its alerts
and metrics are live: a VictoriaMetrics and an Alertmanager (the Debian packages' binaries) are
started on free loopback ports with temporary storage, loaded from tests/worlds/kestrel/live/, and
stopped at the end (tests/worlds/live.py).
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
from tests.worlds.judge import DATA_DIRS, LIVE_WORLDS, by_class, failures, run_world, table  # noqa: E402
from tests.worlds.live import start_live_sources  # noqa: E402


async def main(worlds: list[str], show_failures: bool) -> int:
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(f"sqlite+aiosqlite:///{tmp}/bench.db", pool_size=5)
        try:
            for world in worlds:
                if world in LIVE_WORLDS:
                    workdir = Path(tmp) / world
                    live = start_live_sources(DATA_DIRS[world], workdir / "servers")
                    try:
                        judgements = await run_world(world, db, live, workdir)
                    finally:
                        live.stop()
                    print(f"\n{table(world, judgements)}\n{by_class(judgements)}")
                else:
                    judgements = await run_world(world, db)
                    print(table(world, judgements))
                if show_failures:
                    print(failures(judgements))
        finally:
            await db.close()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--world", choices=sorted(DATA_DIRS), action="append", help="only this world")
    parser.add_argument("--failures", action="store_true", help="print every wrong answer")
    args = parser.parse_args()
    # the worlds that grew with the code first, the questions-first ones after them, on their own
    everything = sorted(DATA_DIRS, key=lambda w: (w in LIVE_WORLDS, list(DATA_DIRS).index(w)))
    sys.exit(asyncio.run(main(args.world or everything, args.failures)))
