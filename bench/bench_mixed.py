"""Mixed load against two server processes sharing one MariaDB database.

    .venv/bin/python bench/bench_mixed.py [--duration 60] [--rate 12] [--chat 0.4 --feedback 0.3]

Offline Chat, SubmitFeedback and GetTrace at a fixed request rate (open loop: request i is sent at
t0 + i/rate whether or not earlier ones finished, alternating between the two servers), against a
fresh database (`evigate_bench_<hex>`, migrated, dropped afterwards). Prints throughput, p50/p99 per
RPC, errors (any non-OK status; must be 0), and the evaluation lag: for every session answered in
the window, the time from its SUCCESS (the job's created_at, written in the same transaction) to
its self_evaluation being written (the job's completion), p50/p99.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc
import pymysql

from bench import figures
from evigate.storage import migrate
from evigate.v1 import session_pb2
from tests.reliability.procs import QUESTIONS, Client, ServerProc, db_rows

MYSQL = "mysql+aiomysql://root:@127.0.0.1:3306"


def _admin(sql: str) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", charset="utf8mb4")
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Load:
    def __init__(self, clients: list[Client], rng: random.Random) -> None:
        self.clients = clients
        self.rng = rng
        self.sessions: list[str] = []
        self.latencies: dict[str, list[float]] = collections.defaultdict(list)
        self.errors: collections.Counter[str] = collections.Counter()
        self.sent: collections.Counter[str] = collections.Counter()

    async def one(self, kind: str, n: int) -> None:
        client = self.clients[n % len(self.clients)]
        self.sent[kind] += 1
        started = time.perf_counter()
        try:
            if kind == "Chat" or not self.sessions:
                kind = "Chat"
                reply = await client.chat(self.rng.choice(QUESTIONS), rpc_timeout=60)
                if reply.status != session_pb2.SESSION_STATUS_SUCCESS:
                    self.errors[f"Chat status {reply.status}"] += 1
                self.sessions.append(reply.session_id)
            elif kind == "SubmitFeedback":
                await client.feedback(self.rng.choice(self.sessions), useful=self.rng.random() < 0.5)
            else:
                await client.trace(self.rng.choice(self.sessions))
        except grpc.aio.AioRpcError as error:
            self.errors[f"{kind} {error.code().name}"] += 1
            return
        self.latencies[kind].append((time.perf_counter() - started) * 1000)


async def run(args: argparse.Namespace) -> int:
    name = f"evigate_bench_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    url = f"{MYSQL}/{name}?charset=utf8mb4"
    servers: list[ServerProc] = []
    try:
        await migrate(url)
        work = Path(tempfile.mkdtemp(prefix="bench-mixed-"))
        servers = [
            ServerProc(work / f"s{n}", url, name=f"s{n}", args=["--instance-name", f"bench-{n}"])
            for n in (1, 2)
        ]
        for server in servers:
            server.start(args=["--log-level", "WARNING"])
        await asyncio.gather(*(s.wait_ready() for s in servers))
        channels = [grpc.aio.insecure_channel(s.address) for s in servers]
        load = Load([Client(ch) for ch in channels], random.Random(7))
        for n in range(6):  # warm-up, not measured: sessions to read and mark
            await load.one("Chat", n)
        load.latencies.clear()
        load.sent.clear()

        kinds = ["Chat", "SubmitFeedback", "GetTrace"]
        weights = [args.chat, args.feedback, 1 - args.chat - args.feedback]
        total = int(args.duration * args.rate)
        window_start = time.time()
        t0 = time.perf_counter()
        tasks = []
        for n in range(total):
            delay = t0 + n / args.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(load.one(load.rng.choices(kinds, weights)[0], n)))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - t0
        lag = await _evaluation_lag(url, window_start)
        for ch in channels:
            await ch.close()
        _report(args, load, elapsed, lag)
        return 1 if load.errors else 0
    finally:
        for server in servers:
            server.stop()
        _admin(f"DROP DATABASE IF EXISTS `{name}`")


async def _evaluation_lag(url: str, since: float) -> list[float]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db_rows(url, "SELECT COUNT(*) FROM job WHERE status <> 'done'")[0][0] == 0:
            break
        await asyncio.sleep(0.2)
    rows = db_rows(
        url,
        "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, updated_at), UNIX_TIMESTAMP(created_at) FROM job"
        " WHERE status = 'done'",
    )
    return [float(micros) / 1000 for micros, created in rows if float(created) >= since]


def _report(args: argparse.Namespace, load: Load, elapsed: float, lag: list[float]) -> None:
    print(
        f"mixed load: {args.rate:g} req/s for {args.duration:g} s, 2 server processes, one MariaDB database"
    )
    print(f"{'rpc':<16}{'sent':>7}{'ok':>7}{'thr/s':>8}{'p50 ms':>9}{'p99 ms':>9}")
    done = 0
    found = []
    for kind in ("Chat", "SubmitFeedback", "GetTrace"):
        values: list[float] = load.latencies.get(kind, [])
        done += len(values)
        p50, p99 = _percentile(values, 0.5), _percentile(values, 0.99)
        latency = f"{len(values) / elapsed:.2f} /s, p50 {p50:.1f} ms, p99 {p99:.1f} ms"
        found.append(figures.Figure(f"{kind} at {args.rate:g} req/s in all", latency, cache="warm"))
        print(
            f"{kind:<16}{load.sent[kind]:>7}{len(values):>7}{len(values) / elapsed:>8.2f}"
            f"{_percentile(values, 0.5):>9.1f}{_percentile(values, 0.99):>9.1f}"
        )
    print(f"{'total':<16}{sum(load.sent.values()):>7}{done:>7}{done / elapsed:>8.2f}")
    print(f"errors: {sum(load.errors.values())} {dict(load.errors) if load.errors else ''}")
    mean = statistics.fmean(lag) if lag else float("nan")
    print(
        f"evaluation lag (SUCCESS → self_evaluation), {len(lag)} sessions:"
        f" p50 {_percentile(lag, 0.5):.1f} ms, p99 {_percentile(lag, 0.99):.1f} ms, mean {mean:.1f} ms"
    )
    errors = sum(load.errors.values())
    found.append(figures.Figure("errors", str(errors)))
    lag_text = (
        f"p50 {_percentile(lag, 0.5):.1f} ms, p99 {_percentile(lag, 0.99):.1f} ms ({len(lag)} sessions)"
    )
    found.append(figures.Figure("evaluation lag (SUCCESS → self_evaluation)", lag_text))
    what = f"Chat / SubmitFeedback / GetTrace at a fixed rate for {args.duration:g} s, 2 processes, MariaDB"
    figures.write(args.json, "bench_mixed", what, found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--rate", type=float, default=12.0, help="requests per second, all RPCs (default 12)")
    parser.add_argument("--chat", type=float, default=0.4, help="share of Chat (default 0.4)")
    parser.add_argument("--feedback", type=float, default=0.3, help="share of SubmitFeedback (default 0.3)")
    figures.add_json_flag(parser)
    args: Any = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
