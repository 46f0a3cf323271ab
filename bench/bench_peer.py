"""How many of the cases ported from HolmesGPT's evaluation suite the service answers correctly.

    python bench/bench_peer.py                     # both groups, the score per case and in total
    python bench/bench_peer.py --group logs        # one group
    python bench/bench_peer.py --case 09_crashpod  # some cases (repeat the flag)
    python bench/bench_peer.py --answers           # and every wrong answer

The cases are tests/peer/holmes/<id> (tests/peer/README.md says what they are and how they were
made). Each runs on a service started as `evigate serve --data-dir <case>/world` would start it,
with the offline agents, a throwaway SQLite database and, for a case with metric series, a
VictoriaMetrics of its own; its questions are judged by tests/worlds/judge.py. The Kubernetes group
needs a cluster source: until the service has a `kube_dump` setting (`--kube-dump DIR`), its cases
are reported as not run, and once it has, each case's dump is passed as that setting.
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

from tests.peer.holmes import GROUPS, CaseResult, load_cases, report, run_case  # noqa: E402


async def main(group: str | None, only: set[str], answers: bool) -> int:
    logging.disable(logging.WARNING)
    cases = [c for c in load_cases(group) if not only or c.id in only]
    unknown = only - {c.id for c in cases}
    if unknown:
        print(f"no such case: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            results.append(await run_case(case, Path(tmp) / case.id))
    print(report(results))
    if answers:
        for r in results:
            for j in r.judgements:
                if not j.correct:
                    print(f"\n{j.question.id} [{j.question.query}]\n{j.answer}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--group", choices=GROUPS, help="one group only")
    parser.add_argument("--case", action="append", default=[], help="a case id (repeatable)")
    parser.add_argument("--answers", action="store_true", help="print every wrong answer")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.group, set(args.case), args.answers)))
