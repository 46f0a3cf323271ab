"""MariaDB goes away during traffic and comes back, behind a TCP proxy this test controls (the
shared MariaDB server itself is never stopped): UNAVAILABLE and NOT_SERVING while it is gone,
nothing half-written, and the same server process serves again once it is back."""

from __future__ import annotations

import asyncio
import collections
import itertools

import grpc
from grpc_health.v1 import health_pb2

from evigate.v1 import session_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, db_rows, wait_for
from tests.server.tcp_proxy import TcpProxy
from tests.support import waiting

UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING


async def _health(client: Client) -> int:
    try:
        reply = await client.health_stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2.0)
    except grpc.aio.AioRpcError:
        return -1
    return int(reply.status)


async def _until_health(client: Client, wanted: int, within: float) -> None:
    async def probe() -> int:
        return await _health(client)

    await waiting.eventually(probe, lambda status: status == wanted, within=within, what=f"health {wanted}")


async def test_mariadb_outage_gives_unavailable_then_recovers_without_restart(
    servers: ServerFactory, mariadb_url: str
) -> None:
    proxy = TcpProxy("127.0.0.1", 3306)
    await proxy.open()
    proxied = mariadb_url.replace("127.0.0.1:3306", f"127.0.0.1:{proxy.port}")
    server = servers(proxied, args=["--instance-name", "outage"])
    await server.start().wait_ready()
    codes: collections.Counter[str] = collections.Counter()
    counter = itertools.count()
    stop = asyncio.Event()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = Client(channel)
            first = await client.chat(QUESTIONS[0], session_id="before")
            assert first.status == session_pb2.SESSION_STATUS_SUCCESS

            async def traffic() -> None:
                """Chat, Feedback and GetTrace back to back until told to stop; counts the codes."""
                while not stop.is_set():
                    n = next(counter)
                    calls = (
                        client.chat(QUESTIONS[n % len(QUESTIONS)], session_id=f"during-{n}", rpc_timeout=10),
                        client.feedback("before", useful=n % 2 == 0, rpc_timeout=10),
                        client.trace("before", rpc_timeout=10),
                    )
                    for call in calls:
                        try:
                            await call
                            codes["OK"] += 1
                        except grpc.aio.AioRpcError as error:
                            codes[error.code().name] += 1
                    await asyncio.sleep(0.01)

            workers = [asyncio.create_task(traffic()) for _ in range(3)]
            await wait_for(lambda: codes["OK"] >= 15, 20, "traffic flowing before the outage")

            await proxy.close()  # MariaDB is gone for the server
            await _until_health(client, NOT_SERVING, 10)
            await _assert_unavailable(client)
            outage_codes = await _seen_by_traffic(codes)

            await proxy.open()  # back on the same port
            await _until_health(client, SERVING, 15)
            before_stop = codes["OK"]
            await wait_for(lambda: codes["OK"] >= before_stop + 15, 20, "traffic flowing again")
            stop.set()
            await asyncio.gather(*workers)
            after = await client.chat(QUESTIONS[2], session_id="after")
            assert after.status == session_pb2.SESSION_STATUS_SUCCESS
            assert (await client.trace("after")).trace.session.session_id == "after"
            assert (await client.feedback("after", useful=True)).case_id
            # Sessions the outage interrupted are recorded FAILED by the server once it is back.
            await wait_for(lambda: not db_rows(mariadb_url, _RUNNING), 30, "no session left RUNNING")
    finally:
        stop.set()
        await proxy.close()

    # Only documented outcomes: success, or UNAVAILABLE while the database was gone.
    assert set(codes) <= {"OK", UNAVAILABLE.name}, codes
    assert outage_codes.get(UNAVAILABLE.name, 0) >= 1
    assert server.proc is not None and server.proc.poll() is None  # never restarted
    assert server.starts == 1
    _assert_nothing_half_written(mariadb_url)


async def _seen_by_traffic(codes: collections.Counter[str]) -> dict[str, int]:
    """The traffic's codes once it has seen the outage: calls in flight when the proxy closed end
    only once their statements fail, so the snapshot waits for the traffic's first UNAVAILABLE."""
    await wait_for(lambda: codes[UNAVAILABLE.name] >= 1, 20, "the traffic sees UNAVAILABLE")
    return dict(codes)


async def _assert_unavailable(client: Client) -> None:
    for call in (
        client.chat(QUESTIONS[1], session_id="while-down"),
        client.feedback("before", useful=True),
        client.trace("before"),
    ):
        try:
            await call
        except grpc.aio.AioRpcError as error:
            assert error.code() == UNAVAILABLE, error
        else:
            raise AssertionError("a call succeeded with the database down")


def _assert_nothing_half_written(url: str) -> None:
    """Every session finished (SUCCESS with its answer and its job, or FAILED with a reason); no
    job or tool call without its session; the call made while the database was down left nothing."""
    rows = db_rows(url, "SELECT session_id, status, answer, failure_reason FROM diagnosis_session")
    for sid, status, answer, reason in rows:
        if status == "SUCCESS":
            assert answer, sid
        else:
            assert status == "FAILED" and reason, (sid, status)
    success = {sid for sid, status, *_ in rows if status == "SUCCESS"}
    jobs = db_rows(url, "SELECT session_id FROM job")
    assert sorted(j[0] for j in jobs) == sorted(success)
    orphans = (
        "SELECT COUNT(*) FROM tool_invocation t LEFT JOIN diagnosis_session s ON s.session_id = t.session_id"
    )
    assert db_rows(url, orphans + " WHERE s.session_id IS NULL") == [(0,)]
    assert "while-down" not in {sid for sid, *_ in rows}


_RUNNING = "SELECT session_id FROM diagnosis_session WHERE status = 'RUNNING'"
