# Log lines are kept whole, as they appear in the data.
# ruff: noqa: E501
"""Writes osprey's logs/ deterministically (run from the repository root:
`python tests/worlds/osprey/generate.py`); the output is committed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = datetime(2026, 12, 1, tzinfo=UTC)
NOW = DAY + timedelta(hours=12)
PODS = {
    # (node, namespace, pod, uid, container)
    "transcoder": (
        "ip-10-7-1-4",
        "media",
        "transcoder-7f9c6d5b8-x2kqz",
        "4c1e9a7d-2b3f-4d5e-8a6b-1c2d3e4f5a6b",
        "transcoder",
    ),
    "thumbnailer": (
        "ip-10-7-1-4",
        "media",
        "thumbnailer-5d8b7c6f9-m4npq",
        "5d2f8b1e-3c4a-4e6f-9b7c-2d3e4f5a6b7c",
        "thumbnailer",
    ),
    "cdn-shield": (
        "ip-10-7-2-8",
        "frontdoor",
        "cdn-shield-6c9d8f7b5-r7wtz",
        "6e3a9c2f-4d5b-4f7a-8c8d-3e4f5a6b7c8d",
        "nginx",
    ),
    "auth-broker": (
        "ip-10-7-2-8",
        "accounts",
        "auth-broker-8b7c6d5f4-k9hjs",
        "7f4b8d3a-5e6c-4a8b-9d9e-4f5a6b7c8d9e",
        "broker",
    ),
    "profile-store": (
        "ip-10-7-2-8",
        "accounts",
        "profile-store-0",
        "8a5c9e4b-6f7d-4b9c-8e8f-5a6b7c8d9e0f",
        "redis",
    ),
    "invoice-runner": (
        "ip-10-7-3-2",
        "billing",
        "invoice-runner-9c8d7b6f5-t2vbx",
        "9b6d8f5c-7a8e-4c8d-9f9a-6b7c8d9e0f1a",
        "runner",
    ),
    "billing-db": (
        "ip-10-7-3-2",
        "billing",
        "billing-db-0",
        "ac7e9a6d-8b9f-4d9e-8a8b-7c8d9e0f1a2b",
        "postgres",
    ),
}


def every(start: datetime, end: datetime, step: timedelta) -> Iterator[datetime]:
    t = start
    while t < end:
        yield t
        t += step


def at(h: int, m: int, s: int = 0, day: datetime = DAY) -> datetime:
    return day + timedelta(hours=h, minutes=m, seconds=s)


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def transcoder() -> list[tuple[datetime, str]]:
    out = []
    for t in every(at(0, 0), NOW, timedelta(minutes=10)):
        out.append(
            (t, f'ts={t:%Y-%m-%dT%H:%M:%SZ} level=info caller=queue.go:41 msg="jobs dequeued" count=12')
        )
    for i, t in enumerate(every(at(6, 26), at(6, 41), timedelta(minutes=1, seconds=30))):
        out.append(
            (
                t,
                f'ts={t:%Y-%m-%dT%H:%M:%SZ} level=error caller=encode.go:133 msg="ffmpeg exited with code 137" job=vod-{4410 + i} profile=1080p',
            )
        )
    for i, t in enumerate(every(at(11, 18), at(11, 56), timedelta(minutes=2))):
        out.append(
            (
                t,
                f'ts={t:%Y-%m-%dT%H:%M:%SZ} level=error caller=upload.go:88 msg="segment upload failed" bucket=vod-segments err="SlowDown: Please reduce your request rate." attempt={1 + i % 3}',
            )
        )
    return out


def thumbnailer() -> list[tuple[datetime, str]]:
    return [
        (t, f'ts={t:%Y-%m-%dT%H:%M:%SZ} level=info caller=thumbs.go:57 msg="thumbnails written" count=48')
        for t in every(at(0, 5), NOW, timedelta(minutes=15))
    ]


def cdn_shield() -> list[tuple[datetime, str]]:
    out = []
    for i, t in enumerate(every(at(11, 15), NOW, timedelta(minutes=1, seconds=40))):
        out.append(
            (
                t,
                (
                    f"{t:%Y/%m/%d %H:%M:%S} [error] 31#31: *{1182 + i * 7} upstream timed out (110: Connection timed out) "
                    f"while reading response header from upstream, client: 10.7.0.{20 + i % 9}, server: shield, "
                    f'request: "GET /v/{880 + i}/seg_5.ts HTTP/1.1", upstream: "http://transcoder.media.svc.cluster.local:8080/v/{880 + i}/seg_5.ts", '
                    'host: "cdn.osprey.tv"'
                ),
            )
        )
    for t in every(at(0, 2), NOW, timedelta(minutes=30)):
        out.append((t, f"{t:%Y/%m/%d %H:%M:%S} [notice] 1#1: signal process started"))
    return out


def auth_broker() -> list[tuple[datetime, str]]:
    out = []
    yesterday = DAY - timedelta(days=1)
    for t in every(at(0, 0), NOW, timedelta(minutes=20)):
        out.append(
            (
                t,
                json.dumps(
                    {"ts": iso(t), "level": "info", "logger": "http", "msg": "token issued", "count": 310}
                ),
            )
        )
    for i, t in enumerate(every(at(22, 10, day=yesterday), at(22, 41, day=yesterday), timedelta(minutes=3))):
        out.append(
            (
                t,
                json.dumps(
                    {
                        "ts": iso(t),
                        "level": "error",
                        "logger": "directory",
                        "msg": "LDAP bind failed",
                        "error": "dial tcp 10.7.9.14:636: i/o timeout",
                        "attempt": 1 + i % 4,
                    }
                ),
            )
        )
    for t in every(at(0, 0, day=yesterday) + timedelta(hours=20), at(0, 0), timedelta(minutes=20)):
        out.append(
            (
                t,
                json.dumps(
                    {"ts": iso(t), "level": "info", "logger": "http", "msg": "token issued", "count": 205}
                ),
            )
        )
    for t in every(at(10, 31), NOW, timedelta(minutes=2, seconds=30)):
        out.append(
            (
                t,
                json.dumps(
                    {
                        "ts": iso(t),
                        "level": "error",
                        "logger": "session",
                        "msg": "session write failed",
                        "peer": "profile-store.accounts.svc.cluster.local:6379",
                        "error": "OOM command not allowed when used memory > 'maxmemory'.",
                    }
                ),
            )
        )
    return out


def profile_store() -> list[tuple[datetime, str]]:
    out = []
    for t in every(at(0, 0), at(10, 20), timedelta(minutes=30)):
        out.append((t, f"1:M {t:%d %b %Y %H:%M:%S}.101 * 100 changes in 300 seconds. Saving..."))
        out.append(
            (
                t + timedelta(seconds=1),
                f"1:M {t + timedelta(seconds=1):%d %b %Y %H:%M:%S}.402 * Background saving terminated with success",
            )
        )
    for t in every(at(10, 28), NOW, timedelta(minutes=6)):
        out.append(
            (t, f"1:M {t:%d %b %Y %H:%M:%S}.002 # Can't save in background: fork: Cannot allocate memory")
        )
    return out


def invoice_runner() -> list[tuple[datetime, str]]:
    out = []
    for t in every(at(0, 0), NOW, timedelta(minutes=15)):
        if at(2, 45) <= t < at(3, 15):
            continue
        out.append(
            (
                t,
                f"{t:%Y-%m-%d %H:%M:%S},{t.second * 7 % 1000:03d} INFO invoice_runner.batch: batch idle, next run in 15m",
            )
        )
    for i, t in enumerate(every(at(2, 49), at(3, 9), timedelta(minutes=2, seconds=10))):
        out.append(
            (
                t,
                (
                    f"{t:%Y-%m-%d %H:%M:%S},{(i * 37) % 1000:03d} ERROR invoice_runner.batch: batch 20261201 failed: "
                    "could not connect to server: Connection refused Is the server running on host "
                    '"billing-db.billing.svc.cluster.local" (10.7.12.5) and accepting TCP/IP connections on port 5432?'
                ),
            )
        )
    return out


def billing_db() -> list[tuple[datetime, str]]:
    out = []
    for t in every(at(0, 0), NOW, timedelta(minutes=30)):
        if at(2, 47) <= t < at(3, 9):
            continue
        out.append((t, f"{t:%Y-%m-%d %H:%M:%S}.120 UTC [61] LOG:  checkpoint starting: time"))
    out += [
        (at(2, 47, 58), "2026-12-01 02:47:58.120 UTC [1] LOG:  received fast shutdown request"),
        (
            at(
                2,
                47,
                58,
            )
            + timedelta(milliseconds=300),
            "2026-12-01 02:47:58.420 UTC [1] LOG:  aborting any active transactions",
        ),
        (at(2, 48, 3), "2026-12-01 02:48:03.002 UTC [1] LOG:  database system is shut down"),
        (
            at(3, 8, 41),
            "2026-12-01 03:08:41.510 UTC [1] LOG:  starting PostgreSQL 16.4 on x86_64-pc-linux-gnu",
        ),
        (
            at(3, 8, 44),
            "2026-12-01 03:08:44.090 UTC [1] LOG:  database system is ready to accept connections",
        ),
    ]
    return out


WRITERS: dict[str, Callable[[], list[tuple[datetime, str]]]] = {
    "transcoder": transcoder,
    "thumbnailer": thumbnailer,
    "cdn-shield": cdn_shield,
    "auth-broker": auth_broker,
    "profile-store": profile_store,
    "invoice-runner": invoice_runner,
    "billing-db": billing_db,
}


def main() -> None:
    root = HERE / "logs"
    shutil.rmtree(root, ignore_errors=True)
    for name, (node, ns, pod, uid, container) in PODS.items():
        lines = sorted(WRITERS[name](), key=lambda x: x[0])
        stream = "stderr" if name in ("cdn-shield", "profile-store") else "stdout"
        path = root / node / "var/log/pods" / f"{ns}_{pod}_{uid}" / container / "0.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{iso(t)} {stream} F {text}\n" for t, text in lines), encoding="utf-8")


if __name__ == "__main__":
    main()
