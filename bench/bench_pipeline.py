"""The pipeline's own costs, and whether concurrent LLM sessions overlap.

    .venv/bin/python bench/bench_pipeline.py [--sessions 1 50 200] [--delay 0.3] [--offline-sessions 200]
                                             [--llm-db sqlite|mariadb] [--offline-db sqlite mariadb]

(1) For each `--sessions` count, that many concurrent sessions on the llm backend against FakeOpenAI
(tests/support, in its own process), which answers every request after `--delay` seconds: planner,
two executor turns (a tool call, then the evidence JSON citing the real invocation id), verifier,
composer = 5 requests per session. Ideal wall time = 5 x delay (every session in parallel); queued =
sessions x 5 x delay. Prints wall time, per-session p50/p99, the most requests the fake server held
at once and this process's CPU per session (on a shared 2-core machine, CPU bounds the wall time).

(2) The offline pipeline's own cost per session (planner → composer, real fixture tools on the demo
world, real storage), sessions run one after another over the 26 demo questions of
tests/pipeline/test_demo_questions.py: p50 / p99 per database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

from bench import figures  # noqa: E402
from evigate.server.agents.base import AgentBackend  # noqa: E402
from evigate.server.agents.llm import build_llm_backend  # noqa: E402
from evigate.server.agents.offline import build_offline_backend  # noqa: E402
from evigate.server.deadline import Deadline  # noqa: E402
from evigate.server.pipeline import Pipeline  # noqa: E402
from evigate.server.pipeline.orchestrator import PipelineSettings  # noqa: E402
from evigate.server.skills import load_skills  # noqa: E402
from evigate.server.tools import build_backend  # noqa: E402
from evigate.server.tools.registry import default_registry  # noqa: E402
from evigate.storage import Database, migrate  # noqa: E402
from tests.pipeline.test_demo_questions import CASES  # noqa: E402
from tests.support import llm_script  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Step  # noqa: E402

QUERY = "payment-service 现在有 HighCPUUsage 告警吗？"
LLM_REQUESTS_PER_SESSION = 5
MYSQL_SERVER = "mysql+aiomysql://root:@127.0.0.1:3306"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


class Databases:
    """Scratch databases: a SQLite file in a temporary directory, MariaDB databases dropped at exit."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="bench-pipeline-")
        self._mysql: list[str] = []

    async def open(self, kind: str, pool_size: int) -> Database:
        if kind == "sqlite":
            url = f"sqlite+aiosqlite:///{Path(self._tmp.name) / f'{uuid.uuid4().hex}.db'}"
        else:
            import pymysql

            name = f"evigate_bench_{uuid.uuid4().hex[:12]}"
            admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
            try:
                with admin.cursor() as cursor:
                    cursor.execute(
                        f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
                    )
            finally:
                admin.close()
            self._mysql.append(name)
            url = f"{MYSQL_SERVER}/{name}?charset=utf8mb4"
            await migrate(url)
        return await Database.open(url, pool_size=pool_size)

    def close(self) -> None:
        if self._mysql:
            import pymysql

            admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
            try:
                with admin.cursor() as cursor:
                    for name in self._mysql:
                        cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
            finally:
                admin.close()
        self._tmp.cleanup()


def pipeline(db: Database, agents: AgentBackend) -> Pipeline:
    return Pipeline(
        db.repo,
        build_backend(None, db.repo),
        agents,
        load_skills(),
        default_registry().catalog(),
        PipelineSettings(owner="bench"),
    )


def executor_turn(request: RecordedRequest) -> Step:
    """First turn: call the tool; second turn: cite what the tool returned."""
    if request.tool_results():
        return llm_script.cite()(request)
    return llm_script.call()


def most_in_flight(arrived: list[float], delay: float) -> int:
    """The most requests the fake server held at once (each is held `delay` seconds)."""
    events = sorted([(t, 1) for t in arrived] + [(t + delay, -1) for t in arrived])
    current = best = 0
    for _, step in events:
        current += step
        best = max(best, current)
    return best


def serve_fake(delay: float) -> None:
    """Child process: FakeOpenAI answering every stage after `delay`; prints its base URL, serves
    until stdin closes, then prints when each request arrived (time.monotonic is system-wide)."""
    script = llm_script.StageScript(delay=delay, defaults={"executor": executor_turn})
    with FakeOpenAI(default=script) as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()
        arrived = [r.received_at for r in fake.requests]
    print(json.dumps(arrived), flush=True)


async def llm_concurrency(dbs: Databases, kind: str, sessions: int, delay: float) -> figures.Figure:
    # The fake server runs in its own process so that its threads do not compete with the pipeline
    # for this process's GIL: what is measured is the pipeline's overlap, not the fake's cost.
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve-fake", str(delay),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    base_url = (await child.stdout.readline()).decode().strip()
    if not base_url.startswith("http"):
        raise RuntimeError(f"the FakeOpenAI process did not start (exit code {await child.wait()})")
    settings = llm_script.settings(base_url, timeout_s=60.0, max_retries=0)
    agents = build_llm_backend(settings)
    db = await dbs.open(kind, pool_size=20)
    runner = pipeline(db, agents)
    try:
        await runner.run(QUERY, None, "zh", Deadline.after(60))  # warm-up: imports, caches, connections
        warm_until = time.monotonic()

        async def one() -> tuple[float, str]:
            started = time.perf_counter()
            result = await runner.run(QUERY, None, "zh", Deadline.after(120))
            return (
                time.perf_counter() - started,
                f"{result.status}/{(result.verdict or {}).get('verdict', '')}",
            )

        started, cpu_started = time.perf_counter(), time.process_time()
        outcomes = await asyncio.gather(*(one() for _ in range(sessions)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    finally:
        await runner.aclose()
        await db.close()
        child.stdin.close()
        arrived = [t for t in json.loads(await child.stdout.read() or b"[]") if t > warm_until]
        await child.wait()
    latencies = [seconds for seconds, _ in outcomes]
    statuses: dict[str, int] = {}
    for _, outcome in outcomes:
        statuses[outcome] = statuses.get(outcome, 0) + 1
    ideal = LLM_REQUESTS_PER_SESSION * delay
    ratio = f"{wall / ideal:6.2f}" if ideal else "     -"
    print(
        f"    {sessions:>8} {len(arrived):>8} {ideal:>7.2f} {sessions * ideal:>8.1f} {wall:>7.2f} {ratio} "
        f"{statistics.median(latencies):>6.2f} {percentile(latencies, 99):>6.2f} "
        f"{most_in_flight(arrived, delay):>9} {cpu / sessions * 1000:>8.1f}  {statuses}"
    )
    value = f"{wall:.1f} s (one after another: {sessions * ideal:.0f} s)"
    value += f"; p50 {statistics.median(latencies):.2f} s"
    return figures.Figure(
        f"{sessions} concurrent LLM sessions ({delay * 1000:.0f} ms per reply, {kind}): wall", value
    )


LLM_HEADER = (
    f"    {'sessions':>8} {'requests':>8} {'ideal s':>7} {'queued s':>8} {'wall s':>7} {'x ideal':>6} "
    f"{'p50 s':>6} {'p99 s':>6} {'in flight':>9} {'CPU ms/s':>8}  outcomes"
)


async def offline_cost(dbs: Databases, kind: str, sessions: int) -> list[float]:
    db = await dbs.open(kind, pool_size=5)
    runner = pipeline(db, build_offline_backend())
    try:
        for case in CASES:  # warm-up: log caches, knowledge index, connections
            await runner.run(case.query, None, case.language, Deadline.after(30))
        latencies = []
        for i in range(sessions):
            case = CASES[i % len(CASES)]
            started = time.perf_counter()
            result = await runner.run(case.query, None, case.language, Deadline.after(30))
            latencies.append(time.perf_counter() - started)
            if result.status != "SUCCESS":
                raise RuntimeError(f"{case.id}: {result.failure_reason}")
    finally:
        await db.close()
    return latencies


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


async def main_async(args: argparse.Namespace) -> None:
    dbs = Databases()
    found: list[figures.Figure] = []
    try:
        if args.sessions:
            delay_ms = args.delay * 1000
            print(
                f"\n(1) concurrent llm sessions, FakeOpenAI (own process) answering after {delay_ms:.0f} ms, "
                f"{LLM_REQUESTS_PER_SESSION} requests per session, {args.llm_db}"
            )
            print(LLM_HEADER)
            for sessions in args.sessions:
                found.append(await llm_concurrency(dbs, args.llm_db, sessions, args.delay))
            print(
                "    ideal = all sessions overlap; queued = one after another; "
                f"CPU ms/s = this process's CPU per session; load {_load()}"
            )
        if args.offline_sessions:
            n = args.offline_sessions
            print(f"\n(2) offline pipeline, {n} sequential sessions over {len(CASES)} demo questions")
            print(f"    {'database':<10} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'sessions/s':>11}")
            for kind in args.offline_db:
                lat = await offline_cost(dbs, kind, args.offline_sessions)
                print(
                    f"    {kind:<10} {_ms(statistics.median(lat))} {_ms(percentile(lat, 99))} "
                    f"{_ms(statistics.fmean(lat))} {len(lat) / sum(lat):11.1f}"
                )
                p50, p99 = statistics.median(lat) * 1000, percentile(lat, 99) * 1000
                name = f"offline pipeline session ({kind}), p50 / p99"
                found.append(figures.Figure(name, f"{p50:.0f} / {p99:.0f} ms", cache="warm"))
    finally:
        dbs.close()
    what = "concurrent LLM sessions against a fake OpenAI endpoint; the offline pipeline's own cost"
    figures.write(args.json, "bench_pipeline", what, found)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve-fake", type=float, help=argparse.SUPPRESS)
    parser.add_argument(
        "--sessions",
        type=int,
        nargs="*",
        default=[1, 50, 200],
        help="concurrent llm sessions per run (none: skip)",
    )
    parser.add_argument("--delay", type=float, default=0.3, help="seconds before FakeOpenAI answers")
    parser.add_argument("--llm-db", choices=("sqlite", "mariadb"), default="sqlite")
    parser.add_argument(
        "--offline-sessions", type=int, default=200, help="sequential offline sessions (0: skip)"
    )
    parser.add_argument(
        "--offline-db", nargs="+", choices=("sqlite", "mariadb"), default=["sqlite", "mariadb"]
    )
    figures.add_json_flag(parser)
    args = parser.parse_args()
    if args.serve_fake is not None:
        serve_fake(args.serve_fake)
        return
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
