"""Every question family through gRPC on the second world: an in-process App serving
`--data-dir tests/worlds/tidewater` (offline agents, SQLite), a few labelled questions per family,
each judged by the same code as the pipeline set (tests/worlds/judge.py)."""

from __future__ import annotations

from collections import defaultdict

import grpc

from evigate.server.codec.emit import to_seed
from evigate.server.pipeline.events import ChatResult
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, session_pb2
from tests.server.conftest import AppFactory
from tests.worlds.judge import FAMILIES, WORLDS, Question, judge, questions

PER_FAMILY = 2


def _sample() -> list[Question]:
    by_family: dict[str, list[Question]] = defaultdict(list)
    for q in questions("tidewater"):
        # one of each language first, so both reach the wire
        if len(by_family[q.family]) < PER_FAMILY and q.language not in {
            x.language for x in by_family[q.family]
        }:
            by_family[q.family].append(q)
    return [q for family in FAMILIES for q in by_family[family]]


async def test_every_family_through_grpc_on_the_second_world(app_factory: AppFactory) -> None:
    app = await app_factory(data_dir=WORLDS / "tidewater")
    assert app.database is not None
    sample = _sample()
    assert {q.family for q in sample} == set(FAMILIES)
    wrong = []
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        for q in sample:
            reply = await stub.Chat(
                chat_service_pb2.ChatRequest(query=q.query, language=q.language), timeout=60
            )
            seed = to_seed(reply)
            result = ChatResult(
                session_id=reply.session_id,
                status="SUCCESS" if reply.status == session_pb2.SESSION_STATUS_SUCCESS else "FAILED",
                answer=reply.answer,
                composer_output=None,
                verdict={"verdict": seed.get("verdict", {}).get("verdict")},
                gatekeeper_result=None,
                evidence=seed.get("evidence"),
                failure_reason=reply.failure_reason,
            )
            invocations = await app.database.repo.list_invocations(reply.session_id)
            j = judge(q, result, invocations)
            if not j.correct:
                wrong.append(f"{q.id}: {j.problems} {j.unsupported}\n{reply.answer}")
    assert not wrong, "\n".join(wrong)
