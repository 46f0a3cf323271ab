"""Generates the bundled demo world once (deterministic seed); its output is committed.

    python scripts/generate_demo.py [--out DIR]   # rewrites world.json, alerts.json and logs/*.ndjson

DIR defaults to server/demo, the bundled world. A development tool: it is not part of the package.

The world: five services between 20:00 and 23:30 UTC on 2026-07-08 ("now" = 23:30). payment-service
has a firing HighCPUUsage alert (92%, 25m); order-service exhausts its HikariCP pool from 23:02 (error
rate and latency alerts follow, and gateway sees 502s from 23:15); user-service had a memory episode
with an OutOfMemoryError (resolved); inventory-service restarted after failed liveness probes
(resolved) and never logs anything about HikariCP. Knowledge documents are written by hand.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "server" / "demo"
START = datetime(2026, 7, 8, 20, 0, 0, tzinfo=UTC)
NOW = datetime(2026, 7, 8, 23, 30, 0, tzinfo=UTC)
SEED = 20260708
Line = dict[str, str]


def at(hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(2026, 7, 8, hh, mm, ss, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def minutes(a: datetime, b: datetime) -> str:
    return f"{int((b - a).total_seconds() // 60)}m"


def alert(
    name: str, service: str, start: datetime, end: datetime | None, **fields: object
) -> dict[str, object]:
    row: dict[str, object] = {
        "alert_name": name,
        "service": service,
        "state": "firing" if end is None else "resolved",
        "current": fields.pop("current"),
        "duration": minutes(start, end or NOW),
    }
    row.update(fields)
    row["starts_at"] = iso(start)
    if end is not None:
        row["ends_at"] = iso(end)
    return row


ALERTS = [
    alert(
        "HighCPUUsage",
        "payment-service",
        at(23, 5),
        None,
        current="92%",
        threshold="80%",
        severity="critical",
        summary="CPU usage above 80% for more than 5 minutes",
        labels={"namespace": "prod", "pod": "payment-service-7d9f8b6c4-x2k9p"},
    ),
    alert(
        "HighErrorRate",
        "order-service",
        at(23, 8),
        None,
        current="7.8%",
        threshold="5%",
        severity="critical",
        summary="HTTP 5xx ratio above 5%",
        labels={"namespace": "prod", "route": "/api/orders"},
    ),
    alert(
        "HighLatency",
        "order-service",
        at(23, 10),
        None,
        current="p99=4.2s",
        threshold="p99=1s",
        severity="warning",
        summary="p99 latency above 1s",
        labels={"namespace": "prod"},
    ),
    alert(
        "HighErrorRate",
        "gateway",
        at(23, 15),
        None,
        current="5.6%",
        threshold="5%",
        severity="warning",
        summary="HTTP 502 ratio on /api/orders above 5%",
        labels={"namespace": "edge", "upstream": "order-service"},
    ),
    alert(
        "HighMemoryUsage",
        "user-service",
        at(21, 10),
        at(21, 45),
        current="88%",
        threshold="85%",
        severity="warning",
        summary="JVM heap usage above 85%",
        labels={"namespace": "prod", "pod": "user-service-5c8d7f9b8-q7m2n"},
    ),
    alert(
        "PodRestartsHigh",
        "inventory-service",
        at(20, 40),
        at(21, 5),
        current="5 restarts",
        threshold="3 restarts/30m",
        severity="warning",
        summary="liveness probe failures restarted the pod",
        labels={"namespace": "prod", "pod": "inventory-service-6b9c5d7f4-h3k8w"},
    ),
    alert(
        "HighCPUUsage",
        "user-service",
        at(22, 0),
        at(22, 20),
        current="85%",
        threshold="80%",
        severity="warning",
        summary="CPU usage above 80% for more than 5 minutes",
        labels={"namespace": "prod", "pod": "user-service-5c8d7f9b8-q7m2n"},
    ),
    alert(
        "HighLatency",
        "payment-service",
        at(20, 30),
        at(20, 50),
        current="p99=1.8s",
        threshold="p99=1s",
        severity="warning",
        summary="p99 latency above 1s",
        labels={"namespace": "prod"},
    ),
]


class Gen:
    def __init__(self, rng: random.Random, service: str) -> None:
        self.rng = rng
        self.service = service
        self.lines: list[tuple[datetime, Line]] = []

    def add(self, moment: datetime, level: str, message: str, logger: str, **extra: str) -> None:
        line: Line = {
            "timestamp": iso(moment),
            "level": level,
            "service": self.service,
            "message": message,
            "logger": logger,
            "thread": f"http-nio-8080-exec-{self.rng.randint(1, 40)}",
            "trace_id": f"{self.rng.getrandbits(64):016x}",
        }
        line.update(extra)
        self.lines.append((moment, line))

    def background(self, count: int, make: Callable[[random.Random], tuple[str, str, str]]) -> None:
        span = int((NOW - START).total_seconds())
        for _ in range(count):
            moment = START + timedelta(seconds=self.rng.randrange(span))
            level, message, logger = make(self.rng)
            self.add(moment, level, message, logger)

    def episode(
        self,
        start: datetime,
        end: datetime,
        count: int,
        make: Callable[[random.Random], tuple[str, str, str]],
    ) -> None:
        span = int((end - start).total_seconds())
        for _ in range(count):
            level, message, logger = make(self.rng)
            self.add(start + timedelta(seconds=self.rng.randrange(span)), level, message, logger)


def pick(
    rng: random.Random, options: list[tuple[int, Callable[[random.Random], tuple[str, str, str]]]]
) -> tuple[str, str, str]:
    total = sum(w for w, _ in options)
    roll = rng.randrange(total)
    for weight, make in options:
        if roll < weight:
            return make(rng)
        roll -= weight
    raise AssertionError


def oid(r: random.Random) -> str:
    return f"O{r.randint(10_000_000, 99_999_999)}"


def payment(rng: random.Random) -> Gen:
    g = Gen(rng, "payment-service")
    api, cb = "com.shop.payment.api.PaymentController", "com.shop.payment.callback.CallbackHandler"
    g.background(
        700,
        lambda r: pick(
            r,
            [
                (
                    40,
                    lambda r: (
                        "INFO",
                        f"Payment P{r.randint(100000, 999999)} authorized amount={r.randint(10, 5000)}.00 "
                        f"CNY channel={r.choice(['alipay', 'wechat', 'card'])}",
                        api,
                    ),
                ),
                (25, lambda r: ("INFO", f"支付回调处理完成 orderId={oid(r)} 耗时{r.randint(20, 300)}ms", cb)),
                (
                    20,
                    lambda r: (
                        "DEBUG",
                        f"Fetching exchange rate USD/CNY from cache ({r.randint(1, 9)}ms)",
                        "com.shop.payment.fx.RateClient",
                    ),
                ),
                (5, lambda r: ("WARN", f"Retrying card network call attempt={r.randint(2, 3)}", api)),
                (
                    2,
                    lambda r: (
                        "ERROR",
                        f"Payment P{r.randint(100000, 999999)} failed: channel timeout after 5000ms",
                        api,
                    ),
                ),
            ],
        ),
    )
    g.episode(
        at(23, 3),
        NOW,
        90,
        lambda r: pick(
            r,
            [
                (
                    30,
                    lambda r: (
                        "WARN",
                        f"Full GC (Ergonomics) pause {r.randint(8, 25) / 10:.1f}s, heap 3.1G->2.9G",
                        "gc",
                    ),
                ),
                (
                    30,
                    lambda r: (
                        "WARN",
                        f"支付回调处理超时 orderId={oid(r)} elapsed={r.randint(3000, 9000)}ms",
                        cb,
                    ),
                ),
                (
                    25,
                    lambda r: (
                        "WARN",
                        f"Thread pool payment-exec saturated: active=200, queue={r.randint(400, 1000)}",
                        "com.shop.payment.exec.Executor",
                    ),
                ),
                (
                    15,
                    lambda r: (
                        "ERROR",
                        f"Payment P{r.randint(100000, 999999)} failed: channel timeout after 5000ms",
                        api,
                    ),
                ),
            ],
        ),
    )
    return g


def order(rng: random.Random) -> Gen:
    g = Gen(rng, "order-service")
    api, hikari = "com.shop.order.api.OrderController", "com.zaxxer.hikari.pool.HikariPool"
    g.background(
        750,
        lambda r: pick(
            r,
            [
                (40, lambda r: ("INFO", f"Order {oid(r)} created items={r.randint(1, 6)}", api)),
                (30, lambda r: ("INFO", f"GET /api/orders/{oid(r)} 200 {r.randint(8, 120)}ms", api)),
                (20, lambda r: ("DEBUG", f"Cache hit order:{oid(r)}", "com.shop.order.cache.OrderCache")),
                (
                    3,
                    lambda r: (
                        "WARN",
                        f"Slow query on orders table took {r.randint(500, 900)}ms",
                        "com.shop.order.repo.OrderRepository",
                    ),
                ),
            ],
        ),
    )
    g.episode(
        START,
        at(23, 0),
        30,
        lambda r: (
            "DEBUG",
            f"HikariPool-1 - Pool stats (total=20, active={r.randint(2, 8)}, idle={r.randint(12, 18)}, "
            "waiting=0)",
            hikari,
        ),
    )
    timeout = "HikariPool-1 - Connection is not available, request timed out after 30000ms"
    exc = "java.sql.SQLTransientConnectionException"
    g.episode(
        at(23, 2),
        NOW,
        120,
        lambda r: pick(
            r,
            [
                (35, lambda r: ("ERROR", timeout, hikari)),
                (
                    25,
                    lambda r: (
                        "WARN",
                        f"HikariCP pool HikariPool-1 exhausted: total=20, active=20, idle=0, "
                        f"waiting={r.randint(10, 60)}",
                        hikari,
                    ),
                ),
                (25, lambda r: ("ERROR", f"POST /api/orders 500 {r.randint(30000, 30200)}ms", api)),
                (
                    15,
                    lambda r: ("WARN", f"GET /api/orders/{oid(r)} 200 {r.randint(1500, 4800)}ms (slow)", api),
                ),
            ],
        ),
    )
    for _, line in g.lines:
        if line["message"] == timeout:
            line["exception"] = exc
    g.add(at(23, 5, 28), "ERROR", timeout, hikari, exception=exc)
    return g


def inventory(rng: random.Random) -> Gen:
    g = Gen(rng, "inventory-service")
    api = "com.shop.inventory.api.StockController"
    g.background(
        700,
        lambda r: pick(
            r,
            [
                (
                    40,
                    lambda r: (
                        "INFO",
                        f"Stock reserved sku=SKU-{r.randint(1000, 9999)} qty={r.randint(1, 5)}",
                        api,
                    ),
                ),
                (
                    25,
                    lambda r: (
                        "INFO",
                        f"Redis GET stock:SKU-{r.randint(1000, 9999)} {r.randint(1, 9)}ms",
                        "com.shop.inventory.cache.StockCache",
                    ),
                ),
                (
                    20,
                    lambda r: (
                        "DEBUG",
                        f"Reconciling warehouse WH-{r.randint(1, 4)}",
                        "com.shop.inventory.sync.Reconciler",
                    ),
                ),
                (
                    8,
                    lambda r: (
                        "WARN",
                        f"库存不足 sku=SKU-{r.randint(1000, 9999)} remaining={r.randint(0, 3)}",
                        api,
                    ),
                ),
                (
                    2,
                    lambda r: (
                        "ERROR",
                        "Redis connection reset by peer; retrying (attempt 3/5)",
                        "com.shop.inventory.cache.StockCache",
                    ),
                ),
            ],
        ),
    )
    g.episode(
        at(20, 40),
        at(21, 5),
        40,
        lambda r: pick(
            r,
            [
                (
                    40,
                    lambda r: (
                        "WARN",
                        "Liveness probe failed: HTTP probe failed with statuscode: 503",
                        "kubelet",
                    ),
                ),
                (
                    30,
                    lambda r: (
                        "WARN",
                        "Received SIGTERM, shutting down gracefully",
                        "com.shop.inventory.Application",
                    ),
                ),
                (
                    30,
                    lambda r: (
                        "INFO",
                        f"Started InventoryApplication in {r.randint(95, 140) / 10:.1f} seconds",
                        "com.shop.inventory.Application",
                    ),
                ),
            ],
        ),
    )
    return g


def user(rng: random.Random) -> Gen:
    g = Gen(rng, "user-service")
    api = "com.shop.user.api.AuthController"
    g.background(
        700,
        lambda r: pick(
            r,
            [
                (35, lambda r: ("INFO", f"用户登录成功 uid=U{r.randint(100000, 999999)}", api)),
                (25, lambda r: ("INFO", f"Token refreshed uid=U{r.randint(100000, 999999)}", api)),
                (
                    25,
                    lambda r: (
                        "DEBUG",
                        f"Loading profile uid=U{r.randint(100000, 999999)}",
                        "com.shop.user.ProfileService",
                    ),
                ),
                (
                    5,
                    lambda r: ("WARN", f"用户登录失败 uid=U{r.randint(100000, 999999)} reason=密码错误", api),
                ),
            ],
        ),
    )
    g.episode(
        at(21, 10),
        at(21, 45),
        50,
        lambda r: pick(
            r,
            [
                (
                    60,
                    lambda r: (
                        "WARN",
                        f"GC overhead high: {r.randint(35, 60)}% of time in GC over last 60s",
                        "gc",
                    ),
                ),
                (40, lambda r: ("WARN", f"Heap usage {r.randint(85, 95)}% after GC", "gc")),
            ],
        ),
    )
    g.add(
        at(21, 38, 12),
        "ERROR",
        "java.lang.OutOfMemoryError: Java heap space",
        "com.shop.user.session.SessionCache",
        exception="java.lang.OutOfMemoryError",
    )
    g.episode(
        at(22, 0),
        at(22, 20),
        25,
        lambda r: ("WARN", f"Password hashing slow: bcrypt cost=12 took {r.randint(400, 900)}ms", api),
    )
    return g


def gateway(rng: random.Random) -> Gen:
    g = Gen(rng, "gateway")
    route = "com.shop.gateway.Router"
    g.background(
        750,
        lambda r: pick(
            r,
            [
                (
                    45,
                    lambda r: (
                        "INFO",
                        f"GET /api/orders 200 upstream=order-service {r.randint(10, 150)}ms",
                        route,
                    ),
                ),
                (
                    35,
                    lambda r: (
                        "INFO",
                        f"POST /api/payments 200 upstream=payment-service {r.randint(20, 300)}ms",
                        route,
                    ),
                ),
                (15, lambda r: ("DEBUG", f"Route cache refreshed ({r.randint(20, 40)} routes)", route)),
            ],
        ),
    )
    g.episode(
        at(23, 15),
        NOW,
        110,
        lambda r: pick(
            r,
            [
                (
                    60,
                    lambda r: (
                        "ERROR",
                        f"GET /api/orders 502 Bad Gateway upstream=order-service {r.randint(30000, 30100)}ms",
                        route,
                    ),
                ),
                (
                    40,
                    lambda r: (
                        "WARN",
                        f"upstream order-service slow response {r.randint(2000, 9000)}ms",
                        route,
                    ),
                ),
            ],
        ),
    )
    return g


def main() -> None:
    parser = argparse.ArgumentParser(description="Writes the demo world's generated files.")
    parser.add_argument("--out", type=Path, default=DEMO, help="the world's directory (default: server/demo)")
    out: Path = parser.parse_args().out
    rng = random.Random(SEED)
    world = {
        "name": "evigate demo world",
        "now": iso(NOW),
        "since": iso(START),
        "services": ["payment-service", "order-service", "inventory-service", "user-service", "gateway"],
        "description": "A few hours of a small shop: CPU on payment-service, HikariCP pool exhaustion on "
        "order-service, a resolved memory episode on user-service, resolved restarts on "
        "inventory-service, 502s on gateway.",
    }
    (out / "world.json").write_text(json.dumps(world, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "alerts.json").write_text(
        json.dumps(ALERTS, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (out / "logs").mkdir(exist_ok=True)
    for make in (payment, order, inventory, user, gateway):
        gen = make(rng)
        gen.lines.sort(key=lambda pair: pair[0])
        text = "".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for _, line in gen.lines
        )
        (out / "logs" / f"{gen.service}.ndjson").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
