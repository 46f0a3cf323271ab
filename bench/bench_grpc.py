"""Unary gRPC throughput and latency of GetTrace (SQLite) and SubmitFeedback (MariaDB), beside a
bare grpc.aio echo server measured in the same run.

Load comes from h2load (Debian package nghttp2-client): it costs the 2 cores far less than a Python
client. Each request is one length-prefixed gRPC message sent with `content-type: application/grpc`
and `te: trailers`. h2load only sees HTTP statuses, so the grpc-status of the same request bytes is
verified separately: a real gRPC client calls with the same bytes before and after each measurement,
and the servers' own per-code RPC counters (Prometheus) must show no status but OK for the run.

    .venv/bin/python bench/bench_grpc.py [--duration 2] [--rounds 5] [--concurrency 1 8 64]

Prints one table: requests/s, p50 and p99 per RPC and concurrency (medians over the rounds), and each
RPC's ratio to the echo server at the same concurrency (each round measures the RPC between two echo
cells; the median of the per-round ratios, with their range). Targets: GetTrace on SQLite ≥ 0.5 of
echo; SubmitFeedback on MariaDB ≥ 0.3.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import figures  # noqa: E402 - after the path that finds it

BIN = Path(sys.executable).parent
ECHO_METHOD = "/bench.Echo/Echo"
QUERY = "payment-service 现在有 HighCPUUsage 告警吗？"
TARGETS = {"GetTrace": 0.5, "SubmitFeedback": 0.3}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------------------------------------
# the echo server (run as `bench_grpc.py --echo-server PORT`)


async def _echo_server(port: int) -> None:
    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("ready", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0)


# ------------------------------------------------------------------------------------------------
# servers under test


class Served:
    def __init__(self, command: list[str], env: dict[str, str], ready: str, cwd: Path) -> None:
        self.log = (cwd / f"server-{uuid.uuid4().hex[:6]}.log").open("w")
        self.proc = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if ready not in line:
            self.stop()
            raise RuntimeError(f"server did not start: {command}: {line!r}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def start_evigate(
    port: int, metrics_port: int, database_url: str, state: Path, *, log_level: str, extra: dict[str, str]
) -> Served:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIGATE_")}
    env.update(extra)
    env.update(
        {
            "EVIGATE_LISTEN": f"127.0.0.1:{port}",
            "EVIGATE_METRICS_PORT": str(metrics_port),
            "EVIGATE_DATABASE_URL": database_url,
            "EVIGATE_STATE_DIR": str(state),
            "EVIGATE_LOG_LEVEL": log_level,
        }
    )
    return Served([str(BIN / "evigate"), "serve"], env, "serving on", state)


def start_echo(port: int, cwd: Path) -> Served:
    return Served([sys.executable, __file__, "--echo-server", str(port)], dict(os.environ), "ready", cwd)


# ------------------------------------------------------------------------------------------------
# requests


def framed(message: bytes) -> bytes:
    """A gRPC length-prefixed message: uncompressed flag, 4-byte big-endian length, payload."""
    return b"\x00" + struct.pack(">I", len(message)) + message


def verify(address: str, method: str, payload: bytes) -> None:
    """The grpc-status of one real call with exactly the bytes h2load will send must be OK."""
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        try:
            call(payload, timeout=30)
        except grpc.RpcError as error:
            raise SystemExit(f"{method}: grpc-status {error.code().name}: {error.details()}") from None


def prepare_session(address: str) -> str:
    from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        reply = stub.Chat(chat_service_pb2.ChatRequest(query=QUERY), timeout=60)
    return str(reply.session_id)


# ------------------------------------------------------------------------------------------------
# load


@dataclass(frozen=True)
class Result:
    rps: float
    p50_ms: float
    p99_ms: float
    ok: int
    failed: int


@dataclass(frozen=True)
class Case:
    name: str
    db: str
    address: str
    method: str
    payload: bytes
    metrics_port: int = 0  # evigate's Prometheus port: every call's grpc-status is counted there


def grpc_codes(case: Case) -> dict[str, float]:
    """evigate_rpc_total of the case's method, by status code (h2load sees HTTP statuses only)."""
    if not case.metrics_port:
        return {}
    import urllib.request

    url = f"http://127.0.0.1:{case.metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    pattern = re.compile(
        r'^evigate_rpc_total\{code="(\w+)",method="' + re.escape(case.method) + r'"\} ([\d.e+]+)$', re.M
    )
    return {code: float(value) for code, value in pattern.findall(text)}


def h2load(case: Case, concurrency: int, duration: int, work: Path) -> Result:
    address, method, payload = case.address, case.method, case.payload
    body = work / "body.bin"
    body.write_bytes(framed(payload))
    log = work / "h2load.log"
    log.unlink(missing_ok=True)
    connections = min(concurrency, 8)
    streams = max(1, concurrency // connections)
    command = [
        "h2load", "-D", f"{duration:g}", "--warm-up-time", "1", "-c", str(connections), "-m", str(streams),
        "-t", "1", "-d", str(body), "-H", "content-type: application/grpc", "-H", "te: trailers",
        f"--log-file={log}", f"http://{address}{method}",
    ]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60, check=True).stdout
    rps = float(re.search(r"finished in [\d.]+\w*s, ([\d.]+) req/s", out).group(1))  # type: ignore[union-attr]
    status = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    assert status is not None, out
    ok, failed = int(status.group(1)), sum(int(status.group(i)) for i in (2, 3, 4))
    latencies = sorted(int(line.split()[2]) for line in log.read_text().splitlines() if line.strip())
    if not latencies:
        raise SystemExit(f"h2load recorded no requests:\n{out}")
    return Result(rps, _pct(latencies, 50) / 1000, _pct(latencies, 99) / 1000, ok, failed)


def _pct(sorted_us: list[int], pct: float) -> float:
    index = min(len(sorted_us) - 1, max(0, round(pct / 100 * len(sorted_us)) - 1))
    return float(sorted_us[index])


# ------------------------------------------------------------------------------------------------
# MariaDB scratch database


def mariadb_database() -> tuple[str, str]:
    import pymysql

    name = f"evigate_bench_{uuid.uuid4().hex[:12]}"
    admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    admin.close()
    return name, f"mysql+aiomysql://root:@127.0.0.1:3306/{name}?charset=utf8mb4"


def drop_mariadb(name: str) -> None:
    import pymysql

    admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    admin.close()


def measure(
    cases: list[Case], concurrencies: list[int], duration: int, rounds: int, work: Path
) -> tuple[list[str], list[figures.Figure]]:
    """Prints the table; returns the cells that missed their target, and the figures.

    Each concurrency runs `rounds` rounds of echo, GetTrace, echo, SubmitFeedback, echo: every case is
    measured between two echo cells, and its ratio in a round is its throughput over the mean of the
    two. The machine's speed drifts between cells (seen here: the same server's CPU per call varies
    by a quarter from one 3 s window to the next); bracketing cancels a drift that is steady across
    the three cells. A case's row is its median round: the req/s of that round, the echo req/s that
    bracketed it, and their quotient, the ratio (with the range of the rounds' ratios), so the
    printed req/s give the printed ratio."""
    header = (
        f"{'rpc':<16}{'db':<9}{'conc':>5}{'req/s':>10}{'echo/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'ratio':>8}"
        f"{'range':>12}{'target':>8}"
    )
    print(header)
    print("-" * len(header))
    echo, others = cases[0], cases[1:]
    missed, found = [], []
    for concurrency in concurrencies:
        results: dict[str, list[Result]] = {case.name: [] for case in cases}
        rounds_of: dict[str, list[tuple[float, float, float]]] = {case.name: [] for case in others}
        for _ in range(rounds):
            before = _measure_one(echo, concurrency, duration, work)
            results[echo.name].append(before)
            for case in others:
                result = _measure_one(case, concurrency, duration, work)
                after = _measure_one(echo, concurrency, duration, work)
                results[case.name].append(result)
                results[echo.name].append(after)
                bracket = (before.rps + after.rps) / 2
                rounds_of[case.name].append((result.rps / bracket, result.rps, bracket))
                before = after
        for case in cases:
            runs = results[case.name]
            rps, echo_rps = statistics.median(r.rps for r in runs), 0.0
            ratio = rng = target = ""
            if case is not echo:
                ordered = sorted(rounds_of[case.name])
                share, rps, echo_rps = ordered[(len(ordered) - 1) // 2]  # the median round
                ratio, rng = f"{share:.2f}", f"{ordered[0][0]:.2f}–{ordered[-1][0]:.2f}"
                target = f"≥{TARGETS[case.name]}"
                if share < TARGETS[case.name]:
                    missed.append(f"{case.name}@{concurrency}")
                value = f"{ratio} ({rps:,.0f} req/s beside echo {echo_rps:,.0f}; rounds {rng})"
                name = f"{case.name} ({case.db}) / echo at concurrency {concurrency}"
                found.append(figures.Figure(name, value, cache="warm"))
            print(
                f"{case.name:<16}{case.db:<9}{concurrency:>5}{rps:>10.0f}{echo_rps or rps:>9.0f}"
                f"{statistics.median(r.p50_ms for r in runs):>9.2f}"
                f"{statistics.median(r.p99_ms for r in runs):>9.2f}{ratio:>8}{rng:>12}{target:>8}",
                flush=True,
            )
    return missed, found


def _measure_one(case: Case, concurrency: int, duration: int, work: Path) -> Result:
    before = grpc_codes(case)
    result = h2load(case, concurrency, duration, work)
    after = grpc_codes(case)
    errors = {c: after[c] - before.get(c, 0) for c in after if c != "OK" and after[c] > before.get(c, 0)}
    if errors.get("CANCELLED", 0) <= concurrency:  # in flight when h2load's timer ran out
        errors.pop("CANCELLED", None)
    verify(case.address, case.method, case.payload)  # and a real client still gets OK
    if result.failed or errors:
        raise SystemExit(f"{case.name}: {result.failed} non-2xx responses, grpc-status counts {errors}")
    return result


def start_all(args: argparse.Namespace, work: Path, mysql_url: str, servers: list[Served]) -> list[Case]:
    from evigate.v1 import feedback_service_pb2, session_pb2, trace_service_pb2

    echo, sqlite, mysql = (f"127.0.0.1:{free_port()}" for _ in range(3))
    sqlite_metrics, mysql_metrics = free_port(), free_port()
    extra = {"EVIGATE_TRACE_CACHE_TTL_S": str(args.trace_cache_ttl)}
    servers.append(start_echo(int(echo.rsplit(":", 1)[1]), work))
    sqlite_url = f"sqlite+aiosqlite:///{work / 'bench.db'}"
    for address, metrics, url in ((sqlite, sqlite_metrics, sqlite_url), (mysql, mysql_metrics, mysql_url)):
        servers.append(
            start_evigate(
                int(address.rsplit(":", 1)[1]), metrics, url, work, log_level=args.log_level, extra=extra
            )
        )
    trace = trace_service_pb2.GetTraceRequest(session_id=prepare_session(sqlite))
    feedback = feedback_service_pb2.SubmitFeedbackRequest(
        session_id=prepare_session(mysql),
        feedback=session_pb2.FEEDBACK_USEFUL
        if args.feedback == "useful"
        else session_pb2.FEEDBACK_NOT_USEFUL,
    )
    return [
        Case("echo", "-", echo, ECHO_METHOD, trace.SerializeToString()),
        Case(
            "GetTrace",
            "sqlite",
            sqlite,
            "/evigate.v1.TraceService/GetTrace",
            trace.SerializeToString(),
            sqlite_metrics,
        ),
        Case(
            "SubmitFeedback",
            "mariadb",
            mysql,
            "/evigate.v1.FeedbackService/SubmitFeedback",
            feedback.SerializeToString(),
            mysql_metrics,
        ),
    ]


def wait_for_jobs(url: str, timeout: float = 30.0) -> None:
    """Polls the job queue until nothing is pending or running (bounded)."""
    from evigate.storage import Database

    async def drained() -> bool:
        db = await Database.open(url, auto_migrate=False)
        try:
            stats = await db.repo.job_stats()
        finally:
            await db.close()
        return stats.pending == 0 and stats.running == 0

    deadline = time.monotonic() + timeout
    while not asyncio.run(drained()):
        if time.monotonic() > deadline:
            raise SystemExit("evaluation jobs did not drain")
        time.sleep(0.1)


def require_h2load() -> None:
    """Before any server starts: say what to install instead of a traceback halfway through."""
    if shutil.which("h2load") is None:
        raise SystemExit(
            "bench_grpc: h2load not found on PATH; it is the load generator. Install the Debian package "
            "nghttp2-client (apt-get install nghttp2-client; `python3 scripts/dev.py test` installs it "
            "with the other packages of scripts/debian-test-packages.txt)."
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--echo-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=int, default=2, help="seconds per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per concurrency (default 5)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--log-level", default="INFO", help="the evigate servers' log level (default INFO)")
    parser.add_argument("--trace-cache-ttl", type=float, default=1.0, help="trace_cache_ttl_s (0: off)")
    parser.add_argument(
        "--feedback", choices=["useful", "not_useful"], default="useful", help="SubmitFeedback's value"
    )
    figures.add_json_flag(parser)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(_echo_server(args.echo_server))
        return
    require_h2load()
    from evigate.storage import migrate

    work = Path(tempfile.mkdtemp(prefix="evigate-bench-"))
    db_name, mysql_url = mariadb_database()
    servers: list[Served] = []
    try:
        asyncio.run(migrate(mysql_url))
        cases = start_all(args, work, mysql_url, servers)
        for case in cases:
            verify(case.address, case.method, case.payload)
        wait_for_jobs(mysql_url)  # the evaluation worker finishes the sessions' jobs first
        print(
            f"h2load, {args.rounds} rounds of {args.duration}s per cell after 1s warm-up (each RPC "
            f"between two echo cells; median ratio, range over rounds); evigate log level {args.log_level}, "
            f"trace cache ttl {args.trace_cache_ttl:g}s, SubmitFeedback {args.feedback}"
        )
        missed, found = measure(cases, args.concurrency, args.duration, args.rounds, work)
        print("targets met" if not missed else f"targets missed: {', '.join(missed)}")
        cells = f"h2load, {args.rounds} rounds × {args.duration} s"
        what = f"GetTrace / SubmitFeedback against a bare echo server, {cells}"
        figures.write(args.json, "bench_grpc", what, found)
    finally:
        for server in servers:
            server.stop()
        drop_mariadb(db_name)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
