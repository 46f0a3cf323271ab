"""Shutdown drill: the database is partitioned away (connections accepted, nothing ever answered),
then SIGTERM. The `evigate serve` process is gone within its documented bound,
`grace_period_s + shutdown_timeout_s`, whatever its workers, health checks and pool were waiting
on (the README's Shutdown section)."""

from __future__ import annotations

import asyncio
import signal
import subprocess

import grpc
from grpc_health.v1 import health_pb2

from evigate.v1 import session_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client
from tests.server.tcp_proxy import TcpProxy
from tests.support.waiting import eventually

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
GRACE_S = 1.0
SHUTDOWN_TIMEOUT_S = 3.0
# Between the signal and the process's end the kernel must deliver the signal and the interpreter
# schedule its handler on two shared, busy cores: slack for that, not for the shutdown itself.
SCHEDULING_SLACK_S = 2.0


async def test_sigterm_with_the_database_blackholed_ends_the_process_within_the_bound(
    servers: ServerFactory, mariadb_url: str
) -> None:
    proxy = TcpProxy("127.0.0.1", 3306)
    await proxy.open()
    proxied = mariadb_url.replace("127.0.0.1:3306", f"127.0.0.1:{proxy.port}")
    server = servers(
        proxied,
        args=[
            "--grace-period-s",
            str(GRACE_S),
            "--shutdown-timeout-s",
            str(SHUTDOWN_TIMEOUT_S),
            "--db-timeout-s",
            "2",
            "--instance-name",
            "drill",
        ],
    )
    await server.start().wait_ready()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = Client(channel)
            reply = await client.chat(QUESTIONS[0], session_id="before")  # pooled connections, a job
            assert reply.status == session_pb2.SESSION_STATUS_SUCCESS
            proxy.blackhole()  # open connections and new ones alike: bytes in, nothing back

            async def health() -> int:
                try:
                    answer = await client.health_stub.Check(health_pb2.HealthCheckRequest(), timeout=2)
                except grpc.aio.AioRpcError:
                    return -1
                return int(answer.status)

            await eventually(health, lambda s: s == NOT_SERVING, within=30, what="the partition seen")
        assert server.proc is not None
        server.send_signal(signal.SIGTERM)
        bound = GRACE_S + SHUTDOWN_TIMEOUT_S + SCHEDULING_SLACK_S
        try:  # the proxy lives in this event loop: wait for the process in a thread
            status = await asyncio.to_thread(server.proc.wait, bound)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"still running {bound} s after SIGTERM:\n{server.log_text()[-4000:]}"
            ) from None
    finally:
        await proxy.close()
    # Every step of the shutdown ran (within its budget); the exit is the interpreter's own or, if
    # its teardown still hung at the bound, the watchdog's SIGALRM.
    assert status in (0, -signal.SIGALRM), server.log_text()[-4000:]
    events = [e.get("event") for e in server.log_events()]
    assert "shutting down" in events and "stopped" in events
