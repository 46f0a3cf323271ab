# Log lines and label sets are kept whole, as they appear in the data.
# ruff: noqa: E501
"""Writes the kestrel world's data files (logs and series) from this one script, deterministically.

    python tests/worlds/kestrel/generate.py      # rewrites logs/ and live/series.jsonl in place

Kestrel is a travel-booking company. Its logs are what a support bundle of three Kubernetes nodes
holds (/var/log/pods and /var/log/containers in CRI format, rotated files included), in the
formats its teams happen to use. Its metrics and alerts are served live by VictoriaMetrics and
Alertmanager, loaded from live/. The story, and every fact a question may ask about, is in
README.md. The output is committed; run this only to change the world, never from a test.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
DAY = datetime(2026, 11, 20, tzinfo=UTC)
rng = random.Random(20261120)
Series = dict[str, Any]
Rate = Callable[[datetime], float]


def at(hhmmss: str) -> datetime:
    h, m, *s = (int(x) for x in hhmmss.split(":"))
    return DAY + timedelta(hours=h, minutes=m, seconds=s[0] if s else 0)


def every(start: str, end: str, seconds: float, jitter: float = 0.3) -> Iterator[datetime]:
    t, stop = at(start), at(end)
    while t < stop:
        yield t + timedelta(seconds=rng.uniform(0, seconds * jitter), microseconds=rng.randrange(10**6))
        t += timedelta(seconds=seconds)


def ramp(t: datetime, start: str, end: str, lo: float, hi: float) -> float:
    """lo before start, hi after end, linear in between."""
    a, b = at(start), at(end)
    if t <= a:
        return lo
    if t >= b:
        return hi
    return lo + (hi - lo) * (t - a) / (b - a)


def cri_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}" + f"{rng.randrange(1000):03d}Z"


class Stream:
    """One container's log as the kubelet writes it: CRI lines, cut into rotated files."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[tuple[datetime, str, str]] = []

    def add(self, t: datetime, text: str, stream: str = "stdout") -> None:
        for i, line in enumerate(text.split("\n")):
            self.lines.append((t + timedelta(microseconds=37 * i), stream, line))

    def cri(self) -> list[tuple[datetime, str]]:
        out = []
        last = DAY - timedelta(days=1)
        for t, stream, line in sorted(self.lines, key=lambda x: x[0]):
            # the runtime's receive time: a little after the write, never before the previous line's
            delay = max(t + timedelta(microseconds=rng.randrange(80, 900)), last + timedelta(microseconds=1))
            last = delay
            if len(line) > 16384:  # the kubelet splits a line longer than 16 KiB: P records, then F
                for i in range(0, len(line), 16384):
                    tag = "F" if i + 16384 >= len(line) else "P"
                    out.append((t, f"{cri_time(delay)} {stream} {tag} {line[i : i + 16384]}"))
            else:
                out.append((t, f"{cri_time(delay)} {stream} F {line}"))
        return out

    def write(self, directory: Path, rotations: tuple[str, ...] = (), base: str = "0.log") -> None:
        """`rotations`: HH:MM:SS times at which the kubelet rotated `base` to `base.YYYYMMDD-HHMMSS`."""
        directory.mkdir(parents=True, exist_ok=True)
        records = self.cri()
        cuts = [at(r) for r in rotations]
        start = 0
        for cut in cuts:
            end = next((i for i, (t, _) in enumerate(records) if t >= cut), len(records))
            rotated = directory / f"{base}.{cut.strftime('%Y%m%d-%H%M%S')}"
            rotated.write_text("".join(line + "\n" for _, line in records[start:end]))
            start = end
        (directory / base).write_text("".join(line + "\n" for _, line in records[start:]))


def pod_dir(node: str, namespace: str, pod: str, uid: str) -> Path:
    return HERE / "logs" / node / "var/log/pods" / f"{namespace}_{pod}_{uid}"


def container_link(node: str, pod: str, namespace: str, container: str, target: Path) -> None:
    links = HERE / "logs" / node / "var/log/containers"
    links.mkdir(parents=True, exist_ok=True)
    cid = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    link = links / f"{pod}_{namespace}_{container}-{cid}.log"
    link.symlink_to(os.path.relpath(target, links))


def booking_id() -> str:
    return f"BK-77{rng.randrange(10000, 99999)}"


# ---------------------------------------------------------------------------------------------
# gateway (edge): an in-house Go reverse proxy; Go's `log` package, no levels, on stderr.

GATEWAY_POD = "gateway-6b9d7c5f8d-x7kqm"
FARES = "fare-search.pricing.svc.cluster.local:8000"
ROUTER = "order-router.booking.svc.cluster.local:8080"
HOTELS = "hotel-inventory.hotels.svc.cluster.local:3000"


def go_log(t: datetime, msg: str) -> str:
    return f"{t:%Y/%m/%d %H:%M:%S} {msg}"


def gateway() -> Stream:
    s = Stream("gateway")
    s.add(
        at("00:00:02"),
        go_log(
            at("00:00:02"), "config: loaded 14 routes from /etc/gateway/routes.yaml (upstream_timeout=10s)"
        ),
        "stderr",
    )
    s.add(
        at("09:10:44"),
        go_log(
            at("09:10:44"), "config: loaded 14 routes from /etc/gateway/routes.yaml (upstream_timeout=10s)"
        ),
        "stderr",
    )
    for t in every("00:00:10", "12:00:00", 45):
        path = rng.choice(
            ["/v1/fares?from=AMS&to=LIS", "/v1/fares?from=FRA&to=JFK", "/v1/fares?from=CDG&to=BCN"]
        )
        ms = int(ramp(t, "10:20", "11:55", 160, 4100) * rng.uniform(0.8, 1.2))
        s.add(t, go_log(t, f"GET {path} 200 {ms}ms upstream={FARES}"), "stderr")
    # Failed proxy calls are always logged (successes above are what the access sampler kept).
    for t in every("10:55:00", "12:00:00", 30):
        if rng.random() < ramp(t, "10:55", "11:55", 0.05, 0.9):
            path = rng.choice(
                ["/v1/fares?from=AMS&to=LIS", "/v1/fares?from=FRA&to=JFK", "/v1/fares?from=CDG&to=BCN"]
            )
            code = rng.choice([502, 504, 504])
            s.add(t, go_log(t, "http: proxy error: context deadline exceeded"), "stderr")
            s.add(t, go_log(t, f"upstream {FARES} returned {code} for GET {path} after 10.00s"), "stderr")
    for t in every("00:00:20", "12:00:00", 60):
        ms = rng.randrange(90, 420) if t < at("11:02") else rng.randrange(900, 3100)
        code = 200 if t < at("11:02") or rng.random() > 0.3 else 503
        s.add(t, go_log(t, f"POST /v1/bookings {code} {ms}ms upstream={ROUTER}"), "stderr")
    for t in every("00:00:40", "12:00:00", 90):
        s.add(
            t,
            go_log(t, f"GET /api/v2/availability 200 {rng.randrange(30, 90)}ms upstream={HOTELS}"),
            "stderr",
        )
    return s


# ---------------------------------------------------------------------------------------------
# OrderRouter (booking): Spring Boot 3.2's default console layout, Java stack traces.

ROUTER_OLD = "order-router-7d9c5b6f48-k2x8p"
ROUTER_NEW = "order-router-58f7b9c6d4-q7w2n"
ROUTER_CLASSES = {
    "ctl": "c.k.booking.router.RouteController      ",
    "svc": "c.k.booking.router.RoutingService       ",
    "sched": "o.s.s.s.TaskUtils$LoggingErrorHandler    ",
    "app": "c.k.booking.OrderRouterApplication      ",
}


def spring(t: datetime, level: str, thread: str, logger: str, msg: str) -> str:
    ts = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
    return f"{ts} {level:>5} 1 --- [OrderRouter] [{thread:>15}] {ROUTER_CLASSES[logger]}: {msg}"


ROUTE_FAILURE = """org.springframework.transaction.CannotCreateTransactionException: Could not open JPA EntityManager for transaction
\tat org.springframework.orm.jpa.JpaTransactionManager.doBegin(JpaTransactionManager.java:466)
\tat org.springframework.transaction.support.AbstractPlatformTransactionManager.startTransaction(AbstractPlatformTransactionManager.java:531)
\tat org.springframework.transaction.support.AbstractPlatformTransactionManager.getTransaction(AbstractPlatformTransactionManager.java:405)
\tat com.kestrel.booking.router.RoutingService.reserve(RoutingService.java:148)
\tat com.kestrel.booking.router.RouteController.route(RouteController.java:61)
Caused by: org.hibernate.exception.JDBCConnectionException: Unable to acquire JDBC Connection [FATAL: sorry, too many clients already] [n/a]
\tat org.hibernate.exception.internal.SQLStateConversionDelegate.convert(SQLStateConversionDelegate.java:100)
\tat org.hibernate.exception.internal.StandardSQLExceptionConverter.convert(StandardSQLExceptionConverter.java:58)
\t... 38 more
Caused by: org.postgresql.util.PSQLException: FATAL: sorry, too many clients already
\tat org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(ConnectionFactoryImpl.java:693)
\tat org.postgresql.core.v3.ConnectionFactoryImpl.tryConnect(ConnectionFactoryImpl.java:203)
\tat org.postgresql.core.v3.ConnectionFactoryImpl.openConnectionImpl(ConnectionFactoryImpl.java:258)
\t... 52 more"""

OOM = """java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)
\tat java.base/java.lang.AbstractStringBuilder.ensureCapacityInternal(AbstractStringBuilder.java:228)
\tat java.base/java.lang.StringBuilder.append(StringBuilder.java:179)
\tat com.kestrel.booking.router.report.FareReport.render(FareReport.java:212)
\tat com.kestrel.booking.router.report.NightlyReportJob.run(NightlyReportJob.java:57)"""


def order_router(pod: str, since: str, version: str) -> Stream:
    s = Stream(pod)
    t0 = at(since)
    s.add(
        t0,
        spring(
            t0,
            "INFO",
            "main",
            "app",
            f"Starting OrderRouterApplication v{version} using Java 21.0.5 with PID 1",
        ),
    )
    flags = (
        "routing.cache.enabled=false, routing.parallel-carriers=4"
        if version == "2.15.0"
        else "routing.cache.enabled=true, routing.parallel-carriers=4"
    )
    s.add(
        t0 + timedelta(seconds=2),
        spring(t0 + timedelta(seconds=2), "INFO", "main", "app", f"Feature flags: {flags}"),
    )
    s.add(
        t0 + timedelta(seconds=8),
        spring(
            t0 + timedelta(seconds=8),
            "INFO",
            "main",
            "app",
            "Started OrderRouterApplication in 8.412 seconds (process running for 9.107)",
        ),
    )
    for t in every(since, "12:00:00", 30):
        thread = f"nio-8080-exec-{rng.randrange(1, 11)}"
        if t >= at("11:02") and rng.random() < 0.25:
            bk = booking_id()
            s.add(
                t,
                spring(
                    t,
                    "ERROR",
                    thread,
                    "ctl",
                    f"Routing failed for booking {bk} (datasource payments-db.payments.svc.cluster.local:5432)",
                )
                + "\n"
                + ROUTE_FAILURE,
            )
            continue
        ms = rng.randrange(140, 420) if version == "2.14.0" else rng.randrange(1300, 2600)
        carrier = rng.choice(["KL", "LH", "AF", "IB", "TP"])
        if version == "2.15.0" and ms > 2000:
            s.add(
                t,
                spring(
                    t,
                    "WARN",
                    thread,
                    "svc",
                    f"Slow route computation for booking {booking_id()}: {ms} ms (route cache disabled)",
                ),
            )
        else:
            s.add(
                t,
                spring(
                    t,
                    "INFO",
                    thread,
                    "ctl",
                    f"Routed booking {booking_id()} via carrier {carrier} in {ms} ms",
                ),
            )
    return s


# ---------------------------------------------------------------------------------------------
# ledger_sync (payments): a celery worker with celery's default log formats, Python tracebacks.

LEDGER_POD = "ledger-sync-6f8d9b7c54-hwz4t"


def celery(t: datetime, level: str, process: str, msg: str) -> str:
    return f"[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}: {level}/{process}] {msg}"


def task_id() -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def unique_violation(entry: str) -> str:
    return f"""Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/celery/app/trace.py", line 453, in trace_task
    R = retval = fun(*args, **kwargs)
                 ^^^^^^^^^^^^^^^^^^^^
  File "/app/ledger_sync/tasks.py", line 88, in post_journal_entries
    cur.executemany(INSERT_ENTRY, batch)
  File "/usr/local/lib/python3.12/site-packages/psycopg2/extras.py", line 1270, in execute_batch
    cur.execute(b";".join(sqls))
psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint "journal_entries_pkey"
DETAIL:  Key (entry_id)=({entry}) already exists."""


def ledger_sync() -> Stream:
    s = Stream("worker")
    s.add(
        at("00:00:01"),
        celery(
            at("00:00:01"),
            "INFO",
            "MainProcess",
            "Connected to redis://ledger-redis.payments.svc.cluster.local:6379/0",
        ),
        "stderr",
    )
    s.add(
        at("00:00:01"),
        celery(at("00:00:01"), "INFO", "MainProcess", "celery@ledger-sync-6f8d9b7c54-hwz4t ready."),
        "stderr",
    )
    entry = 4390
    for t in every("00:00:05", "12:00:00", 60):
        tid = task_id()
        worker = f"ForkPoolWorker-{rng.randrange(1, 5)}"
        s.add(
            t,
            celery(t, "INFO", "MainProcess", f"Task ledger_sync.tasks.post_journal_entries[{tid}] received"),
            "stderr",
        )
        done = t + timedelta(seconds=rng.uniform(0.4, 1.6))
        if at("04:02") <= t < at("04:41") and rng.random() < 0.6:
            entry += rng.randrange(1, 40)
            eid = f"JE-2026-1120-{entry:06d}"
            err = f"UniqueViolation('duplicate key value violates unique constraint \"journal_entries_pkey\"\\nDETAIL:  Key (entry_id)=({eid}) already exists.\\n')"
            s.add(
                done,
                celery(
                    done,
                    "ERROR",
                    worker,
                    f"Task ledger_sync.tasks.post_journal_entries[{tid}] raised unexpected: {err}",
                )
                + "\n"
                + unique_violation(eid),
                "stderr",
            )
        else:
            s.add(
                done,
                celery(
                    done,
                    "INFO",
                    worker,
                    f"Task ledger_sync.tasks.post_journal_entries[{tid}] succeeded in {done.timestamp() - t.timestamp():.3f}s: {{'posted': {rng.randrange(120, 480)}}}",
                ),
                "stderr",
            )
    for t in every("00:05:00", "12:00:00", 600):
        tid = task_id()
        s.add(
            t,
            celery(t, "INFO", "MainProcess", f"Task ledger_sync.tasks.reconcile_accounts[{tid}] received"),
            "stderr",
        )
        done = t + timedelta(seconds=rng.uniform(3, 9))
        if t >= at("11:03"):
            err = "OperationalError('connection to server at \"payments-db.payments.svc.cluster.local\" (10.43.12.5), port 5432 failed: FATAL:  sorry, too many clients already\\n')"
            s.add(
                done,
                celery(
                    done,
                    "WARNING",
                    "ForkPoolWorker-2",
                    f"Task ledger_sync.tasks.reconcile_accounts[{tid}] retry: Retry in 60s: {err}",
                ),
                "stderr",
            )
        else:
            s.add(
                done,
                celery(
                    done,
                    "INFO",
                    "ForkPoolWorker-2",
                    f"Task ledger_sync.tasks.reconcile_accounts[{tid}] succeeded in {done.timestamp() - t.timestamp():.3f}s: {{'accounts': 1842, 'mismatched': 0}}",
                ),
                "stderr",
            )
    for t in every("11:03:30", "12:00:00", 60):
        s.add(
            t,
            celery(
                t,
                "INFO",
                "ForkPoolWorker-2",
                "Task ledger_sync.tasks.reconcile_accounts retrying (attempt 2 of 5)",
            ),
            "stderr",
        )
    return s


# ---------------------------------------------------------------------------------------------
# payments-db (payments): PostgreSQL 16 with the default log_line_prefix '%m [%p] '.


def pg(t: datetime, pid: int, msg: str) -> str:
    return f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} UTC [{pid}] {msg}"


def payments_db() -> Stream:
    s = Stream("postgres")
    for t in every("00:00:00", "12:00:00", 300, jitter=0.01):
        s.add(t, pg(t, 31, "LOG:  checkpoint starting: time"), "stderr")
        d = t + timedelta(seconds=269.95)
        buffers = rng.randrange(1500, 2600)
        s.add(
            d,
            pg(
                d,
                31,
                f"LOG:  checkpoint complete: wrote {buffers} buffers ({buffers / 163.84:.1f}%); 0 WAL file(s) added, 0 removed, 1 recycled; write=269.912 s, sync=0.004 s, total=269.950 s; sync files=61, longest=0.002 s, average=0.001 s; distance={rng.randrange(15000, 22000)} kB, estimate=19011 kB",
            ),
            "stderr",
        )
    for t in every("00:30:00", "12:00:00", 1800):
        pid = rng.randrange(70000, 99999)
        s.add(
            t,
            pg(t, pid, 'LOG:  automatic vacuum of table "payments.public.journal_entries": index scans: 1'),
            "stderr",
        )
    entry = 4390
    for t in every("04:02:00", "04:41:00", 70):
        pid = rng.randrange(70000, 79999)
        entry += rng.randrange(1, 40)
        s.add(
            t,
            pg(t, pid, 'ERROR:  duplicate key value violates unique constraint "journal_entries_pkey"'),
            "stderr",
        )
        s.add(t, pg(t, pid, f"DETAIL:  Key (entry_id)=(JE-2026-1120-{entry:06d}) already exists."), "stderr")
        s.add(
            t,
            pg(
                t,
                pid,
                "STATEMENT:  INSERT INTO journal_entries (entry_id, account_id, amount_minor, currency, posted_at) VALUES ($1, $2, $3, $4, $5)",
            ),
            "stderr",
        )
    t = at("10:47:03")
    s.add(t, pg(t, 1, "LOG:  received SIGHUP, reloading configuration files"), "stderr")
    s.add(
        t,
        pg(t, 1, 'LOG:  parameter "max_connections" cannot be changed without restarting the server'),
        "stderr",
    )
    s.add(
        t,
        pg(
            t,
            1,
            'LOG:  configuration file "/var/lib/postgresql/data/pgdata/postgresql.auto.conf" contains errors; unaffected changes were applied',
        ),
        "stderr",
    )
    for t in every("11:02:00", "12:00:00", 20):
        s.add(t, pg(t, rng.randrange(88000, 89999), "FATAL:  sorry, too many clients already"), "stderr")
    for t in every("00:10:00", "12:00:00", 2400):
        s.add(
            t,
            pg(
                t,
                rng.randrange(70000, 99999),
                "LOG:  could not receive data from client: Connection reset by peer",
            ),
            "stderr",
        )
    return s


# ---------------------------------------------------------------------------------------------
# checkout-web (booking): gunicorn access + error log and the app's logging.basicConfig() lines,
# all in one container log.

CHECKOUT_POD = "checkout-web-7c6d5b8f9b-r5tgz"

READ_TIMEOUT = """ERROR:checkout.views:Unhandled exception in POST /api/checkout
Traceback (most recent call last):
  File "/app/checkout/views.py", line 142, in create_checkout
    route = router.reserve(booking)
            ^^^^^^^^^^^^^^^^^^^^^^^
  File "/app/checkout/clients/router.py", line 37, in reserve
    resp = self.session.post(f"{self.base}/v1/routes", json=payload, timeout=10)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/local/lib/python3.11/site-packages/requests/adapters.py", line 713, in send
    raise ReadTimeout(e, request=request)
requests.exceptions.ReadTimeout: HTTPConnectionPool(host='order-router.booking.svc.cluster.local', port=8080): Read timed out. (read timeout=10)"""


def checkout_web() -> Stream:
    s = Stream("web")
    t = at("00:00:00")
    s.add(t, f"[{t:%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Starting gunicorn 22.0.0", "stderr")
    s.add(t, f"[{t:%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Listening at: http://0.0.0.0:8000 (1)", "stderr")
    agents = [
        '"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15"',
        '"okhttp/4.12.0"',
        '"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0"',
    ]
    for t in every("00:00:05", "12:00:00", 60):
        stamp = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        failing = t >= at("11:02") and rng.random() < 0.3
        code = rng.choice([502, 503]) if failing else 200
        path = rng.choice(["POST /api/checkout", "GET /api/cart", "GET /api/checkout/status"])
        if failing:
            path = "POST /api/checkout"
            bk = booking_id()
            if rng.random() < 0.5:
                s.add(t, f"ERROR:checkout.orders:OrderRouter returned 503 for booking {bk}", "stderr")
            else:
                s.add(t, READ_TIMEOUT, "stderr")
        s.add(
            t,
            f'10.42.{rng.randrange(0, 3)}.{rng.randrange(2, 250)} - - [{stamp}] "{path} HTTP/1.1" {code} {rng.randrange(80, 4000)} "-" {rng.choice(agents)}',
        )
    for hhmmss, pid, new in (("11:20:31", 17, 23), ("11:33:02", 23, 29), ("11:47:40", 19, 31)):
        t = at(hhmmss)
        for line in (
            f"[CRITICAL] WORKER TIMEOUT (pid:{pid})",
            f"[ERROR] Worker (pid:{pid}) was sent SIGKILL! Perhaps out of memory?",
            f"[INFO] Booting worker with pid: {new}",
        ):
            s.add(
                t, f"[{t:%Y-%m-%d %H:%M:%S} +0000] [{1 if 'Booting' not in line else new}] {line}", "stderr"
            )
            t += timedelta(milliseconds=380)
    for t in every("11:05:00", "12:00:00", 420):
        s.add(
            t,
            "WARNING:urllib3.connectionpool:Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPConnectionPool(host='order-router.booking.svc.cluster.local', port=8080): Read timed out. (read timeout=10)\")': /v1/routes",
            "stderr",
        )
    return s


# ---------------------------------------------------------------------------------------------
# fare-search (pricing): uWSGI's request log and the app's '%(asctime)s - %(name)s - %(levelname)s'.

FARES_POD = "fare-search-84c9d7f6b5-j6vnd"


def py_asctime(t: datetime, name: str, level: str, msg: str) -> str:
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} - {name} - {level} - {msg}"


def hit_ratio(t: datetime) -> float:
    if t < at("10:18"):
        return 0.94
    return round(ramp(t, "10:18", "11:55", 0.94, 0.38), 2)


def fare_search() -> Stream:
    s = Stream("app")
    t = at("00:00:00")
    s.add(t, "*** Starting uWSGI 2.0.26 (64bit) on [Fri Nov 20 00:00:00 2026] ***", "stderr")
    s.add(t, "uwsgi socket 0 bound to TCP address 0.0.0.0:8000 fd 3", "stderr")
    req = 1200
    for t in every("00:00:03", "12:00:00", 30):
        req += 1
        ms = int(ramp(t, "10:18", "11:55", 170, 4200) * rng.uniform(0.85, 1.15))
        fr, to = rng.choice([("AMS", "LIS"), ("FRA", "JFK"), ("CDG", "BCN"), ("MAD", "FCO")])
        stamp = t.strftime("%a %b %d %H:%M:%S %Y")
        s.add(
            t,
            f"[pid: {rng.choice([14, 15, 16, 17])}|app: 0|req: {req // 4}/{req}] 10.42.1.{rng.randrange(20, 40)} () {{42 vars in 801 bytes}} [{stamp}] GET /v1/fares?from={fr}&to={to}&date=2026-12-18 => generated {rng.randrange(9000, 26000)} bytes in {ms} msecs (HTTP/1.1 200) 4 headers in 139 bytes (1 switches on core 0)",
            "stderr",
        )
    for t in every("00:00:00", "12:00:00", 300, jitter=0.001):
        r = hit_ratio(t)
        total = rng.randrange(9000, 11000)
        hits = int(total * r)
        s.add(
            t,
            py_asctime(
                t, "fares.cache", "INFO", f"cache stats: hits={hits} misses={total - hits} hit_ratio={r:.2f}"
            ),
            "stderr",
        )
    t = at("10:18:00")
    s.add(
        t,
        py_asctime(
            t,
            "fares.config",
            "INFO",
            "Configuration reloaded from /etc/fare-search/config.yaml (cache.ttl_seconds: 3600 -> 60)",
        ),
        "stderr",
    )
    for t in every("10:40:00", "12:00:00", 240):
        ms = int(ramp(t, "10:40", "11:55", 1900, 4300))
        s.add(
            t,
            py_asctime(t, "fares.gds", "WARNING", f"GDS provider amadeus slow: {ms} ms for AMS-LIS"),
            "stderr",
        )
    for hhmmss in ("11:44:12", "11:51:37"):
        t = at(hhmmss)
        s.add(t, '*** uWSGI listen queue of socket "0.0.0.0:8000" (fd: 3) full !!! (101/100) ***', "stderr")
    return s


# ---------------------------------------------------------------------------------------------
# notify-dispatcher (notify): a Node.js pod, pino JSON (numeric levels) in `dispatcher`, whose sms
# module logs as service sms-bridge, and bunyan JSON in the `mailer` sidecar.

NOTIFY_POD = "notify-dispatcher-5b7c8d9f6d-l4wbn"


def ms_epoch(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def pino(t: datetime, level: int, service: str, msg: str, **extra: object) -> str:
    record = {
        "level": level,
        "time": ms_epoch(t),
        "pid": 1,
        "hostname": NOTIFY_POD,
        "service": service,
        **extra,
        "msg": msg,
    }
    return json.dumps(record, separators=(",", ":"))


def dispatcher() -> tuple[Stream, Stream]:
    first, second = Stream("dispatcher"), Stream("dispatcher")
    for t in every("00:00:30", "12:00:00", 60):
        target = first if t < at("08:03:11") else second
        target.add(
            t, pino(t, 30, "notify-dispatcher", f"dispatched {rng.randrange(40, 260)} push notifications")
        )
    t = at("08:03:11")
    err = {
        "type": "Error",
        "message": "read ECONNRESET",
        "stack": "Error: read ECONNRESET\n    at TCP.onStreamRead (node:internal/stream_base_commons:217:20)",
        "code": "ECONNRESET",
        "errno": -104,
        "syscall": "read",
    }
    first.add(t, pino(t, 60, "notify-dispatcher", "unhandled rejection, exiting", err=err))
    t = at("08:03:14")
    second.add(t, pino(t, 30, "notify-dispatcher", "notify-dispatcher 4.8.1 listening on :3000"))
    for t in every("10:41:00", "11:38:00", 90):
        err = {
            "type": "ProviderError",
            "message": "429 Too Many Requests: rate limit exceeded for sender KESTREL",
            "stack": "ProviderError: 429 Too Many Requests: rate limit exceeded for sender KESTREL\n    at SmsClient.send (/app/src/sms/client.js:88:13)\n    at async Dispatcher.flush (/app/src/dispatch.js:141:7)",
            "statusCode": 429,
        }
        second.add(
            t,
            pino(
                t,
                50,
                "sms-bridge",
                "SMS batch rejected by provider",
                provider="twilio",
                batch=rng.randrange(100, 999),
                err=err,
            ),
        )
    for t in every("10:30:00", "12:00:00", 300):
        second.add(
            t,
            pino(
                t,
                40,
                "sms-bridge",
                "provider queue depth high",
                provider="twilio",
                depth=rng.randrange(800, 2400),
            ),
        )
    return first, second


def mailer() -> Stream:
    s = Stream("mailer")

    def bunyan(t: datetime, level: int, msg: str, **extra: object) -> str:
        ts = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
        return json.dumps(
            {
                "name": "mailer",
                "hostname": NOTIFY_POD,
                "pid": 1,
                "level": level,
                **extra,
                "msg": msg,
                "time": ts,
                "v": 0,
            },
            separators=(",", ":"),
        )

    for t in every("00:01:00", "12:00:00", 120):
        s.add(t, bunyan(t, 30, f"sent {rng.randrange(5, 60)} messages"))
    for t in every("11:00:00", "11:12:00", 50):
        s.add(
            t,
            bunyan(
                t,
                50,
                "SMTP delivery deferred: 421 4.7.0 Try again later, closing connection",
                to_domain=rng.choice(["gmail.com", "outlook.com", "yahoo.com"]),
            ),
        )
    return s


# ---------------------------------------------------------------------------------------------
# loyalty.points (loyalty): Go with zap's production JSON encoder, an `error` field.

LOYALTY_POD = "loyalty-points-7f9c6b5d8b-zq4xk"


def zap(t: datetime, level: str, caller: str, msg: str, **fields: object) -> str:
    record = {
        "level": level,
        "ts": round(t.timestamp(), 4),
        "caller": caller,
        "msg": msg,
        "service": "loyalty.points",
        **fields,
    }
    return json.dumps(record, separators=(",", ":"))


def heap_mb(t: datetime) -> int:
    return int(ramp(t, "00:00", "11:50", 212, 1487))


def loyalty() -> Stream:
    s = Stream("points")
    t = at("00:00:00")
    s.add(
        t, zap(t, "info", "cmd/points/main.go:54", "starting", version="1.31.2", grpc_addr=":9090"), "stderr"
    )
    for t in every("00:00:00", "12:00:00", 600, jitter=0.001):
        goroutines = int(ramp(t, "00:00", "11:50", 1840, 15230))
        s.add(
            t,
            zap(
                t,
                "info",
                "runtime/stats.go:41",
                "runtime stats",
                heap_inuse_mb=heap_mb(t),
                goroutines=goroutines,
            ),
            "stderr",
        )
    for t in every("00:00:20", "12:00:00", 120):
        s.add(
            t,
            zap(t, "info", "sync/points.go:61", "points batch synced", members=rng.randrange(200, 900)),
            "stderr",
        )
    for t in every("09:15:00", "12:00:00", 120):
        member = f"M-{rng.randrange(10000, 99999)}"
        error = 'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.43.8.21:9090: connect: connection refused"'
        s.add(
            t,
            zap(
                t,
                "error",
                "sync/points.go:88",
                "points sync failed",
                member_id=member,
                partner="skymiles",
                error=error,
            ),
            "stderr",
        )
    return s


# ---------------------------------------------------------------------------------------------
# hotel-inventory (hotels): Rails' default logger; only its /var/log/containers file was collected.

INVENTORY_POD = "hotel-inventory-6d8f7b9c5f-p2mzs"


def rails(t: datetime, level: str, req: str, msg: str) -> str:
    stamp = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}"
    return f"{level[0]}, [{stamp} #1] {level:>5} -- : [{req}] {msg}"


def hotel_inventory() -> Stream:
    s = Stream("rails")
    for t in every("00:00:07", "12:00:00", 90):
        req = (
            "".join(rng.choice("0123456789abcdef") for _ in range(8))
            + "-"
            + "".join(rng.choice("0123456789abcdef") for _ in range(4))
            + "-4c55-9a0e-"
            + "".join(rng.choice("0123456789abcdef") for _ in range(12))
        )
        hotel = f"H-{rng.randrange(1000, 9999)}"
        s.add(
            t,
            rails(
                t,
                "INFO",
                req,
                f'Started GET "/api/v2/availability?hotel_id={hotel}&checkin=2026-12-18" for 10.42.1.{rng.randrange(20, 40)} at {t:%Y-%m-%d %H:%M:%S} +0000',
            ),
        )
        s.add(t, rails(t, "INFO", req, "Processing by AvailabilityController#show as JSON"))
        done = t + timedelta(milliseconds=40)
        if at("07:18") <= t < at("07:52") and rng.random() < 0.6:
            done = t + timedelta(milliseconds=5012)
            s.add(
                done,
                rails(
                    done,
                    "INFO",
                    req,
                    "Completed 500 Internal Server Error in 5012ms (ActiveRecord: 0.0ms | Allocations: 2210)",
                ),
            )
            s.add(done, rails(done, "FATAL", req, "  "))
            s.add(
                done,
                rails(
                    done,
                    "FATAL",
                    req,
                    "ActiveRecord::ConnectionTimeoutError (could not obtain a connection from the pool within 5.000 seconds (waited 5.001 seconds); all pooled connections were in use):",
                ),
            )
            s.add(done, rails(done, "FATAL", req, "  "))
            s.add(done, rails(done, "FATAL", req, "app/models/room_rate.rb:44:in `for_stay'"))
            s.add(done, rails(done, "FATAL", req, "app/controllers/availability_controller.rb:12:in `show'"))
        else:
            s.add(
                done,
                rails(
                    done,
                    "INFO",
                    req,
                    f"Completed 200 OK in {rng.randrange(18, 80)}ms (Views: 1.2ms | ActiveRecord: {rng.uniform(3, 20):.1f}ms | Allocations: 1904)",
                ),
            )
    return s


# ---------------------------------------------------------------------------------------------
# Series (VictoriaMetrics /api/v1/import JSON lines) and alerts (Alertmanager API v2).

SERIES_START, STEP = at("03:00"), 120
TIMES = [
    SERIES_START + timedelta(seconds=STEP * i)
    for i in range(int((NOW - SERIES_START).total_seconds()) // STEP + 1)
]


def series(
    labels: dict[str, str], value: Callable[[datetime], float], times: list[datetime] | None = None
) -> Series:
    ts = times or TIMES
    return {
        "metric": labels,
        "values": [round(value(t), 4) for t in ts],
        "timestamps": [int(t.timestamp() * 1000) for t in ts],
    }


def counter(
    labels: dict[str, str],
    rate: Callable[[datetime], float],
    start: float = 0.0,
    times: list[datetime] | None = None,
) -> Series:
    ts = times or TIMES
    total, values = start, []
    for t in ts:
        total += rate(t) * STEP
        values.append(round(total))
    return {"metric": labels, "values": values, "timestamps": [int(t.timestamp() * 1000) for t in ts]}


def scaled(rate: Rate, k: float, offset: float = 0.0) -> Rate:
    """k * (offset + rate(t)): one series' rate from another's."""
    return lambda t: k * (offset + rate(t))


def const(value: float) -> Rate:
    return lambda t: value


BUCKETS = ("0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf")


def histogram(
    name: str,
    labels: dict[str, str],
    rps: float,
    share_below: Callable[[datetime, float], float],
    times: list[datetime],
) -> list[Series]:
    """Cumulative buckets whose share under each bound follows `share_below(t, le)`."""
    out: list[Series] = []
    for le in BUCKETS:
        total, values = 0.0, []
        for t in times:
            total += rps * STEP * (1.0 if le == "+Inf" else share_below(t, float(le)))
            values.append(round(total))
        out.append(
            {
                "metric": {"__name__": f"{name}_bucket", **labels, "le": le},
                "values": values,
                "timestamps": [int(t.timestamp() * 1000) for t in times],
            }
        )
    count = out[-1]["values"]
    out.append(
        {
            "metric": {"__name__": f"{name}_count", **labels},
            "values": count,
            "timestamps": out[-1]["timestamps"],
        }
    )
    return out


def latency_share(median_s: Callable[[datetime], float]) -> Callable[[datetime, float], float]:
    """Share of requests faster than `le` for a log-normal-ish latency around `median_s(t)`."""
    import math

    def share(t: datetime, le: float) -> float:
        z = math.log(le / median_s(t)) / 0.45
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    return share


def all_series() -> list[Series]:
    out: list[Series] = []
    gw = {"job": "gateway", "namespace": "edge", "pod": GATEWAY_POD}
    for upstream, base in (("fare-search", 6.0), ("order-router", 1.6), ("hotel-inventory", 0.9)):

        def bad(t: datetime, upstream: str = upstream) -> float:
            if upstream == "fare-search":
                return ramp(t, "10:55", "11:55", 0.002, 0.079)
            if upstream == "order-router":
                return 0.0 if t < at("11:02") else 0.28
            return 0.0005

        out.append(
            counter(
                {"__name__": "gateway_upstream_responses_total", **gw, "upstream": upstream, "code": "200"},
                scaled(bad, -base, -1.0),
                1.2e6,
            )
        )
        code = "503" if upstream == "order-router" else "504"
        out.append(
            counter(
                {"__name__": "gateway_upstream_responses_total", **gw, "upstream": upstream, "code": code},
                scaled(bad, base * 0.6),
                310,
            )
        )
        out.append(
            counter(
                {"__name__": "gateway_upstream_responses_total", **gw, "upstream": upstream, "code": "502"},
                scaled(bad, base * 0.4),
                95,
            )
        )
    # OrderRouter: its own latency histogram by version (2.15.0 since 09:40), micrometer counters.
    router = {"service": "OrderRouter", "namespace": "booking"}
    old = [t for t in TIMES]
    new = [t for t in TIMES if t >= at("09:40")]
    out += histogram(
        "order_router_route_duration_seconds",
        {**router, "version": "2.14.0"},
        1.1,
        latency_share(lambda t: 0.24),
        old,
    )
    out += histogram(
        "order_router_route_duration_seconds",
        {**router, "version": "2.15.0"},
        0.9,
        latency_share(lambda t: 1.45),
        new,
    )
    for pod in (ROUTER_OLD, ROUTER_NEW):
        for status, share in (
            ("200", lambda t: 0.72 if t >= at("11:02") else 0.999),
            ("500", lambda t: 0.28 if t >= at("11:02") else 0.001),
        ):
            out.append(
                counter(
                    {
                        "__name__": "http_server_requests_seconds_count",
                        "application": "OrderRouter",
                        "job": "order-router",
                        "namespace": "booking",
                        "pod": pod,
                        "uri": "/v1/routes",
                        "method": "POST",
                        "status": status,
                    },
                    share,
                    times=old if pod == ROUTER_OLD else new,
                )
            )
    # ledger_sync: celery-exporter counters.
    celery_labels = {"job": "ledger_sync", "namespace": "payments"}
    out.append(
        counter(
            {
                "__name__": "celery_task_failed_total",
                **celery_labels,
                "name": "ledger_sync.tasks.post_journal_entries",
            },
            lambda t: 0.018 if at("04:02") <= t < at("04:41") else 0.0,
            3,
        )
    )
    out.append(
        counter(
            {
                "__name__": "celery_task_succeeded_total",
                **celery_labels,
                "name": "ledger_sync.tasks.post_journal_entries",
            },
            lambda t: 0.015 if at("04:02") <= t < at("04:41") else 0.033,
            9800,
        )
    )
    out.append(
        counter(
            {
                "__name__": "celery_task_retried_total",
                **celery_labels,
                "name": "ledger_sync.tasks.reconcile_accounts",
            },
            lambda t: 1 / 60 if t >= at("11:03") else 0.0,
            0,
        )
    )
    # payments-db: postgres_exporter.
    pgl = {"job": "payments-db", "service": "payments-db", "namespace": "payments", "datname": "payments"}
    out.append(
        series(
            {"__name__": "pg_stat_activity_count", **pgl, "state": "active"},
            lambda t: 198 if t >= at("11:02") else int(ramp(t, "10:30", "11:02", 64, 190)),
        )
    )
    out.append(
        series(
            {
                "__name__": "pg_settings_max_connections",
                "job": "payments-db",
                "service": "payments-db",
                "namespace": "payments",
            },
            lambda t: 200,
        )
    )
    # fare-search: team-prefixed job label; a cache hit ratio gauge and an HTTP latency histogram.
    fares = {"job": "pricing/fare-search", "namespace": "pricing"}
    out.append(series({"__name__": "fare_cache_hit_ratio", **fares, "cache": "fares"}, hit_ratio))
    out += histogram(
        "http_request_duration_seconds",
        fares,
        4.0,
        latency_share(lambda t: ramp(t, "10:18", "11:55", 0.17, 2.0)),
        TIMES,
    )
    out.append(counter({"__name__": "http_requests_total", **fares, "code": "200"}, lambda t: 4.0))
    # notify-dispatcher.
    out.append(
        counter(
            {
                "__name__": "notify_sms_rejected_total",
                "service": "notify-dispatcher",
                "namespace": "notify",
                "provider": "twilio",
                "reason": "rate_limited",
            },
            lambda t: 0.011 if at("10:41") <= t < at("11:38") else 0.0,
            12,
        )
    )
    # loyalty.points: memory grows (process and container), goroutines leak.
    loy = {"service": "loyalty.points", "namespace": "loyalty", "pod": LOYALTY_POD}
    out.append(
        series({"__name__": "process_resident_memory_bytes", **loy}, lambda t: (heap_mb(t) + 48) * 2**20)
    )
    out.append(
        series({"__name__": "go_goroutines", **loy}, lambda t: int(ramp(t, "00:00", "11:50", 1840, 15230)))
    )
    out.append(
        series(
            {
                "__name__": "container_memory_working_set_bytes",
                "namespace": "loyalty",
                "pod": LOYALTY_POD,
                "container": "points",
            },
            lambda t: (heap_mb(t) + 400) * 2**20,
        )
    )
    out.append(
        series(
            {
                "__name__": "kube_pod_container_resource_limits",
                "namespace": "loyalty",
                "pod": LOYALTY_POD,
                "container": "points",
                "resource": "memory",
                "unit": "byte",
            },
            lambda t: 2 * 2**30,
        )
    )
    # RiskScorer: no logs anywhere, only these.
    risk = {"service": "RiskScorer", "namespace": "payments"}
    out.append(
        series(
            {"__name__": "risk_model_age_seconds", **risk, "model": "fraud-v7"},
            lambda t: 95040 - (NOW - t).total_seconds(),
        )
    )
    for decision, r in (("approve", 3.1), ("review", 0.4), ("decline", 0.08)):
        out.append(
            counter({"__name__": "risk_scorer_decisions_total", **risk, "decision": decision}, const(r))
        )
    # checkout-web: the catalog's http_requests_total.
    for code, share in (
        ("200", lambda t: 0.7 if t >= at("11:02") else 0.999),
        ("502", lambda t: 0.15 if t >= at("11:02") else 0.0005),
        ("503", lambda t: 0.15 if t >= at("11:02") else 0.0005),
    ):
        out.append(
            counter(
                {
                    "__name__": "http_requests_total",
                    "service": "checkout-web",
                    "namespace": "booking",
                    "code": code,
                },
                scaled(share, 2.5),
            )
        )
    return out


def alert_series() -> list[Series]:
    """ALERTS and ALERTS_FOR_STATE as vmalert writes them, one sample a minute while active, for
    every alert of live/alerts.json (the firing ones too: Alertmanager serves those as well)."""
    out: list[Series] = []
    for a in json.loads((HERE / "live/alerts.json").read_text())["alerts"]:
        labels = dict(a["labels"])
        start = at(str(a["starts"])) - timedelta(minutes=2)  # pending for 2m before firing
        end = at(str(a["ends"])) if a["ends"] else NOW
        pending = [start + timedelta(minutes=i) for i in range(2)]
        firing = []
        t = at(str(a["starts"]))
        while t <= end - (timedelta(minutes=1) if a["ends"] else timedelta(0)):
            firing.append(t)
            t += timedelta(minutes=1)
        out.append(series({"__name__": "ALERTS", **labels, "alertstate": "pending"}, lambda t: 1, pending))
        out.append(series({"__name__": "ALERTS", **labels, "alertstate": "firing"}, lambda t: 1, firing))
        out.append(
            series({"__name__": "ALERTS_FOR_STATE", **labels}, const(start.timestamp()), pending + firing)
        )
    return out


def write_live() -> None:
    with (HERE / "live/series.jsonl").open("w") as out:
        for s in all_series() + alert_series():
            out.write(json.dumps(s, separators=(",", ":")) + "\n")


def write_logs() -> None:
    shutil.rmtree(HERE / "logs", ignore_errors=True)
    a, b, c = "ip-10-42-1-17", "ip-10-42-2-9", "ip-10-42-3-4"

    gw = pod_dir(a, "edge", GATEWAY_POD, "3f6c1e9a-5b2d-4c7e-9a10-2b8e4d6f1c35")
    gateway().write(gw / "gateway", rotations=("06:00:00",))
    container_link(a, GATEWAY_POD, "edge", "gateway", gw / "gateway/0.log")

    old = pod_dir(a, "booking", ROUTER_OLD, "a1d4f7c2-8e3b-4f90-b6a5-7c2d9e1f4a86")
    order_router(ROUTER_OLD, "00:00:00", "2.14.0").write(
        old / "order-router", rotations=("04:30:00", "08:30:00")
    )
    container_link(a, ROUTER_OLD, "booking", "order-router", old / "order-router/0.log")
    new = pod_dir(b, "booking", ROUTER_NEW, "c9b2e5a8-1f4d-4b7c-8e26-5a9d3c7f1b04")
    order_router(ROUTER_NEW, "09:40:00", "2.15.0").write(new / "order-router")
    container_link(b, ROUTER_NEW, "booking", "order-router", new / "order-router/0.log")
    # The OutOfMemoryError of 06:12 went to the old pod's log, rotated at 08:30.
    oom = Stream("order-router")
    t = at("06:12:44")
    oom.add(
        t,
        spring(t, "ERROR", "ting-scheduler-1", "sched", "Unexpected error occurred in scheduled task")
        + "\n"
        + OOM,
    )
    _merge_into(old / "order-router", oom)

    led = pod_dir(b, "payments", LEDGER_POD, "e7a3c9d1-2b6f-4e84-a5c3-9d1f7b2e6a40")
    ledger_sync().write(led / "worker", rotations=("06:00:00",))

    db = pod_dir(b, "payments", "payments-db-0", "5d2a8f6c-9e1b-4a73-b8d4-1c6e3f9a2b57")
    payments_db().write(db / "postgres")
    container_link(b, "payments-db-0", "payments", "postgres", db / "postgres/0.log")

    co = pod_dir(a, "booking", CHECKOUT_POD, "8b4e1d7a-3c9f-4d62-a7e5-6f2b9c4d8e13")
    checkout_web().write(co / "web")
    container_link(a, CHECKOUT_POD, "booking", "web", co / "web/0.log")

    fs = pod_dir(c, "pricing", FARES_POD, "2c7f4a9e-6d1b-4e38-9b5a-8e3d1f6c2a79")
    fare_search().write(fs / "app", rotations=("08:00:00",))

    nd = pod_dir(c, "notify", NOTIFY_POD, "9e5b2d8f-4a7c-4c19-b3e6-1d8a5f2c7b94")
    first, second = dispatcher()
    first.write(nd / "dispatcher", base="0.log")
    second.write(nd / "dispatcher", base="1.log")
    mailer().write(nd / "mailer")
    container_link(c, NOTIFY_POD, "notify", "dispatcher", nd / "dispatcher/1.log")
    container_link(c, NOTIFY_POD, "notify", "mailer", nd / "mailer/0.log")

    lp = pod_dir(c, "loyalty", LOYALTY_POD, "6a1f8c3e-7b2d-4f95-a4c8-3e9b6d1a5f27")
    loyalty().write(lp / "points")

    # hotel-inventory: the collector copied the /var/log/containers file itself, not the pod dir.
    links = HERE / "logs" / c / "var/log/containers"
    links.mkdir(parents=True, exist_ok=True)
    cid = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    records = hotel_inventory().cri()
    (links / f"{INVENTORY_POD}_hotels_rails-{cid}.log").write_text(
        "".join(line + "\n" for _, line in records)
    )


def _merge_into(directory: Path, extra: Stream) -> None:
    """Put `extra`'s lines into the rotated file whose time span holds them, in time order."""
    lines = [line for _, line in extra.cri()]
    first = lines[0][:30]
    for path in sorted(directory.iterdir()):
        content = path.read_text().splitlines()
        if content and content[0][:30] <= first <= content[-1][:30]:
            merged = sorted(content + lines, key=lambda line: line[:30])
            path.write_text("".join(line + "\n" for line in merged))
            return
    raise AssertionError(f"no file of {directory} spans {first}")


if __name__ == "__main__":
    write_logs()
    write_live()
