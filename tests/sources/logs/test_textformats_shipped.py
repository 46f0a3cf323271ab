"""Every shipped text format on lines written the way each product writes them, and detection of
each from a small sample of such lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

import pytest

from evigate.server.sources.logs.textformats import detect_text_format, shipped_format, shipped_formats
from evigate.server.sources.logs.timestamps import Clock


@dataclass(frozen=True)
class Case:
    format: str
    lines: tuple[str, str]  # two lines of one file; the first one is checked field by field
    timestamp: datetime | None
    level: str | None
    message: str
    logger: str | None = None
    thread: str | None = None
    pid: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


def utc(ymd: tuple[int, int, int], h: int, m: int, s: int, us: int = 0) -> datetime:
    return datetime(*ymd, h, m, s, us, tzinfo=UTC)


PLUS_ONE = timezone(timedelta(hours=1))
CASES = [
    Case(
        "logback",
        (
            "14:03:22.917 [http-nio-8080-exec-3] WARN  c.e.orders.OrderController - Payment "
            "retry 2/3 for order 88412",
            "14:03:23.002 [http-nio-8080-exec-4] INFO  c.e.orders.OrderController - Order 88413 accepted",
        ),
        None,
        "WARN",
        "Payment retry 2/3 for order 88412",
        logger="c.e.orders.OrderController",
        thread="http-nio-8080-exec-3",
    ),
    Case(
        "logback_dated",
        (
            "2026-03-04 14:03:22.917 [HikariPool-1 housekeeper] ERROR com.zaxxer.hikari.pool.HikariPool - "
            "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
            "2026-03-04 14:03:25.100 [main] INFO  com.example.shop.Application - Started in 4.2 seconds",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
        logger="com.zaxxer.hikari.pool.HikariPool",
        thread="HikariPool-1 housekeeper",
    ),
    Case(
        "log4j_bracketed",
        (
            "2026-03-04 14:03:22,917 [ERROR] [pool-2-thread-1] com.acme.billing.InvoiceJob - "
            "invoice batch 77 failed",
            "2026-03-04 14:03:23,100 [INFO ] [pool-2-thread-2] com.acme.billing.InvoiceJob - "
            "invoice batch 78 sent",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "invoice batch 77 failed",
        logger="com.acme.billing.InvoiceJob",
        thread="pool-2-thread-1",
    ),
    Case(
        "spring_boot",
        (
            "2026-03-04T14:03:22.917+01:00  INFO 48213 --- [inventory] [           main] "
            "o.s.b.w.embedded.tomcat.TomcatWebServer  : Tomcat started on port 8080 (http) "
            "with context path '/'",
            "2026-03-04T14:03:23.010+01:00  WARN 48213 --- [inventory] [nio-8080-exec-1] "
            "o.h.engine.jdbc.spi.SqlExceptionHelper   : SQL Error: 0, SQLState: 08003",
        ),
        datetime(2026, 3, 4, 14, 3, 22, 917000, tzinfo=PLUS_ONE),
        "INFO",
        "Tomcat started on port 8080 (http) with context path '/'",
        logger="o.s.b.w.embedded.tomcat.TomcatWebServer",
        thread="main",
        pid="48213",
        fields={"application": "inventory"},
    ),
    Case(
        "log4j_thread",
        (
            "2026-03-04 14:03:22,917 WARN [ReplicaFetcherThread-0-2] kafka.server.ReplicaFetcherThread: "
            "[ReplicaFetcher replicaId=1, leaderId=2] Error sending fetch request",
            "2026-03-04 14:03:23,001 INFO [main] kafka.server.KafkaServer: started "
            "(kafka.server.KafkaServer)",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "WARN",
        "[ReplicaFetcher replicaId=1, leaderId=2] Error sending fetch request",
        logger="kafka.server.ReplicaFetcherThread",
        thread="ReplicaFetcherThread-0-2",
    ),
    Case(
        "log4j",
        (
            "2026-03-04 14:03:22,917 INFO org.apache.hadoop.hbase.regionserver.HRegion: "
            "Flushing 1/1 column families, dataSize=12.3 MB",
            "2026-03-04 14:03:24,005 WARNING org.apache.hadoop.hbase.ipc.RpcServer: slow call took 2100 ms",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "INFO",
        "Flushing 1/1 column families, dataSize=12.3 MB",
        logger="org.apache.hadoop.hbase.regionserver.HRegion",
    ),
    Case(
        "log4j_short_date",
        (
            "26/03/04 14:03:22 INFO storage.BlockManager: Found block rdd_12_3 locally",
            "26/03/04 14:03:23 ERROR executor.Executor: Exception in task 3.0 in stage 7.0 (TID 91)",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "INFO",
        "Found block rdd_12_3 locally",
        logger="storage.BlockManager",
    ),
    Case(
        "log4j_compact_date",
        (
            "260304 140322 311 WARN dfs.DataNode: Slow BlockReceiver write packet to mirror took 412ms",
            "260304 140323 12 INFO dfs.FSNamesystem: BLOCK* allocateBlock: /user/etl/part-00007",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "WARN",
        "Slow BlockReceiver write packet to mirror took 412ms",
        logger="dfs.DataNode",
        thread="311",
    ),
    Case(
        "log4j_dashed",
        (
            "2026-03-04 14:03:22,917 - ERROR [CommitProcessor:3:NIOServerCnxn@1044] - "
            "Unexpected exception causing shutdown",
            "2026-03-04 14:03:23,120 - INFO  [main:QuorumPeerMain@127] - Starting quorum peer",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "Unexpected exception causing shutdown",
        logger="NIOServerCnxn",
        thread="CommitProcessor:3",
        fields={"line": "1044"},
    ),
    Case(
        "oslo_log",
        (
            "2026-03-04 14:03:22.917 2931 ERROR nova.compute.manager "
            "[req-5b1e0f77-7b8e-4a53-9d6e-6c3b0b2a2d1e "
            "admin demo - default default] [instance: 0b5f4a6e-2c1d-4e8f-9a7b-3c2d1e0f4a5b] "
            "Instance failed to spawn",
            "2026-03-04 14:03:23.001 2931 INFO nova.compute.resource_tracker [-] Final "
            "resource view: name=cn-04",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "[instance: 0b5f4a6e-2c1d-4e8f-9a7b-3c2d1e0f4a5b] Instance failed to spawn",
        logger="nova.compute.manager",
        pid="2931",
        fields={"context": "req-5b1e0f77-7b8e-4a53-9d6e-6c3b0b2a2d1e admin demo - default default"},
    ),
    Case(
        "python_basic",
        (
            "WARNING:urllib3.connectionpool:Retrying (Retry(total=2)) after connection broken",
            "ERROR:root:payment provider returned 503",
        ),
        None,
        "WARN",
        "Retrying (Retry(total=2)) after connection broken",
        logger="urllib3.connectionpool",
    ),
    Case(
        "python_asctime",
        (
            "2026-03-04 14:03:22,917 - payments.worker - ERROR - charge 5521 declined by gateway",
            "2026-03-04 14:03:23,410 - payments.worker - INFO - charge 5522 captured",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "charge 5521 declined by gateway",
        logger="payments.worker",
    ),
    Case(
        "python_bracketed",
        (
            "[2026-03-04 14:03:22 +0000] [4123] [INFO] Booting worker with pid: 4123",
            "[2026-03-04 14:03:25 +0000] [4100] [CRITICAL] WORKER TIMEOUT (pid:4123)",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "INFO",
        "Booting worker with pid: 4123",
        pid="4123",
    ),
    Case(
        "nginx_access",
        (
            '203.0.113.7 - - [04/Mar/2026:14:03:22 +0100] "GET /api/orders/8841 HTTP/1.1" 502 157 "-" '
            '"Mozilla/5.0 (X11; Linux x86_64)"',
            '198.51.100.4 - alice [04/Mar/2026:14:03:23 +0100] "POST /api/cart HTTP/2.0" 201 48 '
            '"https://shop.example/" "curl/8.5.0"',
        ),
        datetime(2026, 3, 4, 14, 3, 22, tzinfo=PLUS_ONE),
        "ERROR",  # no level word: a 5xx status is an error line
        '"GET /api/orders/8841 HTTP/1.1" 502 157 "-" "Mozilla/5.0 (X11; Linux x86_64)"',
        fields={
            "client": "203.0.113.7",
            "user": "-",
            "request": "GET /api/orders/8841 HTTP/1.1",
            "status": "502",
            "bytes": "157",
            "referer": "-",
            "user_agent": "Mozilla/5.0 (X11; Linux x86_64)",
        },
    ),
    Case(
        "envoy_access",
        (
            '[2026-03-04T14:03:22.310Z] "GET /api/v1/fares HTTP/1.1" 503 UF 0 91 10001 - "10.0.35.28" '
            '"curl/8.5" "0d7f6a2c-1b8e-4f55-9a3a-2f7c0b1d9e44" "fares" "10.0.4.7:8000"',
            '[2026-03-04T14:03:23.104Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" '
            '"nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"',
        ),
        utc((2026, 3, 4), 14, 3, 22, 310000),
        "ERROR",
        '"GET /api/v1/fares HTTP/1.1" 503 UF 0 91 10001 - "10.0.35.28" "curl/8.5" '
        '"0d7f6a2c-1b8e-4f55-9a3a-2f7c0b1d9e44" "fares" "10.0.4.7:8000"',
        fields={
            "request": "GET /api/v1/fares HTTP/1.1",
            "status": "503",
            "flags": "UF",
            "bytes_received": "0",
            "bytes_sent": "91",
            "duration": "10001",
            "upstream_time": "-",
            "forwarded_for": "10.0.35.28",
            "user_agent": "curl/8.5",
            "request_id": "0d7f6a2c-1b8e-4f55-9a3a-2f7c0b1d9e44",
            "authority": "fares",
            "upstream_host": "10.0.4.7:8000",
        },
    ),
    Case(
        "nginx_error",
        (
            "2026/03/04 14:03:22 [error] 1187#1187: *4521 upstream timed out (110: Connection timed out) "
            "while reading response header from upstream, client: 203.0.113.7",
            "2026/03/04 14:03:30 [warn] 1187#1187: *4533 an upstream response is buffered to "
            "a temporary file",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "ERROR",
        "upstream timed out (110: Connection timed out) while reading response header from upstream, "
        "client: 203.0.113.7",
        pid="1187",
        thread="1187",
        fields={"connection": "4521"},
    ),
    Case(
        "apache_error",
        (
            "[Wed Mar 04 14:03:22.917311 2026] [proxy_http:error] [pid 2210:tid 140221] "
            "[client 203.0.113.9:51122] AH01114: HTTP: failed to make connection to backend: 10.0.3.14",
            "[Wed Mar 04 14:03:23 2026] [notice] Apache/2.2.22 (Unix) configured -- resuming "
            "normal operations",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917311),
        "ERROR",
        "AH01114: HTTP: failed to make connection to backend: 10.0.3.14",
        logger="proxy_http",
        thread="140221",
        pid="2210",
        fields={"client": "203.0.113.9:51122"},
    ),
    Case(
        "syslog_rfc3164",
        (
            "Mar  4 14:03:22 web-03 sshd[20411]: Failed password for invalid user deploy from 198.51.100.23 "
            "port 52214 ssh2",
            "<86>Mar  4 14:03:25 web-03 CRON[20422]: pam_unix(cron:session): session opened for user root",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        None,
        "Failed password for invalid user deploy from 198.51.100.23 port 52214 ssh2",
        logger="sshd",
        pid="20411",
        fields={"host": "web-03"},
    ),
    Case(
        "syslog_rfc5424",
        (
            '<165>1 2026-03-04T14:03:22.917Z db-01.example.net postgres 3127 ID47 [meta sequenceId="12"] '
            "checkpoint complete: wrote 311 buffers",
            "<166>1 2026-03-04T14:03:30.002Z db-01.example.net postgres 3127 - - connection received",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        None,
        "checkpoint complete: wrote 311 buffers",
        logger="postgres",
        pid="3127",
        fields={
            "priority": "165",
            "host": "db-01.example.net",
            "msgid": "ID47",
            "structured_data": 'meta sequenceId="12"',
        },
    ),
    Case(
        "klog",
        (
            "E0304 14:03:22.917311    1234 reflector.go:138] failed to watch *v1.Pod: the "
            "server is unavailable",
            "I0304 14:03:23.000100    1234 leaderelection.go:258] successfully acquired "
            "lease kube-system/sched",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917311),
        "ERROR",
        "failed to watch *v1.Pod: the server is unavailable",
        logger="reflector.go:138",
        thread="1234",
    ),
    Case(
        "android_logcat",
        (
            "03-04 14:03:22.917  1702  2395 W ActivityManager: Slow operation: 1204ms so far, "
            "now at startProcess",
            "03-04 14:03:23.001  2227  2227 I chatty  : uid=10037(com.android.systemui) expire 4 lines",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "WARN",
        "Slow operation: 1204ms so far, now at startProcess",
        logger="ActivityManager",
        thread="2395",
        pid="1702",
    ),
]
# Programs' documented defaults: PostgreSQL's log_line_prefix '%m [%p] ', celery's worker format,
# Ruby's Logger (Rails), uWSGI's request log, Go's log package with its standard flags.
CASES += [
    Case(
        "postgresql",
        (
            "2026-03-04 14:03:22.917 UTC [2211] ERROR:  duplicate key value violates unique constraint "
            '"orders_pkey"',
            "2026-03-04 14:03:22.917 UTC [2211] DETAIL:  Key (id)=(42) already exists.",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        'duplicate key value violates unique constraint "orders_pkey"',
        pid="2211",
        fields={"zone": "UTC"},
    ),
    Case(
        "celery",
        (
            "[2026-03-04 14:03:22,917: ERROR/ForkPoolWorker-2] Task billing.charge[5e0c] raised unexpected: "
            "ConnectionError('timed out')",
            "[2026-03-04 14:03:23,001: INFO/MainProcess] celery@worker-1 ready.",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "Task billing.charge[5e0c] raised unexpected: ConnectionError('timed out')",
        fields={"process": "ForkPoolWorker-2"},
    ),
    Case(
        "rails",
        (
            "E, [2026-03-04T14:03:22.917000 #4242] ERROR -- : ActiveRecord::ConnectionTimeoutError (pool)",
            'I, [2026-03-04T14:03:23.001000 #4242]  INFO -- : Started GET "/carts/9" for 10.0.0.7',
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "ERROR",
        "ActiveRecord::ConnectionTimeoutError (pool)",
        pid="4242",
    ),
    Case(
        "uwsgi_request",
        (
            "[pid: 14|app: 0|req: 2/2] 10.1.2.3 () {34 vars in 520 bytes} [Wed Mar  4 14:03:22 2026] "
            "POST /orders => generated 53 bytes in 2041 msecs (HTTP/1.1 502) 2 headers in 81 bytes "
            "(1 switches on core 0)",
            "[pid: 15|app: 0|req: 1/3] 10.1.2.4 () {34 vars in 518 bytes} [Wed Mar  4 14:03:23 2026] "
            "GET /x => generated 210 bytes in 12 msecs (HTTP/1.1 200) 2 headers in 80 bytes",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "ERROR",
        "POST /orders => generated 53 bytes in 2041 msecs (HTTP/1.1 502) 2 headers in 81 bytes "
        "(1 switches on core 0)",
        pid="14",
        fields={"app": "0", "req": "2/2", "client": "10.1.2.3"},
    ),
    Case(
        "redis",
        (
            "1:M 04 Mar 2026 14:03:22.917 # Can't save in background: fork: Cannot allocate memory",
            "1:M 04 Mar 2026 14:03:23.002 * Background saving started by pid 31",
        ),
        utc((2026, 3, 4), 14, 3, 22, 917000),
        "WARN",
        "Can't save in background: fork: Cannot allocate memory",
        pid="1",
        fields={"role": "M"},
    ),
    Case(
        "go_log",
        (
            "2026/03/04 14:03:22 error: dial tcp 10.0.0.5:5432: connect: connection refused",
            "2026/03/04 14:03:23 starting server on :8080",
        ),
        utc((2026, 3, 4), 14, 3, 22),
        "ERROR",
        "error: dial tcp 10.0.0.5:5432: connect: connection refused",
    ),
]
CLOCK = Clock(now=datetime(2026, 6, 1, tzinfo=UTC))


def test_every_shipped_format_has_a_case() -> None:
    assert {c.format for c in CASES} == {f.name for f in shipped_formats()}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.format)
def test_shipped_format_parses_its_lines(case: Case) -> None:
    parsed = shipped_format(case.format, CLOCK).parse(case.lines[0])
    assert parsed is not None
    assert parsed.timestamp == case.timestamp
    assert parsed.timestamp is None or parsed.timestamp.tzinfo is not None
    assert (parsed.level, parsed.message) == (case.level, case.message)
    assert (parsed.logger, parsed.thread, parsed.pid) == (case.logger, case.thread, case.pid)
    assert dict(parsed.fields) == case.fields
    assert shipped_format(case.format, CLOCK).parse(case.lines[1]) is not None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.format)
def test_detection_names_the_format_of_a_sample(case: Case) -> None:
    found = detect_text_format(list(case.lines))
    assert found is not None and found.name == case.format


def test_syslog_without_a_year_takes_the_latest_year_not_in_the_future() -> None:
    syslog = shipped_format("syslog_rfc3164", Clock(now=datetime(2026, 1, 3, tzinfo=UTC)))
    december = syslog.parse("Dec 31 23:59:58 gw-1 kernel: eth0: link down")
    january = syslog.parse("Jan  2 00:00:01 gw-1 kernel: eth0: link up")
    assert december is not None and december.timestamp == utc((2025, 12, 31), 23, 59, 58)
    assert january is not None and january.timestamp == utc((2026, 1, 2), 0, 0, 1)


def test_a_local_time_zone_applies_to_headers_without_one() -> None:
    tokyo = timezone(timedelta(hours=9))
    parsed = shipped_format("log4j", Clock(tz=tokyo)).parse(
        "2026-03-04 14:03:22,917 ERROR com.acme.Pay: 支付网关超时 (订单 8841)"
    )
    assert parsed is not None
    assert parsed.timestamp == datetime(2026, 3, 4, 5, 3, 22, 917000, tzinfo=UTC)
    assert parsed.message == "支付网关超时 (订单 8841)"


def test_a_header_naming_no_real_moment_is_not_a_match() -> None:
    log4j = shipped_format("log4j")
    assert log4j.parse("2026-02-31 10:00:00,000 INFO com.acme.Job: started") is None
    assert log4j.parse("2026-02-28 10:00:00,000 INFO com.acme.Job: started") is not None


@pytest.mark.parametrize(
    ("line", "timestamp", "level"),
    [
        # Redis before 3.2 wrote no year; before 3.0, "[pid]" and no role
        ("31:M 10 May 11:40:36.446 # Shutting down", utc((2026, 5, 10), 11, 40, 36, 446000), "WARN"),
        ("[4018] 14 Nov 07:01:22.119 * Background saving terminated with success",
         utc((2025, 11, 14), 7, 1, 22, 119000), "INFO"),
        ("31:S 10 May 11:40:36.446 - Client closed", utc((2026, 5, 10), 11, 40, 36, 446000), "INFO"),
        ("31:X 10 May 11:40:36.446 . DEBUG cron", utc((2026, 5, 10), 11, 40, 36, 446000), "DEBUG"),
    ],
)  # fmt: skip
def test_redis_older_headers_and_every_level_symbol(line: str, timestamp: datetime, level: str) -> None:
    # the symbols of Redis's serverLogRaw (".-*#": debug, verbose, notice, warning), folded as its own
    # syslog mapping folds them (verbose and notice to info)
    parsed = shipped_format("redis", CLOCK).parse(line)
    assert parsed is not None and (parsed.timestamp, parsed.level) == (timestamp, level)
