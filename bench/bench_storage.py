"""Storage benchmark: record 10,000 tool invocations and read a 100-invocation trace.

Prints per-operation p50 / p99 latency on SQLite and MariaDB and the number of SQL statements one
trace read issues. MariaDB: 127.0.0.1:3306 root (a scratch database is created and dropped).

    python bench/bench_storage.py [--invocations 10000] [--trace-reads 300] [--backends sqlite,mariadb]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pymysql
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.storage import Database, migrate

MYSQL_SERVER = "mysql+aiomysql://root:@127.0.0.1:3306"
SESSIONS = 100  # invocations are spread over this many sessions (100 each for the default 10,000)


def _details(i: int) -> dict[str, Any]:
    return {
        "evidence_status": "supported",
        "match_level": "L0",
        "evidence_refs": [
            {
                "raw_path": f"$.logs[{i % 20}]",
                "text": f"2026-07-08 23:05:{i % 60:02d} ERROR order-service HikariPool-1 - Connection is not "
                "available, request timed out after 30000ms 连接池耗尽",
            }
        ],
    }


class Timings:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    async def time(self, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
        start = time.perf_counter()
        result = await call()
        self.samples.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        return result


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run_backend(name: str, url: str, invocations: int, trace_reads: int) -> tuple[Timings, int]:
    if name == "mariadb":
        await migrate(url)
    db = await Database.open(url, pool_size=10)
    timings = Timings()
    try:
        sessions = [f"bench-{i}" for i in range(SESSIONS)]
        for sid in sessions:
            await timings.time(
                "create_session", functools.partial(db.repo.create_session, sid, "q", "zh", "bench")
            )
        for i in range(invocations):
            sid = sessions[i % SESSIONS]
            await timings.time(
                "record_invocation",
                functools.partial(
                    db.repo.record_invocation,
                    sid,
                    "query_logs",
                    {"service": "order-service", "keyword": "HikariPool"},
                    "success",
                    None,
                    {"logs": [f"line {i}"]},
                    _details(i),
                    12.5,
                ),
            )
        target = sessions[0]
        await db.repo.finish_success(target, "答案", {}, {"verdict": "PASS"}, [], {})
        statements: list[str] = []

        def count(*_args: Any) -> None:
            statements.append("x")

        event.listen(db.engine.sync_engine, "before_cursor_execute", count)
        trace = await db.repo.get_trace(target)
        event.remove(db.engine.sync_engine, "before_cursor_execute", count)
        assert trace is not None
        trace_statements = len(statements)
        for _ in range(trace_reads):
            await timings.time("get_trace (100 invocations)", lambda: db.repo.get_trace(target))
        for _ in range(trace_reads):
            await timings.time("get_session", lambda: db.repo.get_session(target))
            await timings.time("list_sessions (page 50)", lambda: db.repo.list_sessions(None, None, 50, None))
        for sid in sessions[1:]:
            await db.repo.finish_success(sid, "答案", {}, {}, [], {})
            await timings.time(
                "submit_feedback useful", functools.partial(db.repo.submit_feedback, sid, "useful")
            )
        for _ in range(len(sessions)):
            jobs = await timings.time(
                "claim_jobs (1)", lambda: db.repo.claim_jobs("w", "evidence_score", 1, 60)
            )
            for job in jobs:
                await timings.time("complete_job", functools.partial(db.repo.complete_job, job.id, "w"))
        return timings, trace_statements
    finally:
        await db.close()


def _mysql_admin(sql: str) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--trace-reads", type=int, default=300)
    parser.add_argument("--backends", default="sqlite,mariadb")
    figures.add_json_flag(parser)
    args = parser.parse_args()

    rows: list[tuple[str, str, int, float, float]] = []
    statements: dict[str, int] = {}
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if backend == "sqlite":
                url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
                drop = None
            else:
                name = f"evigate_bench_{uuid.uuid4().hex}"
                _mysql_admin(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
                url, drop = f"{MYSQL_SERVER}/{name}?charset=utf8mb4", f"DROP DATABASE `{name}`"
            try:
                timings, statements[backend] = await run_backend(
                    backend, url, args.invocations, args.trace_reads
                )
            finally:
                if drop:
                    _mysql_admin(drop)
        for op, samples in timings.samples.items():
            rows.append((backend, op, len(samples), statistics.median(samples), _percentile(samples, 0.99)))

    print(f"{'backend':<8} {'operation':<30} {'n':>6} {'p50 ms':>9} {'p99 ms':>9}")
    for backend, op, n, p50, p99 in rows:
        print(f"{backend:<8} {op:<30} {n:>6} {p50:>9.3f} {p99:>9.3f}")
    print()
    for backend, count in statements.items():
        print(f"{backend}: one get_trace issues {count} SQL statements")
    found = [
        figures.Figure(f"{backend} {op} p50 / p99 (n={n})", f"{p50:.2f} / {p99:.2f} ms", cache="warm")
        for backend, op, n, p50, p99 in rows
        if op.startswith(("record_invocation", "get_trace"))
    ]
    found += [figures.Figure(f"{b}: SQL statements per trace read", str(c)) for b, c in statements.items()]
    what = f"{args.invocations:,} invocations, a 100-invocation trace, on SQLite and MariaDB"
    figures.write(args.json, "bench_storage", what, found, {"rows": rows, "statements": statements})


if __name__ == "__main__":
    asyncio.run(main())
