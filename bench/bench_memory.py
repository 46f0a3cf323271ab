"""Peak RSS of one server process under bursts of maximum-size requests.

Run: .venv/bin/python bench/bench_memory.py [--concurrency 200] [--rounds 3] [-- SERVER FLAGS]

Starts `python -m server` on a fresh SQLite file, then, for each kind of request, resets the
process's peak RSS (/proc/PID/clear_refs), sends `rounds` bursts of `concurrency` calls at once over
8 connections and reads the peak (VmHWM) and the RSS after the bursts. Kinds: a Chat whose query
fills the receive limit (refused by validation), a Gatekeeper Check of one real session at its
limits (256 bindings, max_excerpt_chars of Chinese excerpts: judged), a Check whose excerpts fill
the receive limit (refused by validation) and a 4 MiB Chat (over the limit). The server hands freed
memory back once quiet (server.grpc.memory), so the RSS a second after a kind is what it keeps.
Server flags after `--` are passed on, e.g. `-- --max-request-bytes
4194304 --max-concurrent-rpcs 100000` to measure the old behaviour. Target: peak under 300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.settings import Settings
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    evidence_pb2,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
)
from tests.reliability.procs import ServerProc

CHANNELS = 8
SETTLE_S = 1.0
QUESTION = "Does payment-service have a HighCPUUsage alert right now?"
MB = 1024 * 1024


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} in /proc/{pid}/status")


def _reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # "5": reset the peak RSS (VmHWM)


def _chat(size: int) -> chat_service_pb2.ChatRequest:
    return chat_service_pb2.ChatRequest(query="x" * (size - 64), language="en")


def _check(session_id: str, excerpt_chars: int, size: int) -> gatekeeper_service_pb2.CheckRequest:
    """256 bindings (the default max_bindings) whose UTF-8 Chinese excerpts hold `excerpt_chars`
    characters in all, the request kept under `size` bytes."""
    chars = excerpt_chars // 256
    while True:
        binding = evidence_pb2.EvidenceBinding(
            tool_name="query_logs",
            source_invocation_id=1,
            raw_path="$.logs[0]",
            evidence_excerpt="耗" * chars,
        )
        claim = evidence_pb2.Claim(claim_id="claim-1", claim_text="x", evidence_bindings=[binding] * 256)
        evidence = evidence_pb2.ExecutorEvidence(answer_version="executor_evidence_v2", claims=[claim])
        request = gatekeeper_service_pb2.CheckRequest(session_id=session_id, evidence=evidence)
        if request.ByteSize() <= size - 64 or chars == 1:
            return request
        chars -= 1


async def _burst(
    call: Callable[..., Any], request: Any, concurrency: int, codes: collections.Counter[str]
) -> None:
    async def one() -> None:
        try:
            await call(request, timeout=60)
            codes["OK"] += 1
        except grpc.aio.AioRpcError as error:
            codes[error.code().name] += 1

    await asyncio.gather(*(one() for _ in range(concurrency)))


async def run(args: argparse.Namespace, server_flags: list[str]) -> None:
    limit = args.request_bytes
    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    server = ServerProc(work, f"sqlite+aiosqlite:///{work / 'evigate.db'}", args=server_flags)
    server.start(args=["--log-level", "WARNING"])
    try:
        await server.wait_ready()
        assert server.proc is not None
        pid = server.proc.pid
        channels = [
            grpc.aio.insecure_channel(server.address, options=[("grpc.max_send_message_length", 8 * MB)])
            for _ in range(CHANNELS)
        ]
        session = await chat_service_pb2_grpc.ChatServiceStub(channels[0]).Chat(
            chat_service_pb2.ChatRequest(query=QUESTION, language="en"), timeout=60
        )
        idle = _status_kb(pid, "VmRSS") / 1024
        excerpts = Settings().limits.excerpt_chars
        kinds: list[tuple[str, str, Any]] = [
            ("Chat at the limit", "chat", _chat(limit)),
            ("Check at the limits", "check", _check(session.session_id, excerpts, limit)),
            ("Check, long excerpts", "check", _check(session.session_id, 4 * limit, limit)),
            ("Chat of 4 MiB", "chat", _chat(4 * MB)),
        ]
        found = [figures.Figure("idle RSS of the server", f"{idle:.0f} MB")]
        print(
            f"server idle RSS {idle:.0f} MB; receive limit {limit / MB:g} MiB; "
            f"{args.concurrency} calls per burst"
        )
        print(
            f"{'request':<20} {'bytes':>9} {'calls':>6} {'peak RSS MB':>12} {'RSS after MB':>13} "
            f"{'1 s later':>10}  codes"
        )
        for label, service, request in kinds:
            _reset_peak(pid)
            codes: collections.Counter[str] = collections.Counter()
            for _ in range(args.rounds):
                per_channel = max(1, args.concurrency // CHANNELS)
                bursts = []
                for channel in channels:
                    if service == "chat":
                        call = chat_service_pb2_grpc.ChatServiceStub(channel).Chat
                    else:
                        call = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel).Check
                    bursts.append(_burst(call, request, per_channel, codes))
                await asyncio.gather(*bursts)
            peak = _status_kb(pid, "VmHWM") / 1024
            after = _status_kb(pid, "VmRSS") / 1024
            await asyncio.sleep(SETTLE_S)  # the trim runs once the server is quiet
            settled = _status_kb(pid, "VmRSS") / 1024
            shown = ", ".join(f"{code} {n}" for code, n in sorted(codes.items()))
            print(
                f"{label:<20} {request.ByteSize():>9,} {sum(codes.values()):>6} "
                f"{peak:>12.0f} {after:>13.0f} {settled:>10.0f}  {shown}"
            )
            rss = f"peak {peak:.0f} MB, {settled:.0f} MB a second after ({shown})"
            found.append(figures.Figure(f"{label}, {args.rounds} bursts of {args.concurrency} calls", rss))
        for channel in channels:
            await channel.close()
        what = "peak RSS of one server under bursts of maximum-size requests (default flags)"
        figures.write(args.json, "bench_memory", what, found)
    finally:
        server.stop()


def main() -> None:
    argv = sys.argv[1:]
    server_flags = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--concurrency", type=int, default=200, help="calls per burst (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="bursts per kind of request (default 3)")
    parser.add_argument(
        "--request-bytes",
        type=int,
        default=Settings().grpc.max_request_bytes,
        help="size of the at-the-limit requests (default: the server's default receive limit)",
    )
    figures.add_json_flag(parser)
    asyncio.run(run(parser.parse_args(own), server_flags))


if __name__ == "__main__":
    main()
