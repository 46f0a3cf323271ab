"""Log reader benchmark: mixed-format logs across 50 services, queried through server.sources.logs.

    .venv/bin/python bench/bench_logs.py [--size-mb 1024] [--services 50] [--runs 20] [--keep DIR]

Generates JSON lines, logfmt and logback-style plain text (read through a user pattern, with
Java stack traces), every fifth service rotated into `x.log.2.gz`, `x.log.1`, `x.log`, spread over
24 hours. A child process then builds the index (the first query) and times (a) a service +
keyword query and (b) a level + one-hour-window query, then summarize_logs through the tool's own path
(server/tools/logfiles.py): (c) one service's hour and (d) a window holding about 100,000 events of
all services; its peak RSS is its own (ru_maxrss). Beside (a) and (b): `grep -F` (and `zgrep -F` for
the .gz part) over the files that query must read. Indexing is timed in wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evigate.server.sources.logs import LogConfig, LogReader, LogSearch, UserPattern
from evigate.server.tools.backend import PatternsQuery, TimeWindow
from evigate.server.tools.logfiles import LogFiles

START = datetime(2026, 7, 8, 0, 0, tzinfo=UTC)
KEYWORD = "Connection is not available"
LOGBACK = UserPattern(
    "logback",
    r"(?P<timestamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) +(?P<level>[A-Z]+) +\[(?P<thread>[^\]]+)\] "
    r"(?P<logger>\S+) - (?P<message>.*)",
)
MESSAGES = [
    ("INFO", "Request handled method=GET path=/api/v1/items/{n} status=200 took={ms}ms"),
    ("INFO", "Order O{n} created items={k} amount={ms}.50 CNY"),
    ("DEBUG", "Cache hit key=item:{n} ttl=300s"),
    ("INFO", "用户登录成功 uid=U{n} channel=app"),
    ("WARN", "Slow query took={ms}ms table=orders rows={k}"),
    ("INFO", "Published event topic=orders partition={k} offset={n}"),
    ("WARN", "Retrying call upstream=payment-service attempt={k}"),
    ("ERROR", "HikariPool-1 - " + KEYWORD + ", request timed out after 30000ms."),
    ("ERROR", "Upstream call failed upstream=inventory-service status=503 took={ms}ms"),
]
WEIGHTS = [40, 15, 15, 10, 6, 8, 4, 0.4, 1.6]
STACK = [
    "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available",
    "\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:696)",
    "\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)",
    "\t... 42 common frames omitted",
]


def _line(kind: str, service: str, moment: datetime, event: tuple[str, str], i: int) -> str:
    level, message = event
    stamp = moment.isoformat(timespec="milliseconds")
    if kind == "json":
        record = {"@timestamp": stamp, "level": level, "service": service,
                  "logger": "com.shop.App", "thread": f"exec-{i % 32}", "message": message}  # fmt: skip
        return json.dumps(record, ensure_ascii=False) + "\n"
    if kind == "logfmt":
        return f'time={stamp} level={level.lower()} service={service} msg="{message}" n={i}\n'
    local = f"{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond // 1000:03d}"
    text = f"{local} {level:<5} [exec-{i % 32}] com.shop.App - {message}\n"
    return text + "\n".join(STACK) + "\n" if level == "ERROR" and i % 2 else text


def generate(root: Path, size_mb: int, services: int) -> None:
    rng = random.Random(16)
    per_service = size_mb * 1024 * 1024 // services
    for s in range(services):
        service, kind = f"svc-{s:02d}", ("json", "logfmt", "text")[s % 3]
        folder = root / service
        folder.mkdir(parents=True)
        parts = ["app.log.2.gz", "app.log.1", "app.log"] if s % 5 == 0 else ["app.log"]
        approx_events = per_service // 150
        step = timedelta(hours=24) / approx_events
        i, written = 0, 0
        for p, name in enumerate(parts):
            budget = per_service * (p + 1) // len(parts)
            chunks: list[str] = []
            size = 0
            while written + size < budget:
                level, template = rng.choices(MESSAGES, WEIGHTS)[0]
                message = template.format(n=rng.randrange(10**6), ms=rng.randrange(2000), k=rng.randrange(9))
                line = _line(kind, service, START + step * i, (level, message), i)
                chunks.append(line)
                size += len(line.encode())
                i += 1
            data = "".join(chunks).encode()
            written += size
            path = folder / name
            path.write_bytes(gzip.compress(data, compresslevel=1) if name.endswith(".gz") else data)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(root: Path, runs: int, service: str) -> dict[str, object]:
    reader = LogReader(LogConfig(root=root, patterns=(LOGBACK,)))
    files = LogFiles(reader.config, reader)  # the tool's path over the same indexes
    since = START + timedelta(hours=14)
    queries = {
        "a": LogSearch(service=service, keyword=KEYWORD, limit=20),
        "b": LogSearch(level="ERROR", window=TimeWindow(since, since + timedelta(hours=1)), limit=20),
    }
    out: dict[str, object] = {}
    for name, query in queries.items():  # first runs: (a) indexes its service's files, (b) the rest
        started, cpu_started = time.perf_counter(), time.process_time()
        reader.search(query)
        out[f"cold_{name}"] = time.perf_counter() - started
        out[f"cold_{name}_cpu"] = time.process_time() - cpu_started
    for name, query in queries.items():
        times, cpu, result = [], [], None
        for _ in range(runs):
            t, c = time.perf_counter(), time.process_time()
            result = reader.search(query)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        assert result is not None
        out[name] = {"p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "cpu": _pct(cpu, 0.5),
                     "total": result.total, "files": result.files_read}  # fmt: skip
    everything = sum(index.count for index in reader.refresh().indexes)
    hours = 24 * 100_000 / max(everything, 1)
    summaries = {
        "c": PatternsQuery(service, None, TimeWindow(since, since + timedelta(hours=1)), 10),
        "d": PatternsQuery(None, None, TimeWindow(since, since + timedelta(hours=hours)), 10),
    }
    for name, patterns in summaries.items():
        times, cpu, page = [], [], None
        for _ in range(max(1, runs // 5)):
            t, c = time.perf_counter(), time.process_time()
            page = files.summarize(patterns)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        assert page is not None
        out[name] = {"p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "cpu": _pct(cpu, 0.5),
                     "events": page.extra["events"], "patterns": page.total}  # fmt: skip
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grep_time(root: Path, files: list[str], pattern: str, runs: int, *flags: str) -> tuple[float, float]:
    """(wall p50, CPU p50) of grep -F over the plain files plus zgrep -F over the .gz ones."""
    plain = [str(root / f) for f in files if not f.endswith(".gz")]
    packed = [str(root / f) for f in files if f.endswith(".gz")]
    times, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), _children_cpu()
        if plain:
            subprocess.run(["grep", "-F", "-c", *flags, pattern, *plain], capture_output=True, check=False)
        if packed:
            subprocess.run(["zgrep", "-F", "-c", *flags, pattern, *packed], capture_output=True, check=False)
        times.append(time.perf_counter() - t)
        cpu.append(_children_cpu() - c)
    return _pct(times, 0.5), _pct(cpu, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child's entry
    parser.add_argument("--service", default="svc-10")  # rotated, gz part included
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.runs, args.service)))
        return
    tmp = None
    root = args.keep
    if root is None:
        tmp = tempfile.mkdtemp(prefix="evigate-bench-logs-")
        root = Path(tmp)
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not any(root.iterdir()):
            t = time.perf_counter()
            generate(root, args.size_mb, args.services)
            print(f"generated {args.size_mb} MB in {time.perf_counter() - t:.1f} s under {root}")
        on_disk = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
        child = [
            sys.executable,
            __file__,
            "--measure",
            str(root),
            "--runs",
            str(args.runs),
            "--service",
            args.service,
        ]
        result = json.loads(subprocess.run(child, capture_output=True, text=True, check=True).stdout)
        a, b = result["a"], result["b"]
        grep_a = grep_time(root, a["files"], KEYWORD, args.runs)
        grep_ai = grep_time(root, a["files"], KEYWORD, args.runs, "-i")
        grep_b = grep_time(root, b["files"], "ERROR", args.runs, "-i")
        rss = result["rss_mb"]
        print(f"{on_disk:.0f} MB on disk, {args.services} services; peak RSS {rss:.0f} MB (target < 300)")
        print(f"first (a) {result['cold_a']:.1f} s ({result['cold_a_cpu']:.1f} s CPU; indexes its service's "
              f"files), then first (b) {result['cold_b']:.1f} s ({result['cold_b_cpu']:.1f} s CPU; indexes "
              f"all the rest: {on_disk / max(result['cold_b'], 1e-9):.1f} MB/s wall, "
              f"{on_disk / max(result['cold_b_cpu'], 1e-9):.1f} MB/s CPU)")  # fmt: skip
        head = f"{'query':<30}{'p50 ms':>8}{'p99 ms':>8}{'cpu ms':>8}{'matches':>8}{'files':>6}"
        print(f"{head}{'grep p50':>9}{'grep cpu':>9}{'grep -i':>8}{'wall x':>7}{'cpu x':>7}")
        rows = [
            (f"(a) {args.service} + keyword", a, grep_a, grep_ai),
            ("(b) ERROR + 1 h window", b, grep_b, grep_b),
        ]
        for name, r, ref, ref_i in rows:
            ours = f"{r['p50'] * 1e3:>8.1f}{r['p99'] * 1e3:>8.1f}{r['cpu'] * 1e3:>8.1f}"
            ours += f"{r['total']:>8}{len(r['files']):>6}"
            theirs = f"{ref[0] * 1e3:>9.1f}{ref[1] * 1e3:>9.1f}{ref_i[0] * 1e3:>8.1f}"
            print(f"{name:<30}{ours}{theirs}{r['p50'] / ref[0]:>7.2f}{r['cpu'] / ref[1]:>7.2f}")
        for name, label in (
            ("c", f"(c) summarize {args.service}, 1 h"),
            ("d", "(d) summarize all, ~100k events"),
        ):
            r = result[name]
            times = (
                f"p50 {r['p50'] * 1e3:8.1f} ms  p99 {r['p99'] * 1e3:8.1f} ms  cpu {r['cpu'] * 1e3:8.1f} ms"
            )
            print(f"{label:<34}{times}  {r['events']:>7} events  {r['patterns']:>4} patterns")
        print("x: evigate / grep -F over the same files, wall p50 and CPU p50 (target for (a): <= 2);")
        print("the query is case-insensitive (grep -i beside it); (b)'s grep is -F -i ERROR;")
        print("summarize_logs target: (d) under 3 s")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
