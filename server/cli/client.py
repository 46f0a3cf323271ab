"""The gRPC client commands: chat, trace, feedback, sessions, check. Readable text by default,
JSON with --json."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import grpc
from google.protobuf.message import Message

from evigate.server.cli import render
from evigate.server.cli.common import DEFAULT_TARGET, CliError
from evigate.server.codec import CodecError, from_seed, to_seed
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


def channel(args: argparse.Namespace) -> grpc.Channel:
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
        "agent": session_pb2.SESSION_STATUS_AGENT,
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


def _cmd_cases(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    response = stub.ListCases(
        trace_service_pb2.ListCasesRequest(
            fault_category=args.category or "",
            service=args.service or "",
            error_code=args.error_code or "",
            include_retired=args.all,
            page_size=args.limit,
        ),
        metadata=_metadata(args),
        timeout=args.timeout,
    )
    _emit(args, response, render.cases, sys.stdout)
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


COMMANDS: dict[str, Callable[[argparse.Namespace, grpc.Channel], int]] = {
    "chat": _cmd_chat,
    "trace": _cmd_trace,
    "feedback": _cmd_feedback,
    "sessions": _cmd_sessions,
    "check": _cmd_check,
    "cases": _cmd_cases,
}


def flags(parser: argparse.ArgumentParser) -> None:
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
