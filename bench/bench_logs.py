"""Log reader benchmark: mixed-format logs across 50 services, queried through server.sources.logs.

    .venv/bin/python bench/bench_logs.py [--size-mb 1024] [--services 50] [--runs 10] [--keep DIR]
        [--json FILE]

Generates JSON lines, logfmt and logback-style plain text (read through a user pattern, with
Java stack traces), every fifth service rotated into `x.log.2.gz`, `x.log.1`, `x.log`, spread over
24 hours. Then, each in a fresh child process (peak RSS is the child's own):

- cold: the keyword query (case-insensitive, over the whole tree) with no index anywhere and the
  files evicted from the page cache (posix_fadvise DONTNEED): answered by the byte scan, nothing
  else running in the process;
- cold while building: the same, asked the moment the service's background build starts (the
  build's worker processes compete for the cores and the disk, as in the service after start-up);
  the query's wall time and its own thread's CPU;
- index: the whole tree indexed as the service's background build does (wall MB/s, and CPU MB/s
  counting the worker processes' CPU), into an index file beside the data;
- warm: the same query on the built index (p50 of --runs), plus a service + keyword query, a level
  + one-hour-window query and summarize_logs over (c) one service's hour and (d) ~100,000 events;
- survey: what a survey gathers from one service's last six hours (summarize_logs WARN+ with
  values, rare severe events and changes, the newest ERROR lines, a relevance search), p50;
- restart: a new process reading the index file back, then the same query.

Beside each keyword figure, grep on the same query: `grep -F -i -c KEYWORD` (`zgrep` for .gz) over
the same files, cold (evicted first) against cold, warm against warm. The level + window query has
no grep equivalent (a level is a parsed field, a window a parsed time) and is printed alone.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.queries.types import LogsQuery, PatternsQuery, TimeWindow
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs import LogConfig, LogReader, LogSearch, UserPattern
from evigate.server.sources.logs.store import IndexStore

START = datetime(2026, 7, 8, 0, 0, tzinfo=UTC)
KEYWORD = "Connection is not available"
# The keyword the queries search: no space, so JSON and logfmt files are scanned before they are
# indexed (a keyword with a space or `=` waits for their index: see server/sources/logs/scan.py).
QUERY = "HikariPool-1"  # in about 0.6% of the events
RARE = "O424242"  # an order number: a handful of events, so the byte search is most of the cost
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


@dataclass(frozen=True)
class Generated:
    """One generated event: where it is written, what it says, and its text in that file."""

    service: str
    file: str  # relative to the root
    moment: datetime
    level: str
    message: str
    text: str


def events(size_mb: int, services: int) -> Iterator[Generated]:
    """The corpus's events in file order, the same on every run (a fixed seed)."""
    rng = random.Random(16)
    per_service = size_mb * 1024 * 1024 // services
    for s in range(services):
        service, kind = f"svc-{s:02d}", ("json", "logfmt", "text")[s % 3]
        parts = ["app.log.2.gz", "app.log.1", "app.log"] if s % 5 == 0 else ["app.log"]
        approx_events = per_service // 150
        step = timedelta(hours=24) / approx_events
        i, written = 0, 0
        for p, name in enumerate(parts):
            budget = per_service * (p + 1) // len(parts)
            size = 0
            while written + size < budget:
                level, template = rng.choices(MESSAGES, WEIGHTS)[0]
                message = template.format(n=rng.randrange(10**6), ms=rng.randrange(2000), k=rng.randrange(9))
                moment = START + step * i
                line = _line(kind, service, moment, (level, message), i)
                yield Generated(service, f"{service}/{name}", moment, level, message, line)
                size += len(line.encode())
                i += 1
            written += size


def generate(root: Path, size_mb: int, services: int) -> None:
    for file, group in itertools.groupby(events(size_mb, services), key=lambda event: event.file):
        data = "".join(event.text for event in group).encode()
        path = root / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(data, compresslevel=1) if file.endswith(".gz") else data)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and ".evigate-index" not in p.name)


def evict(root: Path) -> None:
    """Drops the tree's pages from the page cache (clean pages of files we may read: no privilege)."""
    for path in _files(root):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _config(root: Path) -> LogConfig:
    return LogConfig(root=root, patterns=(LOGBACK,))


def _store(root: Path) -> IndexStore:
    config = _config(root)
    return IndexStore(root / ".evigate-index.sqlite3", config)


def _timed(action: Callable[[], Any]) -> tuple[Any, float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    return result, time.perf_counter() - started, time.process_time() - cpu


def child_cold(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, keyword in (("common", QUERY), ("rare", RARE)):
        reader = LogReader(_config(root))
        evict(root)
        result, wall, cpu = _timed(partial(reader.search, LogSearch(keyword=keyword, limit=20)))
        out[name] = {"wall": wall, "cpu": cpu, "total": result.total, "indexed_files": reader.tree.held()}
    return out


def child_cold_building(root: Path) -> dict[str, Any]:
    """The keyword query asked as the background build starts (the service's first minutes)."""
    index_file = root / ".evigate-index.sqlite3"
    index_file.unlink(missing_ok=True)
    reader = LogReader(_config(root), _store(root))
    evict(root)
    stop = threading.Event()
    build = threading.Thread(target=reader.build_all, args=(stop.is_set,), daemon=True)
    build.start()
    started, cpu = time.perf_counter(), time.thread_time()
    result = reader.search(LogSearch(keyword=QUERY, limit=20))
    wall, cpu = time.perf_counter() - started, time.thread_time() - cpu
    percent = reader.progress.percent
    stop.set()
    build.join()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    return {"wall": wall, "cpu": cpu, "total": result.total, "indexed_percent": percent}


def child_index(root: Path) -> dict[str, Any]:
    reader = LogReader(_config(root), _store(root))
    children = _children_cpu()
    progress, wall, cpu = _timed(reader.build_all)
    workers = _children_cpu() - children  # the build's worker processes, reaped when it ends
    return {"wall": wall, "cpu": cpu + workers, "workers_cpu": workers, "mb": progress.bytes_total / 2**20}


def child_warm(root: Path, runs: int, service: str) -> dict[str, Any]:
    reader = LogReader(_config(root), _store(root))
    files = LogFiles(reader.config, reader)  # the tool's path over the same indexes
    reader.build_all()  # reads the index file back
    since = START + timedelta(hours=14)
    queries = {
        "keyword": LogSearch(keyword=QUERY, limit=20),
        "service_keyword": LogSearch(service=service, keyword=QUERY, limit=20),
        "level_window": LogSearch(
            level="ERROR", window=TimeWindow(since, since + timedelta(hours=1)), limit=20
        ),
    }
    out: dict[str, Any] = {}
    for name, query in queries.items():
        times: list[float] = []
        cpu: list[float] = []
        result: Any = None
        for _ in range(runs):
            result, wall, used = _timed(partial(reader.search, query))
            times.append(wall)
            cpu.append(used)
        out[name] = {"p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "cpu": _pct(cpu, 0.5),
                     "total": result.total, "files": result.files_read}  # fmt: skip
    everything = sum(index.count for index in reader.refresh().indexes)
    hours = 24 * 100_000 / max(everything, 1)
    summaries = {
        "summarize_service_hour": PatternsQuery(
            service, None, TimeWindow(since, since + timedelta(hours=1)), 10
        ),
        "summarize_100k": PatternsQuery(None, None, TimeWindow(since, since + timedelta(hours=hours)), 10),
    }
    for name, patterns in summaries.items():
        times, cpu = [], []
        page: Any = None
        for _ in range(max(1, runs // 5)):
            page, wall, used = _timed(partial(files.summarize, patterns))
            times.append(wall)
            cpu.append(used)
        out[name] = {"p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "cpu": _pct(cpu, 0.5),
                     "events": page.extra["events"], "patterns": page.total}  # fmt: skip
    out["survey_gather"] = survey_gather(files, service, max(3, runs // 2))
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def survey_gather(files: LogFiles, service: str, runs: int) -> dict[str, Any]:
    """What a survey gathers from one service's logs over the last six hours of the tree: its WARN
    and above templates with their values, buckets, rare severe events and changes across the
    window's middle, its newest ERROR lines, and a relevance search for the keyword's words."""
    end = START + timedelta(hours=24)
    window = TimeWindow(end - timedelta(hours=6), end)
    summary = PatternsQuery(service, "WARN", window, 10, changed_since=end - timedelta(hours=3))
    errors = LogsQuery(service, "ERROR", None, None, window, 20)
    relevant = LogsQuery(service, None, None, None, window, 10, query="connection not available timed out")

    def gather() -> int:
        found = files.summarize(summary).total + files.query(errors).total
        ranked = files.ranked(files.candidates(relevant), relevant.query or "", None, relevant.limit)
        return found + ranked.total

    times, cpu = [], []
    found = 0
    for _ in range(runs):
        found, wall, used = _timed(gather)
        times.append(wall)
        cpu.append(used)
    return {"p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "cpu": _pct(cpu, 0.5), "found": found}


def child_restart(root: Path) -> dict[str, Any]:
    def restart() -> Any:
        reader = LogReader(_config(root), _store(root))
        reader.build_all()
        return reader.search(LogSearch(keyword=QUERY, limit=20))

    result, wall, cpu = _timed(restart)
    return {"wall": wall, "cpu": cpu, "total": result.total}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grep_time(root: Path, pattern: str, runs: int, *, cold: bool) -> tuple[float, float, int]:
    """(wall p50, CPU p50, matching lines) of grep -F -i -c over the plain files plus zgrep -F -i
    -c over the .gz ones: the whole tree, as the keyword query reads it."""
    files = _files(root)
    plain = [str(f) for f in files if not f.name.endswith(".gz")]
    packed = [str(f) for f in files if f.name.endswith(".gz")]
    times, cpu, count = [], [], 0
    for _ in range(runs):
        if cold:
            evict(root)
        t, c = time.perf_counter(), _children_cpu()
        count = 0
        for tool, group in (("grep", plain), ("zgrep", packed)):
            if group:
                done = subprocess.run(
                    [tool, "-F", "-i", "-c", pattern, *group], capture_output=True, text=True, check=False
                )
                count += sum(int(line.rsplit(":", 1)[1]) for line in done.stdout.splitlines() if ":" in line)
        times.append(time.perf_counter() - t)
        cpu.append(_children_cpu() - c)
    return _pct(times, 0.5), _pct(cpu, 0.5), count


def _child(step: str, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", step, "--keep", str(root), "--runs", str(args.runs),
               "--service", args.service]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def run(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    (root / ".evigate-index.sqlite3").unlink(missing_ok=True)
    on_disk = sum(p.stat().st_size for p in _files(root)) / 2**20
    cold = _child("cold", root, args)
    cold_building = _child("cold_building", root, args)
    grep_cold = grep_time(root, QUERY, max(1, args.runs // 5), cold=True)
    grep_rare = grep_time(root, RARE, max(1, args.runs // 5), cold=True)
    index = _child("index", root, args)
    warm = _child("warm", root, args)
    restart = _child("restart", root, args)
    grep_warm = grep_time(root, QUERY, args.runs, cold=False)
    return {
        "bench": "bench_logs",
        "size_mb": on_disk,
        "services": args.services,
        "keyword": QUERY,
        "cold": cold,
        "cold_building": cold_building,
        "grep_cold": {"p50": grep_cold[0], "cpu": grep_cold[1], "lines": grep_cold[2]},
        "grep_cold_rare": {"p50": grep_rare[0], "cpu": grep_rare[1], "lines": grep_rare[2]},
        "index": {**index, "mb_per_s_wall": on_disk / index["wall"], "mb_per_s_cpu": on_disk / index["cpu"]},
        "warm": warm,
        "restart": restart,
        "grep_warm": {"p50": grep_warm[0], "cpu": grep_warm[1], "lines": grep_warm[2]},
    }


def report(r: dict[str, Any]) -> None:
    cold, building, gc, index, warm, restart, gw = (
        r[k] for k in ("cold", "cold_building", "grep_cold", "index", "warm", "restart", "grep_warm")
    )
    keyword = warm["keyword"]
    print(
        f"{r['size_mb']:.0f} MB on disk, {r['services']} services; keyword {r['keyword']!r}, case-insensitive"
    )
    print(f"{'':34}{'evigate':>12}{'grep -F -i':>12}{'ratio':>8}")
    rows = [
        ("cold first query (no index, evicted)", cold["common"]["wall"], gc["p50"]),
        ("  same, while the index builds", building["wall"], gc["p50"]),
        (f"  same, rare keyword {RARE!r}", cold["rare"]["wall"], r["grep_cold_rare"]["p50"]),
        ("warm query p50 (index built)", keyword["p50"], gw["p50"]),
        ("restart: read index back + query", restart["wall"], gw["p50"]),
    ]
    for name, ours, theirs in rows:
        print(f"{name:34}{ours * 1e3:>10.0f}ms{theirs * 1e3:>10.0f}ms{ours / theirs:>8.2f}")
    lines = f"grep {gw['lines']} lines (a stack-trace line counts apart)"
    print(f"matches: evigate {keyword['total']} events, {lines}")
    wall = f"{index['wall']:.1f} s wall ({index['mb_per_s_wall']:.1f} MB/s)"
    cpu = f"{index['cpu']:.1f} s CPU ({index['mb_per_s_cpu']:.1f} MB/s)"
    print(f"indexing: {index['mb']:.0f} MB in {wall}, {cpu}")
    for name in (
        "service_keyword",
        "level_window",
        "summarize_service_hour",
        "summarize_100k",
        "survey_gather",
    ):
        row = warm[name]
        times = (
            f"p50 {row['p50'] * 1e3:8.1f} ms  p99 {row['p99'] * 1e3:8.1f} ms  cpu {row['cpu'] * 1e3:8.1f} ms"
        )
        print(f"{name:24} {times}")
    print(f"peak RSS (warm process) {warm['rss_mb']:.0f} MB")


WHAT = (
    "JSON / logfmt / logback text over 50 services (every fifth rotated with a .gz), keyword "
    f"{QUERY!r} case-insensitive over the whole tree; grep -F -i -c (zgrep for .gz) on the same files"
)


def labelled(r: dict[str, Any]) -> list[figures.Figure]:
    def against(ours: dict[str, float], grep: dict[str, float]) -> str:
        """Wall and CPU of both: on a loaded machine the CPU ratio is the steadier one."""
        wall, cpu = ours.get("wall", ours.get("p50", 0.0)), ours["cpu"]
        mine = f"{wall * 1e3:.0f} ms ({cpu * 1e3:.0f} ms CPU)"
        theirs = f"grep {grep['p50'] * 1e3:.0f} ms ({grep['cpu'] * 1e3:.0f} ms CPU)"
        return f"{mine}; {theirs}: {wall / grep['p50']:.2f}× wall, {cpu / grep['cpu']:.2f}× CPU"

    warm, index = r["warm"], r["index"]
    keyword = warm["keyword"]
    out = [
        figures.Figure(f"tree on disk, {r['services']} services", f"{r['size_mb']:.0f} MB"),
        figures.Figure(
            f"first query, no index (byte scan), pages evicted; {r['cold']['common']['total']} events",
            against(r["cold"]["common"], r["grep_cold"]),
            cache="cold",
        ),
        figures.Figure(
            f"the same asked as the background build starts ({r['cold_building']['indexed_percent']:.0f}% "
            "indexed by its answer; the query thread's CPU)",
            against(r["cold_building"], r["grep_cold"]),
            cache="cold",
        ),
        figures.Figure(
            f"the same with a rare keyword ({r['cold']['rare']['total']} events)",
            against(r["cold"]["rare"], r["grep_cold_rare"]),
            cache="cold",
        ),
        figures.Figure("query on the built index, p50", against(keyword, r["grep_warm"]), cache="warm"),
        figures.Figure(
            "restart: index read back from disk + the query",
            against(r["restart"], r["grep_warm"]),
            cache="warm",
        ),
        figures.Figure(
            "indexing the tree (CPU: all processes of the build)",
            f"{index['mb_per_s_wall']:.1f} MB/s wall, {index['mb_per_s_cpu']:.1f} MB/s "
            f"CPU ({index['wall']:.0f} s)",
            cache="cold",
        ),
    ]
    for name, label in (
        ("service_keyword", "service + keyword, p50"),
        ("level_window", "ERROR + 1 h window, p50 (no grep equivalent)"),
        ("summarize_service_hour", "summarize_logs, one service's hour, p50"),
        ("summarize_100k", "summarize_logs, ~100,000 events, p50"),
        (
            "survey_gather",
            "a survey's log gathering for one service (6 h: WARN+ templates with values, "
            "severe events, changes; ERROR lines; a relevance search), p50",
        ),
    ):
        out.append(figures.Figure(label, f"{warm[name]['p50'] * 1e3:.0f} ms", cache="warm"))
    out.append(figures.Figure("peak RSS of the querying process", f"{warm['rss_mb']:.0f} MB"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory")
    figures.add_json_flag(parser)
    parser.add_argument(
        "--child", choices=("cold", "cold_building", "index", "warm", "restart"), help=argparse.SUPPRESS
    )
    parser.add_argument("--service", default="svc-10")  # rotated, gz part included
    args = parser.parse_args()
    if args.child:
        steps = {"cold": lambda: child_cold(args.keep), "index": lambda: child_index(args.keep),
                 "cold_building": lambda: child_cold_building(args.keep),
                 "warm": lambda: child_warm(args.keep, args.runs, args.service),
                 "restart": lambda: child_restart(args.keep)}  # fmt: skip
        print(json.dumps(steps[args.child]()))
        return
    tmp = None
    root = args.keep
    if root is None:
        tmp = tempfile.mkdtemp(prefix="evigate-bench-logs-")
        root = Path(tmp)
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not _files(root):
            t = time.perf_counter()
            generate(root, args.size_mb, args.services)
            print(f"generated {args.size_mb} MB in {time.perf_counter() - t:.1f} s under {root}")
        result = run(root, args)
        report(result)
        figures.write(args.json, "bench_logs", WHAT, labelled(result), raw=result)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
