"""MCP overhead benchmark: a `diagnose` over MCP streamable HTTP against the same Chat over gRPC.

One service in this process (the demo world, offline agents, SQLite, `serve --mcp` as the CLI
starts it); one gRPC channel and one MCP client session, each reused as a client would. The
calls alternate (gRPC, MCP, gRPC, …) so both see the same load. Two figures per transport:
- a fresh question (a new session id each call: the whole pipeline runs), the figure the target
  is about (MCP p50 within 1.2× of gRPC p50);
- a finished session's id again (the stored answer read back): nearly all of it is transport and
  presentation, so it shows the overhead itself.

    python bench/bench_mcp.py [--repeat 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.app import App, Components
from evigate.server.mcp_setup import McpOptions
from evigate.server.settings import Settings
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, session_pb2

QUESTION = "payment-service 现在有 HighCPUUsage 告警吗？"
TIMEOUT_S = 120.0
LABELS = ("in-sample", "warm")  # the demo world the offline agents were written on; after warm-up calls


def _summary(times: list[float]) -> tuple[float, float]:
    return statistics.median(times) * 1000, max(times) * 1000


async def main(repeat: int) -> tuple[list[figures.Figure], dict[str, list[float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.of(
            listen="127.0.0.1:0", state_dir=Path(tmp) / "state", log_format="text", log_level="WARNING"
        )
        app = App(settings, Components(mcp=McpOptions("127.0.0.1:0")))
        await app.start()
        try:
            assert app.mcp is not None
            times: dict[str, list[float]] = {k: [] for k in ("grpc", "mcp", "grpc_stored", "mcp_stored")}
            async with (
                grpc.aio.insecure_channel(app.address) as channel,
                httpx2.AsyncClient(timeout=TIMEOUT_S) as http,
                streamable_http_client(app.mcp.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                stub = chat_service_pb2_grpc.ChatServiceStub(channel)

                async def chat(sid: str) -> None:
                    request = chat_service_pb2.ChatRequest(query=QUESTION, session_id=sid)
                    reply = await stub.Chat(request, timeout=TIMEOUT_S)
                    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason

                async def diagnose(sid: str) -> None:
                    result = await session.call_tool("diagnose", {"question": QUESTION, "session_id": sid})
                    assert not result.is_error, result.content

                for warmup in ("warm-grpc", "warm-mcp"):  # first calls load caches either way
                    await (chat if warmup == "warm-grpc" else diagnose)(warmup)
                for round_name in ("", "_stored"):  # the stored round asks the same ids again
                    for i in range(repeat):
                        started = time.perf_counter()
                        await chat(f"bench-grpc-{i}")
                        times[f"grpc{round_name}"].append(time.perf_counter() - started)
                        started = time.perf_counter()
                        await diagnose(f"bench-mcp-{i}")
                        times[f"mcp{round_name}"].append(time.perf_counter() - started)
        finally:
            await app.stop(grace=0)
    found = []
    for kind, label in (("", "fresh question (pipeline runs)"), ("_stored", "finished session read back")):
        grpc_p50, grpc_max = _summary(times[f"grpc{kind}"])
        mcp_p50, mcp_max = _summary(times[f"mcp{kind}"])
        ratio = mcp_p50 / grpc_p50
        print(f"{label}: gRPC Chat p50 {grpc_p50:.1f} ms (max {grpc_max:.1f}); "
              f"MCP diagnose p50 {mcp_p50:.1f} ms (max {mcp_max:.1f}); MCP / gRPC {ratio:.2f}x")  # fmt: skip
        found += [
            figures.Figure(f"{label}: gRPC Chat p50 / max", f"{grpc_p50:.1f} / {grpc_max:.1f} ms", *LABELS),
            figures.Figure(f"{label}: MCP diagnose p50 / max", f"{mcp_p50:.1f} / {mcp_max:.1f} ms", *LABELS),
            figures.Figure(f"{label}: MCP / gRPC (p50)", f"{ratio:.2f}x", *LABELS),
        ]
    return found, times


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    figures.add_json_flag(parser)
    options = parser.parse_args()
    found, raw = asyncio.run(main(options.repeat))
    what = f"MCP diagnose over HTTP vs gRPC Chat (demo question, offline agents), {options.repeat} calls each"
    figures.write(options.json, "bench_mcp", what, found, raw)
