"""The sections of the service itself: the gRPC server, storage, security, limits and operations."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from evigate.server.settings.base import ConfigError, Section, positive, setting, split_host_port, web_address

STATE_DIR_NAME = ".evigate"
LogFormat = Literal["json", "text"]


@dataclass(frozen=True)
class GrpcSettings(Section):
    listen: str = setting("127.0.0.1:50051", "HOST:PORT to serve on (default 127.0.0.1:50051)")
    max_message_bytes: int = setting(4 * 1024 * 1024)  # the largest reply (a trace can be large)
    # The largest request: a question is at most max_query_chars (4,000 characters, ≤ 16 KB) and a
    # Check at max_bindings and max_excerpt_chars 190 KB in UTF-8 Chinese, 250 KB in 4-byte UTF-8.
    max_request_bytes: int = setting(256 * 1024)
    max_concurrent_rpcs: int = setting(100)  # calls handled at once; more are RESOURCE_EXHAUSTED at once
    max_request_bytes_in_flight: int = setting(16 * 1024 * 1024)  # server.grpc.memory
    keepalive_time_s: float = setting(60.0)
    keepalive_timeout_s: float = setting(20.0)
    keepalive_min_ping_interval_s: float = setting(10.0)
    keepalive_permit_without_calls: bool = setting(False)
    grace_period_s: float = setting(10.0, "seconds in-flight calls get at shutdown (default 10)")
    shutdown_timeout_s: float = setting(
        10.0, "seconds background tasks and the database get after the grace period (default 10)"
    )
    trace_cache_ttl_s: float = setting(
        1.0, "seconds finished sessions' GetTrace replies are cached (0: off; default 1)"
    )
    instance_name: str = setting("")  # empty: <hostname>:<listen port>; owns this process's RUNNING sessions

    @property
    def owner(self) -> str:
        """This process's identity for orphaned-session recovery: stable across restarts, distinct
        for two processes on one host (a shared hostname alone would let one fail the other's)."""
        if self.instance_name:
            return self.instance_name
        return f"{socket.gethostname()}:{split_host_port(self.listen)[1]}"

    def validate(self) -> None:
        split_host_port(self.listen)
        positive(self, "max_message_bytes", "max_request_bytes", "max_concurrent_rpcs")
        positive(self, "max_request_bytes_in_flight", "shutdown_timeout_s")
        if self.trace_cache_ttl_s < 0:
            raise ConfigError("trace_cache_ttl_s must be ≥ 0")
        if self.grace_period_s < 0:
            raise ConfigError("grace_period_s must be ≥ 0 and health_check_interval_s > 0")


@dataclass(frozen=True)
class StorageSettings(Section):
    state_dir: Path = setting(
        lambda: Path.cwd() / STATE_DIR_NAME, "folder of the default SQLite file (default ./.evigate)"
    )
    database_url: str = setting(
        "", "SQLAlchemy URL (default: SQLite file in --state-dir, migrated automatically)"
    )
    db_pool_size: int = setting(10)
    db_timeout_s: float = setting(10.0)  # connect, statement and transaction timeout; then fail fast
    health_check_interval_s: float = setting(2.0)

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.state_dir / 'evigate.db'}"

    def validate(self) -> None:
        positive(self, "db_timeout_s")
        if self.health_check_interval_s <= 0:
            raise ConfigError("grace_period_s must be ≥ 0 and health_check_interval_s > 0")


@dataclass(frozen=True)
class AuthSettings(Section):
    PREFIX = "auth_"
    tokens: tuple[str, ...] = setting((), secret=True)
    tokens_file: Path | None = setting(None, "bearer tokens, one per line (or EVIGATE_AUTH_TOKENS=a,b)")
    exempt_health: bool = setting(True)

    @property
    def enabled(self) -> bool:
        return bool(self.tokens)


@dataclass(frozen=True)
class TlsSettings(Section):
    PREFIX = "tls_"
    cert: Path | None = setting(None, "PEM server certificate (with --tls-key)")
    key: Path | None = setting(None)
    # set: mutual TLS, clients must present a certificate
    client_ca: Path | None = setting(
        None, "PEM CA for mutual TLS: clients must present a certificate it signed"
    )

    @property
    def enabled(self) -> bool:
        return self.cert is not None

    def validate(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ConfigError("tls_cert and tls_key go together")
        if self.client_ca is not None and self.cert is None:
            raise ConfigError("tls_client_ca (mutual TLS) needs tls_cert and tls_key")


@dataclass(frozen=True)
class LimitSettings(Section):
    """The request limits."""

    PREFIX = "max_"
    query_chars: int = setting(4000)
    claims: int = setting(32)
    bindings: int = setting(256)  # per request, all claims together
    excerpt_chars: int = setting(60_000)  # per Check, all bindings together (see max_request_bytes)

    def validate(self) -> None:
        positive(self, "query_chars", "claims", "bindings", "excerpt_chars")


@dataclass(frozen=True)
class MetricsSettings(Section):
    PREFIX = "metrics_"
    port: int = setting(0, "Prometheus /metrics port (0: off)")
    host: str = setting("127.0.0.1")

    def validate(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError("metrics_port must be 0..65535")


@dataclass(frozen=True)
class WebSettings(Section):
    address: str = setting(
        "", "HOST:PORT of the browser trace viewer, e.g. 127.0.0.1:8080 (default: off)", name="web"
    )

    def validate(self) -> None:
        if self.address:
            web_address(self.address)


@dataclass(frozen=True)
class LoggingSettings(Section):
    PREFIX = "log_"
    level: str = setting("INFO")
    format: LogFormat = setting("json", "json (default) or text")

    def validate(self) -> None:
        if self.format not in get_args(LogFormat):
            raise ConfigError(f"log_format: expected json or text, got {self.format!r}")


@dataclass(frozen=True)
class WorkerSettings(Section):
    """The evaluation worker (run by the worker module when enabled)."""

    PREFIX = "worker_"
    enabled: bool = setting(True)
    lease_s: float = setting(30.0)
    poll_interval_s: float = setting(0.5)
    batch_size: int = setting(16)
    max_attempts: int = setting(5)
    retry_delay_s: float = setting(2.0)  # doubled after every failed attempt

    def validate(self) -> None:
        positive(self, "batch_size", "max_attempts")
