"""The LLM opinion has the evidence score's durability: a replica killed while its opinion calls
hang loses none of them (the restarted replica and the other one take the jobs over once the
lease is released or ends), and across two replicas on one MariaDB database every SUCCESS gets
exactly one opinion, written once, while the answers never waited for it."""

from __future__ import annotations

import asyncio
import collections
import signal
import threading
from collections.abc import Iterator

import grpc
import pytest

from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, ServerProc, db_rows, self_evaluation, wait_for
from tests.support.fake_openai import FakeOpenAI, Hang, RecordedRequest, Step, json_reply

OPINION = {
    name: {"value": True, "reason": f"scripted: {name}"}
    for name in ("has_root_cause", "has_solution", "answers_the_question", "states_only_verified_facts")
}
SESSIONS = 6


class Switch:
    """Hangs every opinion request until released, then answers them."""

    def __init__(self) -> None:
        self.hang = threading.Event()
        self.hang.set()

    def __call__(self, request: RecordedRequest) -> Step:
        return Hang() if self.hang.is_set() else json_reply(OPINION)


@pytest.fixture
def switch() -> Switch:
    return Switch()


@pytest.fixture
def fake(switch: Switch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=switch) as server:
        yield server


def replica(servers: ServerFactory, url: str, fake: FakeOpenAI, name: str) -> ServerProc:
    return servers(
        url,
        name=name,
        args=["--instance-name", f"opinion-{name}", "--worker-lease-s", "2", "--worker-retry-delay-s", "0.1"],
        env={
            "EVIGATE_EVALUATION_LLM_MODEL": "evaluator",
            "EVIGATE_EVALUATION_LLM_BASE_URL": fake.base_url,
            "EVIGATE_EVALUATION_LLM_TIMEOUT_S": "3",
            "EVIGATE_LLM_JSON_MODE": "json_object",
        },
    )


def opinion_writes(*procs: ServerProc) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for proc in procs:
        for event in proc.log_events():
            if event.get("event") == "llm opinion written":
                counts[str(event.get("session_id"))] += 1
    return counts


async def test_opinions_survive_a_kill_and_are_written_once_across_replicas(
    servers: ServerFactory, mariadb_url: str, fake: FakeOpenAI, switch: Switch
) -> None:
    a, b = replica(servers, mariadb_url, fake, "a"), replica(servers, mariadb_url, fake, "b")
    await asyncio.gather(a.start().wait_ready(), b.start().wait_ready())
    sessions: list[str] = []
    async with grpc.aio.insecure_channel(a.address) as ch_a, grpc.aio.insecure_channel(b.address) as ch_b:
        clients = [Client(ch_a), Client(ch_b)]
        for n in range(SESSIONS):  # the answers come back while every opinion call hangs
            reply = await clients[n % 2].chat(
                QUESTIONS[n % len(QUESTIONS)], session_id=f"op-{n}", rpc_timeout=20
            )
            sessions.append(reply.session_id)
    # Each replica's opinion worker takes one job at a time: one hanging call each.
    await wait_for(lambda: len(fake.requests) >= 2, 30, "both replicas asked an opinion (and hang)")
    a.kill(signal.SIGKILL)  # its hanging call and its lease die with it
    switch.hang.clear()
    await a.start().wait_ready()  # releases the dead run's leases at start

    def all_written() -> bool:
        return all((self_evaluation(mariadb_url, sid) or {}).get("llm_opinion") for sid in sessions)

    # b's hanging call ends at its timeout; the client's retry then answers.
    await wait_for(all_written, 60, "every SUCCESS has its opinion")
    jobs = db_rows(
        mariadb_url, "SELECT session_id, status FROM job WHERE kind = 'llm_opinion' ORDER BY session_id"
    )
    assert jobs == [(sid, "done") for sid in sorted(sessions)]  # one job per session, done
    writes = opinion_writes(a, b)
    assert all(writes[sid] == 1 for sid in sessions), writes  # written once, by one replica
    for sid in sessions:
        evaluation = self_evaluation(mariadb_url, sid) or {}
        rule = [f for f in evaluation["factors"] if f.get("source") != "llm"]
        assert sum(f["delta"] for f in rule) == evaluation["evidence_score"]
        assert evaluation["llm_opinion"]["prompt_version"] == "evaluator-v1"
    a.stop()
    b.stop()
