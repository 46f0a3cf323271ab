"""The `evigate` command: `serve` and `migrate` run the service; the others are a gRPC client.

Client commands print readable text by default and JSON with `--json`; any error prints one clear
line on stderr and exits non-zero (2 for usage, 1 for everything else).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import grpc
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    evidence_pb2,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from google.protobuf.message import Message

from server import cli_render as render
from server.codec import CodecError, from_seed, to_seed
from server.config import mask_url
from storage.errors import StorageError

DEFAULT_TARGET = "127.0.0.1:50051"


class CliError(Exception):
    """A message for the user; exit status 1."""


# ------------------------------------------------------------------------------------------------
# server side


def _cmd_serve(args: argparse.Namespace) -> int:
    from server.app import App, serve
    from server.config import ConfigError, load_settings
    from server.grpc import logs

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    logs.configure(settings.log_level, settings.log_format)
    import logging

    logging.getLogger("evigate.config").info("settings", extra={"settings": settings.describe()})

    def announce(app: App) -> None:
        scheme = "grpcs" if settings.tls_enabled else "grpc"
        print(f"evigate serving on {scheme}://{app.address}", flush=True)

    async def main() -> None:
        await serve(settings, announce)

    from storage.errors import StorageError

    try:
        asyncio.run(main())
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    except (OSError, StorageError) as error:
        raise CliError(f"cannot start: {error}") from None
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from server.config import ConfigError, load_settings
    from storage import migrate

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    if not settings.database_url:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(migrate(settings.resolved_database_url))
    from server.config import mask_url

    print(f"migrated {mask_url(settings.resolved_database_url)} to the latest schema")
    return 0


def _cmd_worker(args: argparse.Namespace) -> int:
    from server.config import ConfigError, load_settings
    from server.grpc import logs
    from server.worker import run_standalone

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    logs.configure(settings.log_level, settings.log_format)
    print(f"evigate worker on {mask_url(settings.resolved_database_url)}", flush=True)
    try:
        asyncio.run(run_standalone(settings))
    except StorageError as error:
        raise CliError(f"cannot run the worker: {error}") from None
    return 0


def _cmd_jobs(args: argparse.Namespace) -> int:
    """Reads the queue straight from the database (`--database-url`): it works with no server up."""
    import dataclasses

    from server.config import ConfigError, load_settings
    from server.worker import format_stats, read_stats

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    from server.grpc import logs

    logs.configure("ERROR", "text")  # retry warnings would drown the answer
    try:
        stats = asyncio.run(read_stats(settings))
    except StorageError as error:
        raise CliError(f"cannot read the job queue: {error}") from None
    if args.json:
        print(json.dumps(dataclasses.asdict(stats)))
    else:
        print(format_stats(stats))
    return 0


# ------------------------------------------------------------------------------------------------
# client side


def _channel(args: argparse.Namespace) -> grpc.Channel:
    target = args.target or os.environ.get("EVIGATE_TARGET") or DEFAULT_TARGET
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    if args.tls or args.ca or args.cert:
        ca = Path(args.ca).read_bytes() if args.ca else None
        key = Path(args.key).read_bytes() if args.key else None
        cert = Path(args.cert).read_bytes() if args.cert else None
        credentials = grpc.ssl_channel_credentials(ca, key, cert)
        if args.server_name:
            options.append(("grpc.ssl_target_name_override", args.server_name))
        return grpc.secure_channel(target, credentials, options=options)
    return grpc.insecure_channel(target, options=options)


def _metadata(args: argparse.Namespace) -> list[tuple[str, str]]:
    token = args.token or os.environ.get("EVIGATE_TOKEN")
    return [("authorization", f"Bearer {token}")] if token else []


def _emit(args: argparse.Namespace, message: Message, readable: Callable[[Any], str], out: TextIO) -> None:
    if args.json:
        out.write(json.dumps(to_seed(message), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(readable(message) + "\n")


def _cmd_chat(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = chat_service_pb2_grpc.ChatServiceStub(channel)
    meta = _metadata(args)
    if args.stream:
        request = chat_service_pb2.StreamChatRequest(
            query=args.query, session_id=args.session_id, language=args.lang
        )
        for event in stub.StreamChat(request, metadata=meta, timeout=args.timeout):
            if args.json:
                sys.stdout.write(json.dumps(to_seed(event), ensure_ascii=False) + "\n")
            else:
                sys.stdout.write(render.stage_event(event) + "\n")
            sys.stdout.flush()
        return 0
    response = stub.Chat(
        chat_service_pb2.ChatRequest(query=args.query, session_id=args.session_id, language=args.lang),
        metadata=meta,
        timeout=args.timeout,
    )
    _emit(args, response, render.chat_response, sys.stdout)
    return 0 if response.status == session_pb2.SESSION_STATUS_SUCCESS else 1


def _cmd_trace(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    response = stub.GetTrace(
        trace_service_pb2.GetTraceRequest(session_id=args.session),
        metadata=_metadata(args),
        timeout=args.timeout,
    )
    _emit(args, response, lambda r: render.trace(r.trace), sys.stdout)
    return 0


def _cmd_feedback(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    value = {"useful": session_pb2.FEEDBACK_USEFUL, "not_useful": session_pb2.FEEDBACK_NOT_USEFUL}[args.value]
    response = stub.SubmitFeedback(
        feedback_service_pb2.SubmitFeedbackRequest(session_id=args.session, feedback=value),
        metadata=_metadata(args),
        timeout=args.timeout,
    )
    _emit(args, response, render.feedback, sys.stdout)
    return 0


def _cmd_sessions(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    feedback = {None: 0, "useful": session_pb2.FEEDBACK_USEFUL, "not_useful": session_pb2.FEEDBACK_NOT_USEFUL}
    status = {
        None: 0,
        "running": session_pb2.SESSION_STATUS_RUNNING,
        "success": session_pb2.SESSION_STATUS_SUCCESS,
        "failed": session_pb2.SESSION_STATUS_FAILED,
    }
    response = stub.ListSessions(
        trace_service_pb2.ListSessionsRequest(
            feedback=feedback[args.feedback],  # type: ignore[arg-type]
            status=status[args.status.lower() if args.status else None],  # type: ignore[arg-type]
            page_size=args.limit,
            page_token=args.page_token,
        ),
        metadata=_metadata(args),
        timeout=args.timeout,
    )
    _emit(args, response, render.sessions, sys.stdout)
    return 0


def _cmd_check(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CliError(f"cannot read {args.file}: {error}") from None
    try:
        evidence = from_seed(evidence_pb2.ExecutorEvidence, data)
    except CodecError as error:
        raise CliError(f"{args.file} is not an executor_evidence_v2 document: {error}") from None
    stub = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
    response = stub.Check(
        gatekeeper_service_pb2.CheckRequest(session_id=args.session, evidence=evidence),
        metadata=_metadata(args),
        timeout=args.timeout,
    )
    _emit(args, response, lambda r: render.gatekeeper(r.result), sys.stdout)
    return 0


CLIENT_COMMANDS: dict[str, Callable[[argparse.Namespace, grpc.Channel], int]] = {
    "chat": _cmd_chat,
    "trace": _cmd_trace,
    "feedback": _cmd_feedback,
    "sessions": _cmd_sessions,
    "check": _cmd_check,
}


def _client_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection")
    group.add_argument("--target", help=f"server HOST:PORT (env EVIGATE_TARGET; default {DEFAULT_TARGET})")
    group.add_argument("--token", help="bearer token (env EVIGATE_TOKEN)")
    group.add_argument("--tls", action="store_true", help="use TLS with the system's CA certificates")
    group.add_argument("--ca", help="CA certificate (PEM) to verify the server with; implies --tls")
    group.add_argument("--cert", help="client certificate (PEM) for mutual TLS")
    group.add_argument("--key", help="client private key (PEM) for mutual TLS")
    group.add_argument("--server-name", help="expected server name in its certificate")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def build_parser() -> argparse.ArgumentParser:
    from server.config import add_flags

    parser = argparse.ArgumentParser(
        prog="evigate", description="Evidence-gated diagnosis service and client."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the gRPC server (flags override EVIGATE_* variables)")
    add_flags(serve)
    migrate = commands.add_parser("migrate", help="create or upgrade the database schema")
    add_flags(migrate)
    worker = commands.add_parser("worker", help="run only the evidence-score worker (no gRPC server)")
    add_flags(worker)
    jobs = commands.add_parser("jobs", help="show the evaluation queue, read from --database-url")
    add_flags(jobs)
    jobs.add_argument("--json", action="store_true", help="print JSON for scripts")

    chat = commands.add_parser("chat", help="ask a question")
    chat.add_argument("query")
    chat.add_argument("--lang", default="", choices=["zh", "en"], help="answer language (default zh)")
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
        "--status", choices=["running", "success", "failed", "RUNNING", "SUCCESS", "FAILED"]
    )
    sessions.add_argument("--limit", type=int, default=20)
    sessions.add_argument("--page-token", default="")
    check = commands.add_parser("check", help="check an executor_evidence_v2 JSON file against a session")
    check.add_argument("session")
    check.add_argument("file")
    for sub in (chat, trace, feedback, sessions, check):
        _client_flags(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "serve":
            return _cmd_serve(args)
        if args.command == "migrate":
            return _cmd_migrate(args)
        if args.command == "worker":
            return _cmd_worker(args)
        if args.command == "jobs":
            return _cmd_jobs(args)
        with _channel(args) as channel:
            return CLIENT_COMMANDS[args.command](args, channel)
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
