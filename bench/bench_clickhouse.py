"""The ClickHouse log source against the file index, on bench_logs' 1 GB corpus loaded into a table.

    .venv/bin/python bench/bench_clickhouse.py [--size-mb 1024] [--services 50] [--runs 30] [--keep DIR]
        [--clickhouse-dir DIR]
        [--json FILE]

Generates bench_logs' corpus (or reuses --keep, with its index file if bench_logs left one), starts
Debian's clickhouse-server on free loopback ports with a temporary data directory, and loads the same
events as otel_logs rows (18.16 types: DateTime, attributes as text). Then:

- a service + keyword query (query_logs) and a summary of one service's hour (summarize_logs), p50
  and p99 over --runs, through ClickHouseLogs and through the file source's index (warm both);
- a summary of every row (more than are mined: the server counts the templates and the buckets),
  ClickHouse only, over a tenth of --runs (at least 3);
- the first query after a start: ClickHouse restarted with its data files evicted from the page
  cache, then the service + keyword query; the files' counterpart is a new reader reading its index
  file back (files evicted too) and the same query;
- evigate's own overhead per call: the service + keyword call minus the bare HTTP requests it makes
  (the same two statements, sent at once by a plain httpx client), paired run by run, p50.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from bench.bench_logs import QUERY, START, Generated, _config, _files, _pct, _store, events, evict, generate
from evigate.server.queries.types import LogsQuery, PatternsQuery, TimeWindow
from evigate.server.sources.clickhouse import sql
from evigate.server.sources.clickhouse.clickhouse_config import ClickHouseConfig
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs import LogReader
from tests.sources.clickhouse.server import OTEL_LOGS_18, execute, start_clickhouse

HOUR = TimeWindow(START + timedelta(hours=14), START + timedelta(hours=15))
ALL = TimeWindow(None, None)


def _row(event: Generated) -> str:
    return json.dumps(
        {"Timestamp": event.moment.strftime("%Y-%m-%d %H:%M:%S"), "SeverityText": event.level,
         "ServiceName": event.service, "Body": event.message},
        ensure_ascii=False,
    )  # fmt: skip


def load(url: str, size_mb: int, services: int) -> int:
    execute(url, OTEL_LOGS_18.format(table="otel_logs"))
    count = 0
    stream = events(size_mb, services)
    while batch := list(itertools.islice(stream, 500_000)):
        body = ("\n".join(map(_row, batch)) + "\n").encode()
        execute(
            url, "INSERT INTO otel_logs (Timestamp, SeverityText, ServiceName, Body) FORMAT JSONEachRow", body
        )
        count += len(batch)
    execute(url, "OPTIMIZE TABLE otel_logs FINAL")
    return count


async def _times(action: Callable[[], Awaitable[Any]], runs: int) -> dict[str, float]:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        walls.append(time.perf_counter() - started)
    return {"p50": _pct(walls, 0.5), "p99": _pct(walls, 0.99)}


async def _overhead(logs: ClickHouseLogs, url: str, question: LogsQuery, runs: int) -> dict[str, float]:
    """Paired: our call, then the bare requests with the same SQL and parameters, run by run."""
    where = logs._where(question.service, None, question.window)
    where.keyword(question.keyword)
    statements = [
        sql.select_rows(logs.config.columns, logs.config.table_ref, where, question.limit),
        sql.select_count(logs.config.table_ref, where),
    ]
    structure = "service String, keyword String"
    data = json.dumps(where.params) + "\n"
    ours, bare, diffs = [], [], []
    async with httpx.AsyncClient(base_url=url) as client:

        async def post(statement: str) -> bytes:
            params = {"query": statement + "\nFORMAT JSONEachRow", "p_format": "JSONEachRow",
                      "p_structure": structure, "readonly": "2"}  # fmt: skip
            response = await client.post("/", params=params, files={"p": ("p", data)}, data={})
            return response.content

        for _ in range(runs):
            started = time.perf_counter()
            await logs.query(question)
            mine = time.perf_counter() - started
            started = time.perf_counter()
            await asyncio.gather(*(post(s) for s in statements))
            theirs = time.perf_counter() - started
            ours.append(mine)
            bare.append(theirs)
            diffs.append(mine - theirs)
    return {"ours_p50": _pct(ours, 0.5), "bare_p50": _pct(bare, 0.5), "overhead_p50": _pct(diffs, 0.5)}


async def measure(root: Path, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    server = start_clickhouse(workdir)
    try:
        started = time.perf_counter()
        held = execute(server.url, "EXISTS TABLE otel_logs").strip() == "1"
        if held:  # a kept --clickhouse-dir: the rows are there already
            rows = int(execute(server.url, "SELECT count() FROM otel_logs").strip())
        else:
            rows = load(server.url, args.size_mb, args.services)
        loaded_s = time.perf_counter() - started
        reader = LogReader(_config(root), _store(root))
        started = time.perf_counter()
        reader.build_all()
        index_s = time.perf_counter() - started
        files = LogFiles(reader.config, reader)
        logs = ClickHouseLogs(ClickHouseConfig(url=server.url, timeout_s=60))
        keyword = LogsQuery(args.service, None, QUERY, None, ALL, 20)
        summary = PatternsQuery(args.service, None, HOUR, 10)
        same = (await logs.query(keyword)).total, files.query(keyword).total
        out: dict[str, Any] = {"rows": rows, "load_s": loaded_s, "files_index_s": index_s, "totals": same}
        out["service_keyword"] = {
            "clickhouse": await _times(lambda: logs.query(keyword), args.runs),
            "files": await _times(lambda: asyncio.to_thread(files.query, keyword), args.runs),
        }
        out["summarize_service_hour"] = {
            "clickhouse": await _times(lambda: logs.summarize(summary), args.runs),
            "files": await _times(lambda: asyncio.to_thread(files.summarize, summary), args.runs),
        }
        wide = PatternsQuery(None, None, ALL, 10)  # more rows than are mined: the server counts templates
        page = await logs.summarize(wide)
        out["summarize_everything"] = {
            "clickhouse": await _times(lambda: logs.summarize(wide), max(3, args.runs // 10)),
            "events": page.extra["events"],
            "mined": page.extra["mined"],
            "template_counts": page.extra.get("template_counts"),
        }
        out["overhead"] = await _overhead(logs, server.url, keyword, args.runs)
        await logs.aclose()
        server.stop()
        evict(workdir / "data")
        server = start_clickhouse(workdir)  # the same data directory: a restart
        logs = ClickHouseLogs(ClickHouseConfig(url=server.url, timeout_s=60))
        started = time.perf_counter()
        await logs.query(keyword)
        out["first_query_clickhouse_s"] = time.perf_counter() - started
        await logs.aclose()
        evict(root)
        started = time.perf_counter()
        fresh = LogReader(_config(root), _store(root))
        LogFiles(fresh.config, fresh).query(keyword)
        out["first_query_files_s"] = time.perf_counter() - started
        return out
    finally:
        server.stop()


def labelled(r: dict[str, Any]) -> list[figures.Figure]:
    def pair(name: str) -> str:
        ch, files = r[name]["clickhouse"], r[name]["files"]
        return (
            f"ClickHouse p50 {ch['p50'] * 1e3:.0f} ms, p99 {ch['p99'] * 1e3:.0f} ms; "
            f"file index p50 {files['p50'] * 1e3:.0f} ms, p99 {files['p99'] * 1e3:.0f} ms"
        )

    overhead = r["overhead"]
    return [
        figures.Figure(
            f"rows in ClickHouse ({r['rows']:,} events of bench_logs' corpus)",
            f"loaded in {r['load_s']:.0f} s",
        ),
        figures.Figure("service + keyword (query_logs)", pair("service_keyword"), cache="warm"),
        figures.Figure("summarize_logs, one service's hour", pair("summarize_service_hour"), cache="warm"),
        figures.Figure(
            f"summarize_logs of every row ({r['summarize_everything']['events']:,} events, newest "
            f"{r['summarize_everything']['mined']:,} mined; templates counted by the server: "
            f"{(r['summarize_everything']['template_counts'] or {}).get('by_server', 0)})",
            f"ClickHouse p50 {r['summarize_everything']['clickhouse']['p50'] * 1e3:.0f} ms, "
            f"p99 {r['summarize_everything']['clickhouse']['p99'] * 1e3:.0f} ms",
            cache="warm",
        ),
        figures.Figure(
            "first query after a start (data evicted from the page cache)",
            f"ClickHouse restarted {r['first_query_clickhouse_s'] * 1e3:.0f} ms; "
            f"file index read back {r['first_query_files_s'] * 1e3:.0f} ms",
            cache="cold",
        ),
        figures.Figure(
            "evigate's overhead per call over the bare HTTP requests, p50",
            f"{overhead['overhead_p50'] * 1e3:.1f} ms (call {overhead['ours_p50'] * 1e3:.1f} ms, "
            f"bare {overhead['bare_p50'] * 1e3:.1f} ms)",
            cache="warm",
        ),
    ]


WHAT = (
    "bench_logs' corpus (50 services, 24 h) as otel_logs rows in Debian's ClickHouse 18.16, against the "
    f"file source's index of the same files; service svc-10, keyword {QUERY!r}"
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory")
    parser.add_argument("--service", default="svc-10")
    parser.add_argument("--clickhouse-dir", type=Path, help="keep (or reuse) ClickHouse's data here")
    figures.add_json_flag(parser)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="evigate-bench-clickhouse-"))
    root = args.keep or scratch / "logs"
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not _files(root):
            generate(root, args.size_mb, args.services)
        result = asyncio.run(measure(root, args.clickhouse_dir or scratch / "clickhouse", args))
        for figure in labelled(result):
            print(f"{figure.name}: {figure.value}")
        figures.write(args.json, "bench_clickhouse", WHAT, labelled(result), raw=result)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
