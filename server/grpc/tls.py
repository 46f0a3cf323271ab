"""The gRPC server's TLS credentials from the settings, with the files checked first: grpc itself
only reports a failure to bind the port."""

from __future__ import annotations

import ssl
from pathlib import Path

import grpc

from evigate.server.settings import ConfigError, Settings


def check_tls_files(cert: Path, key: Path, client_ca: Path | None) -> None:
    """Names the file that is wrong and how; grpc only reports a failure to bind the port."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    for setting, path, marker, kind in (
        ("tls_cert", cert, b"-----BEGIN CERTIFICATE-----", "a PEM certificate"),
        ("tls_key", key, b"PRIVATE KEY-----", "a PEM private key"),
        ("tls_client_ca", client_ca, b"-----BEGIN CERTIFICATE-----", "a PEM CA certificate"),
    ):
        if path is None:
            continue
        try:
            content = path.read_bytes()
        except OSError as error:
            raise ConfigError(f"{setting} {path}: cannot read it ({error.strerror})") from None
        if marker not in content:
            raise ConfigError(f"{setting} {path}: not {kind}")
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as error:
        if error.reason == "KEY_VALUES_MISMATCH":
            raise ConfigError(
                f"tls_key {key} does not match tls_cert {cert}: it is not that certificate's private key"
            ) from None
        raise ConfigError(f"tls_cert {cert} / tls_key {key}: {error.reason or error}") from None
    if client_ca is not None:
        try:
            context.load_verify_locations(cafile=client_ca)
        except ssl.SSLError as error:
            raise ConfigError(f"tls_client_ca {client_ca}: {error.reason or error}") from None


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if settings.tls.cert is None or settings.tls.key is None:
        return None
    check_tls_files(settings.tls.cert, settings.tls.key, settings.tls.client_ca)
    client_ca = settings.tls.client_ca.read_bytes() if settings.tls.client_ca else None
    return grpc.ssl_server_credentials(
        [(settings.tls.key.read_bytes(), settings.tls.cert.read_bytes())],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )
