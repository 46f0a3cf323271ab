"""The `evigate` command: `serve` and `migrate` run the service; the others are a gRPC client.

Client commands print readable text by default and JSON with `--json`; any error prints one clear
line on stderr and exits non-zero (2 for usage, 1 for everything else).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import grpc

from evigate.server.cli import client, render, service
from evigate.server.cli.common import CliError


def build_parser() -> argparse.ArgumentParser:
    from evigate.server.settings_flags import add_flags

    parser = argparse.ArgumentParser(
        prog="evigate", description="Evidence-gated diagnosis service and client."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the gRPC server (flags override EVIGATE_* variables)")
    add_flags(serve)
    serve.add_argument(
        "--mcp",
        metavar="HOST:PORT",
        help="also serve MCP over streamable HTTP at /mcp (PORT alone: loopback)",
    )
    serve.add_argument(
        "--mcp-allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call MCP besides loopback ones (repeatable)",
    )
    mcp = commands.add_parser("mcp", help="serve MCP over stdin/stdout for a desktop or IDE agent")
    add_flags(mcp)
    migrate = commands.add_parser("migrate", help="create or upgrade the database schema")
    add_flags(migrate)
    worker = commands.add_parser("worker", help="run only the evidence-score worker (no gRPC server)")
    add_flags(worker)
    jobs = commands.add_parser("jobs", help="show the evaluation queue, read from --database-url")
    add_flags(jobs)
    jobs.add_argument("--json", action="store_true", help="print JSON for scripts")
    sources = commands.add_parser(
        "sources", help="check the live Prometheus / Alertmanager: ready or UNREACHABLE, version"
    )
    add_flags(sources)
    sources.add_argument("--json", action="store_true", help="print JSON for scripts")

    chat = commands.add_parser("chat", help="ask a question")
    chat.add_argument("query")
    chat.add_argument(
        "--lang", default="", choices=["zh", "en"], help="answer language (default: the question's)"
    )
    chat.add_argument("--stream", action="store_true", help="show each stage as it happens")
    chat.add_argument("--session-id", default="", help="choose the session id (repeating returns the result)")
    trace = commands.add_parser("trace", help="replay a session stage by stage")
    trace.add_argument("session")
    feedback = commands.add_parser("feedback", help="mark an answer useful or not useful")
    feedback.add_argument("session")
    feedback.add_argument("value", choices=["useful", "not_useful"])
    sessions = commands.add_parser("sessions", help="list sessions, newest first")
    sessions.add_argument("--feedback", choices=["useful", "not_useful"])
    sessions.add_argument(
        "--status",
        choices=["running", "success", "failed", "agent", "RUNNING", "SUCCESS", "FAILED", "AGENT"],
    )
    sessions.add_argument("--limit", type=int, default=20)
    sessions.add_argument("--page-token", default="")
    cases = commands.add_parser("cases", help="list the case library's cases with their structure")
    cases.add_argument("--category", help="only this fault category, e.g. connection-pool")
    cases.add_argument("--service", help="only cases naming this service")
    cases.add_argument(
        "--error-code", help="only this error code, e.g. java.sql.SQLTransientConnectionException"
    )
    cases.add_argument("--all", action="store_true", help="also retired cases (marked not useful)")
    cases.add_argument("--limit", type=int, default=50)
    backfill = commands.add_parser(
        "cases-backfill", help="structure the GENERAL cases from their sessions' evidence (idempotent)"
    )
    add_flags(backfill)
    backfill.add_argument("--json", action="store_true", help="print JSON for scripts")
    check = commands.add_parser("check", help="check an executor_evidence_v2 JSON file against a session")
    check.add_argument("session")
    check.add_argument("file")
    for sub in (chat, trace, feedback, sessions, check, cases):
        client.flags(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "serve":
            return service.cmd_serve(args)
        if args.command == "mcp":
            return service.cmd_mcp(args)
        if args.command == "migrate":
            return service.cmd_migrate(args)
        if args.command == "worker":
            return service.cmd_worker(args)
        if args.command == "jobs":
            return service.cmd_jobs(args)
        if args.command == "sources":
            return service.cmd_sources(args)
        if args.command == "cases-backfill":
            return service.cmd_cases_backfill(args)
        with client.channel(args) as channel:
            return client.COMMANDS[args.command](args, channel)
    except CliError as error:
        sys.stderr.write(f"evigate: {error}\n")
        return 1
    except grpc.RpcError as error:
        sys.stderr.write(f"evigate: {render.rpc_error(error, args)}\n")
        return 1
    except OSError as error:
        sys.stderr.write(f"evigate: {error}\n")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
