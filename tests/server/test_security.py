"""Bearer-token auth (on and off, health exemption) and TLS / mutual TLS from PEM files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.settings import load_settings
from evigate.v1 import trace_service_pb2, trace_service_pb2_grpc
from tests.server.certs import Certs, make_certs
from tests.server.conftest import VENV_BIN, AppFactory, slow_agents
from tests.support.server_proc import free_port

TOKENS = ("tok-alpha", "tok-beta")
LIST = trace_service_pb2.ListSessionsRequest()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


async def _list(channel: grpc.aio.Channel, token: str | None = None) -> grpc.StatusCode:
    metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
    try:
        await trace_service_pb2_grpc.TraceServiceStub(channel).ListSessions(
            LIST, metadata=metadata, timeout=10
        )
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def _health(channel: grpc.aio.Channel) -> grpc.StatusCode:
    try:
        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def test_without_tokens_auth_is_off(app_factory: AppFactory) -> None:
    app = await app_factory()
    async with grpc.aio.insecure_channel(app.address) as channel:
        assert await _list(channel) == grpc.StatusCode.OK
        assert await _list(channel, "anything") == grpc.StatusCode.OK


async def test_with_tokens_a_call_needs_a_valid_one_and_never_reaches_a_handler(
    app_factory: AppFactory,
) -> None:
    agents, planner = slow_agents()
    app = await app_factory(agents=agents, auth_tokens=TOKENS)
    async with grpc.aio.insecure_channel(app.address) as channel:
        assert await _list(channel) == grpc.StatusCode.UNAUTHENTICATED
        assert await _list(channel, "tok-wrong") == grpc.StatusCode.UNAUTHENTICATED
        assert await _list(channel, "") == grpc.StatusCode.UNAUTHENTICATED
        assert await _list(channel, "tok-beta") == grpc.StatusCode.OK
        from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc

        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.Chat(chat_service_pb2.ChatRequest(query="payment-service HighCPUUsage?"), timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in stub.StreamChat(chat_service_pb2.StreamChatRequest(query="q"), timeout=10):
                pass
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert planner.calls == 0
        assert await _health(channel) == grpc.StatusCode.OK  # exempt by default


async def test_health_can_require_a_token(app_factory: AppFactory) -> None:
    app = await app_factory(auth_tokens=TOKENS, auth_exempt_health=False)
    async with grpc.aio.insecure_channel(app.address) as channel:
        assert await _health(channel) == grpc.StatusCode.UNAUTHENTICATED


def test_tokens_come_from_a_file_or_the_environment(tmp_path: Path) -> None:
    token_file = tmp_path / "tokens"
    token_file.write_text("# ops\nfile-token\n\n")
    settings = load_settings({"auth_tokens_file": str(token_file)}, {"EVIGATE_AUTH_TOKENS": "env-1,env-2"})
    assert settings.auth.tokens == ("env-1", "env-2", "file-token")
    described = settings.describe()
    assert "file-token" not in str(described) and "env-1" not in str(described)


async def test_tls(app_factory: AppFactory, certs: Certs) -> None:
    app = await app_factory(tls_cert=certs.server_cert, tls_key=certs.server_key)
    credentials = grpc.ssl_channel_credentials(certs.ca.read_bytes())
    async with grpc.aio.secure_channel(app.address, credentials) as channel:
        assert await _list(channel) == grpc.StatusCode.OK
    untrusted = grpc.ssl_channel_credentials(certs.other_ca.read_bytes())
    async with grpc.aio.secure_channel(app.address, untrusted) as channel:
        assert await _list(channel) == grpc.StatusCode.UNAVAILABLE
    async with grpc.aio.insecure_channel(app.address) as channel:
        assert await _list(channel) == grpc.StatusCode.UNAVAILABLE


async def test_mutual_tls_requires_a_client_certificate(app_factory: AppFactory, certs: Certs) -> None:
    app = await app_factory(
        tls_cert=certs.server_cert, tls_key=certs.server_key, tls_client_ca=certs.ca, auth_tokens=TOKENS
    )
    with_client = grpc.ssl_channel_credentials(
        certs.ca.read_bytes(), certs.client_key.read_bytes(), certs.client_cert.read_bytes()
    )
    async with grpc.aio.secure_channel(app.address, with_client) as channel:
        assert await _list(channel, "tok-alpha") == grpc.StatusCode.OK
        assert await _list(channel) == grpc.StatusCode.UNAUTHENTICATED
    without_client = grpc.ssl_channel_credentials(certs.ca.read_bytes())
    async with grpc.aio.secure_channel(app.address, without_client) as channel:
        assert await _list(channel, "tok-alpha") == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    ("files", "wrong"),
    [
        (
            {"tls_cert": "server_cert", "tls_key": "client_key"},
            "tls_key {client_key} does not match tls_cert",
        ),
        ({"tls_cert": "server_key", "tls_key": "server_key"}, "tls_cert {server_key}: not a PEM certificate"),
        (
            {"tls_cert": "server_cert", "tls_key": "server_cert"},
            "tls_key {server_cert}: not a PEM private key",
        ),
        (
            {"tls_cert": "server_cert", "tls_key": "server_key", "tls_client_ca": "client_key"},
            "tls_client_ca {client_key}: not a PEM CA certificate",
        ),
    ],
)
def test_a_wrong_tls_file_is_named_with_what_is_wrong(
    certs: Certs, tmp_path: Path, files: dict[str, str], wrong: str
) -> None:
    """Issue 19, item 11: not "cannot listen on …" but which file is wrong, and how."""
    flags = [
        arg
        for name, attr in files.items()
        for arg in (f"--{name.replace('_', '-')}", str(getattr(certs, attr)))
    ]
    result = subprocess.run(
        [
            str(VENV_BIN / "evigate"),
            "serve",
            "--listen",
            f"127.0.0.1:{free_port()}",
            "--state-dir",
            str(tmp_path),
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0 and "serving on" not in result.stdout
    expected = wrong.format(
        **{attr: getattr(certs, attr) for attr in ("client_key", "server_key", "server_cert")}
    )
    assert expected in result.stderr, result.stderr
    assert "cannot listen" not in result.stderr
