"""The ClickHouse log source against the file index, on bench_logs' 1 GB corpus loaded into a table.

    .venv/bin/python bench/bench_clickhouse.py [--size-mb 1024] [--services 50] [--runs 30] [--keep DIR]
        [--clickhouse-dir DIR] [--overhead-runs 200] [--profile N] [--json FILE]

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
- evigate's own time per call, for the service + keyword query_logs and the hour's summary: the
  requests the source sends are recorded once (settings in the URL, the SQL and the parameter
  table in the multipart body), then the call through the source and the same requests sent by a
  plain httpx client are timed run by run (alternating which goes first), p50 and p99 of each and
  of the paired difference (--overhead-runs pairs for query_logs, --runs for the summary); then
  both again with the server's answers replayed from memory (no server, no network), which
  isolates the client side from the server's and the machine's noise.

--profile N prints cProfile's top N (cumulative) of one query_logs and one summarize_logs call.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import json
import os
import pstats
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from bench.bench_logs import QUERY, START, Generated, _config, _files, _pct, _store, events, evict, generate
from evigate.server.queries.types import LogsQuery, Page, PatternsQuery, TimeWindow
from evigate.server.sources.clickhouse.clickhouse_config import ClickHouseConfig
from evigate.server.sources.clickhouse.client import ClickHouseClient
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs import LogReader
from tests.sources.clickhouse.server import OTEL_LOGS_18, execute, start_clickhouse

Call = Callable[[ClickHouseLogs], Awaitable[Page]]
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


@dataclass
class Sent:
    """One request the source sent, as sent (URL with the SQL, headers, multipart body), its wave
    (how many answers had come back when it left: requests of one wave run concurrently) and the
    answer it got."""

    url: str
    headers: dict[str, str]
    body: bytes
    wave: int
    status: int = 0
    answer: bytes = b""
    answer_headers: dict[str, str] = field(default_factory=dict)


class Recorder(httpx.AsyncBaseTransport):
    """The source's requests and the server's answers, recorded over one call."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[Sent] = []
        self.answered = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        keep = ("content-type", "x-clickhouse-user", "x-clickhouse-key")
        headers = {k: v for k, v in request.headers.items() if k.lower() in keep}
        sent = Sent(str(request.url), headers, await request.aread(), self.answered)
        self.sent.append(sent)
        response = await self.inner.handle_async_request(request)
        sent.answer = await response.aread()
        sent.status, sent.answer_headers = response.status_code, dict(response.headers)
        self.answered += 1
        return httpx.Response(response.status_code, headers=response.headers, content=sent.answer)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Replay(httpx.AsyncBaseTransport):
    """The recorded answers, from memory: a call's client-side work without a server."""

    def __init__(self, sent: list[Sent]) -> None:
        self.answers = {_key(s.url, s.body): s for s in sent}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        got = self.answers[_key(str(request.url), await request.aread())]
        return httpx.Response(got.status, headers=got.answer_headers, content=got.answer)


def _key(url: str, body: bytes) -> tuple[str, bytes]:
    """What tells one request from another: the URL, and the SQL when the body carries it (the
    multipart field `query`: the boundary varies from request to request), else a plain body."""
    if body.startswith(b"--"):  # multipart
        field = re.search(rb'name="query"\r\n\r\n(.*?)\r\n--', body, re.DOTALL)
        return url, field.group(1) if field else b""
    return url, body


async def record(config: ClickHouseConfig, call: Call) -> list[Sent]:
    recorder = Recorder()
    logs = ClickHouseLogs(config, ClickHouseClient(config, transport=recorder))
    try:
        await call(logs)
    finally:
        await logs.aclose()
    return recorder.sent


async def bare(client: httpx.AsyncClient, sent: list[Sent]) -> None:
    """The recorded requests, as they were sent (the same SQL, settings and parameter table), wave
    by wave, each answer read whole: what a caller pays for the same HTTP without evigate."""

    async def post(one: Sent) -> bytes:
        response = await client.post(one.url, headers=one.headers, content=one.body)
        return await response.aread()

    for wave in sorted({s.wave for s in sent}):
        await asyncio.gather(*(post(s) for s in sent if s.wave == wave))


def _spread(values: list[float]) -> dict[str, float]:
    return {"p50": _pct(values, 0.5), "p99": _pct(values, 0.99)}


async def overhead(logs: ClickHouseLogs, call: Call, runs: int) -> dict[str, Any]:
    """evigate's own time per call: the call through the source against the same requests sent
    bare by a plain httpx client, run by run, alternating which goes first; then both again with
    the server's answers replayed from memory (no server, no network: the client side alone)."""
    sent = await record(logs.config, call)
    ours, theirs, diffs = [], [], []
    async with httpx.AsyncClient() as client:
        await bare(client, sent)  # a connection open, as the source's pool has one
        for run in range(runs):
            order = ("ours", "bare") if run % 2 == 0 else ("bare", "ours")
            took: dict[str, float] = {}
            for which in order:
                started = time.perf_counter()
                await (call(logs) if which == "ours" else bare(client, sent))
                took[which] = time.perf_counter() - started
            ours.append(took["ours"])
            theirs.append(took["bare"])
            diffs.append(took["ours"] - took["bare"])
    replay = Replay(sent)
    replayed = ClickHouseLogs(logs.config, ClickHouseClient(logs.config, transport=replay))
    mine, plain = [], []
    async with httpx.AsyncClient(transport=replay) as client:
        for _ in range(runs):
            started = time.perf_counter()
            await call(replayed)
            mine.append(time.perf_counter() - started)
            started = time.perf_counter()
            await bare(client, sent)
            plain.append(time.perf_counter() - started)
    await replayed.aclose()
    return {
        "requests": len(sent),
        "answer_bytes": sum(len(s.answer) for s in sent),
        "ours": _spread(ours),
        "bare": _spread(theirs),
        "overhead": _spread(diffs),
        "replayed": {"ours": _spread(mine), "bare": _spread(plain),
                     "overhead": _spread([a - b for a, b in zip(mine, plain, strict=True)])},
    }  # fmt: skip


async def profile(logs: ClickHouseLogs, call: Call, top: int) -> str:
    """cProfile of one call (after a warm one): where its own time goes, by cumulative time."""
    await call(logs)
    profiler = cProfile.Profile()
    profiler.enable()
    await call(logs)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


async def measure(root: Path, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    server = start_clickhouse(workdir)
    try:
        loading = workdir / "loaded.json"  # how the rows got there, for a kept --clickhouse-dir
        if execute(server.url, "EXISTS TABLE otel_logs").strip() == "1" and loading.exists():
            loaded = json.loads(loading.read_text(encoding="utf-8"))
        else:
            started = time.perf_counter()
            rows = load(server.url, args.size_mb, args.services)
            loaded = {"rows": rows, "load_s": time.perf_counter() - started, "load_load": os.getloadavg()[0]}
            loading.write_text(json.dumps(loaded), encoding="utf-8")
        rows, loaded_s = int(loaded["rows"]), float(loaded["load_s"])
        table_dir = workdir / "data" / "data" / "default" / "otel_logs"
        on_disk = sum(f.stat().st_size for f in table_dir.rglob("*") if f.is_file())
        reader = LogReader(_config(root), _store(root))
        started = time.perf_counter()
        reader.build_all()
        index_s = time.perf_counter() - started
        files = LogFiles(reader.config, reader)
        logs = ClickHouseLogs(ClickHouseConfig(url=server.url, timeout_s=60))
        keyword = LogsQuery(args.service, None, QUERY, None, ALL, 20)
        summary = PatternsQuery(args.service, None, HOUR, 10)
        same = (await logs.query(keyword)).total, files.query(keyword).total
        out: dict[str, Any] = {
            "rows": rows, "load_s": loaded_s, "load_load": loaded.get("load_load"), "table_bytes": on_disk,
            "corpus_bytes": sum(f.stat().st_size for f in _files(root)), "files_index_s": index_s,
            "totals": same,
        }  # fmt: skip
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
        out["overhead"] = await overhead(logs, lambda s: s.query(keyword), args.overhead_runs)
        out["summary_overhead"] = await overhead(logs, lambda s: s.summarize(summary), args.runs)
        if args.profile:
            print(await profile(logs, lambda s: s.query(keyword), args.profile))
            print(await profile(logs, lambda s: s.summarize(summary), args.profile))
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

    return [
        figures.Figure(
            f"rows in ClickHouse ({r['rows']:,} events of bench_logs' corpus, "
            f"{r['corpus_bytes'] / 2**20:,.0f} MB of files)",
            f"loaded in {r['load_s']:.0f} s (JSONEachRow inserts of 500,000 rows; generating them is most "
            f"of it; load average {r['load_load'] or 0:.0f}); {r['table_bytes'] / 2**20:,.0f} MB on disk",
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
        *(
            figures.Figure(
                f"evigate's own time per {what} call over the same {r[key]['requests']} HTTP "
                f"requests sent bare ({r[key]['answer_bytes'] / 1e3:,.0f} kB answered)",
                _overhead_text(r[key]),
                cache="warm",
            )
            for what, key in (
                ("query_logs", "overhead"),
                ("summarize_logs (one service's hour)", "summary_overhead"),
            )
        ),
    ]


def _ms(spread: dict[str, float]) -> str:
    return f"p50 {spread['p50'] * 1e3:.1f} ms, p99 {spread['p99'] * 1e3:.1f} ms"


def _overhead_text(o: dict[str, Any]) -> str:
    replayed = o["replayed"]
    return (
        f"live, paired run by run: {_ms(o['overhead'])} (call {_ms(o['ours'])}; bare {_ms(o['bare'])}); "
        f"answers replayed from memory: {_ms(replayed['overhead'])} (call {_ms(replayed['ours'])}; "
        f"bare {_ms(replayed['bare'])})"
    )


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
    parser.add_argument(
        "--overhead-runs",
        type=int,
        default=200,
        help="paired runs of the query_logs overhead (the machine's noise is larger than it)",
    )
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory")
    parser.add_argument("--service", default="svc-10")
    parser.add_argument("--clickhouse-dir", type=Path, help="keep (or reuse) ClickHouse's data here")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="print cProfile's top N of one query_logs and one summarize_logs call",
    )
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
