"""Typed settings of the live HTTP sources, built from flags, environment and a config-file section.

Precedence, per field: flag > `EVIGATE_<SOURCE>_URL`-style environment variable > the config file's
section for that source. A source without a URL is not configured (the bundled files stay in use).
Secrets never appear in `describe()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evigate.rules.errors import EvigateError
from evigate.server.config_document import ConfigDocumentError, read_document, section

from .clickhouse.clickhouse_config import ClickHouseConfig, ClickHouseConfigError, from_sources
from .kubernetes.cluster_config import ClusterConfig, ClusterConfigError, cluster_config

SOURCE_NAMES = ("prometheus", "alertmanager", "clickhouse", "kubernetes")


class SourceConfigError(EvigateError, ValueError):
    """A source's settings are malformed (reported at start-up, never at query time)."""


@dataclass(frozen=True)
class BasicAuth:
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class QueryLimits:
    """The PromQL guard's bounds (config-file keys of the prometheus section, same names)."""

    max_window_s: float = 7 * 86400
    max_points: int = 1100  # per series; Prometheus itself refuses more than 11,000
    min_step_s: float = 1.0
    max_series: int = 50
    max_query_chars: int = 4000

    def __post_init__(self) -> None:
        if (
            min(
                self.max_window_s, self.max_points - 1, self.min_step_s, self.max_series, self.max_query_chars
            )
            <= 0
        ):
            raise SourceConfigError("prometheus limits must be positive (max_points at least 2)")


@dataclass(frozen=True)
class SourceSettings:
    """How to reach one HTTP source."""

    name: str
    url: str
    connect_timeout_s: float = 2.0
    read_timeout_s: float = 10.0
    bearer_token: str | None = field(default=None, repr=False)
    basic_auth: BasicAuth | None = None
    ca_bundle: str | None = None  # a PEM file; None = the system's trust store
    insecure_skip_verify: bool = False

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise SourceConfigError(f"{self.name}: url must start with http:// or https://, got {self.url!r}")
        if self.connect_timeout_s <= 0 or self.read_timeout_s <= 0:
            raise SourceConfigError(f"{self.name}: timeouts must be positive")
        if self.bearer_token and self.basic_auth:
            raise SourceConfigError(f"{self.name}: set a bearer token or basic auth, not both")

    @property
    def base_url(self) -> str:
        return self.url.rstrip("/")

    def describe(self) -> dict[str, Any]:
        """The settings without secrets, for start-up logs and `evigate sources`."""
        auth = "bearer" if self.bearer_token else "basic" if self.basic_auth else "none"
        return {
            "url": self.base_url,
            "connect_timeout_s": self.connect_timeout_s,
            "read_timeout_s": self.read_timeout_s,
            "auth": auth,
            "ca_bundle": self.ca_bundle,
            "insecure_skip_verify": self.insecure_skip_verify,
        }


@dataclass(frozen=True)
class SourcesConfig:
    prometheus: SourceSettings | None = None
    alertmanager: SourceSettings | None = None
    prometheus_limits: QueryLimits = field(default_factory=QueryLimits)
    clickhouse: SourceSettings | None = None
    # Where the logs sit in that ClickHouse: table, columns (server/sources/clickhouse/clickhouse_config.py).
    clickhouse_logs: ClickHouseConfig | None = None
    # The cluster: a dump or an API server (server/sources/kubernetes/cluster_config.py).
    kubernetes: ClusterConfig | None = None

    def configured(self) -> list[SourceSettings | ClusterConfig]:
        """Each configured source's settings (a `name` and `describe()`), in the registry's order."""
        listed = (self.prometheus, self.alertmanager, self.clickhouse, self.kubernetes)
        return [s for s in listed if s is not None]

    def live(self) -> bool:
        """Whether a configured source speaks of now (a server), not only of a dump's moment."""
        return any(not isinstance(s, ClusterConfig) or s.live for s in self.configured())


def _float(name: str, key: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise SourceConfigError(f"{name}.{key}: expected a number, got {value!r}") from exc


def _token(name: str, section: Mapping[str, Any]) -> str | None:
    token = section.get("bearer_token")
    path = section.get("bearer_token_file")
    if token is not None and path is not None:
        raise SourceConfigError(f"{name}: set bearer_token or bearer_token_file, not both")
    if path is not None:
        try:
            # A token file (Kubernetes service-account style) keeps the secret out of the config.
            return Path(str(path)).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise SourceConfigError(f"{name}.bearer_token_file: {exc}") from exc
    return str(token) if token else None


def _basic(name: str, value: Any) -> BasicAuth | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("username"), str):
        raise SourceConfigError(f"{name}.basic_auth: expected {{username, password}}")
    return BasicAuth(value["username"], str(value.get("password", "")))


def source_settings(
    name: str,
    *,
    flag_url: str | None = None,
    env: Mapping[str, str] | None = None,
    section: Mapping[str, Any] | None = None,
) -> SourceSettings | None:
    """One source's settings; None when no URL is given anywhere."""
    env = env or {}
    section = dict(section or {})
    url = flag_url or env.get(f"EVIGATE_{name.upper()}_URL") or section.get("url")
    if not url:
        return None
    timeout = section.get("timeout_s")
    read = _float(name, "timeout_s", timeout) if timeout is not None else 10.0
    connect = section.get("connect_timeout_s")
    env_token = env.get(f"EVIGATE_{name.upper()}_BEARER_TOKEN")
    return SourceSettings(
        name=name,
        url=str(url),
        connect_timeout_s=_float(name, "connect_timeout_s", connect)
        if connect is not None
        else min(2.0, read),
        read_timeout_s=read,
        bearer_token=env_token or _token(name, section),
        basic_auth=_basic(name, section.get("basic_auth")),
        ca_bundle=str(section["ca_bundle"]) if section.get("ca_bundle") else None,
        insecure_skip_verify=bool(section.get("insecure_skip_verify", False)),
    )


def query_limits(section: Mapping[str, Any]) -> QueryLimits:
    defaults = QueryLimits()
    values: dict[str, Any] = {}
    for key in ("max_window_s", "max_points", "min_step_s", "max_series", "max_query_chars"):
        if key in section:
            number = _float("prometheus", key, section[key])
            values[key] = number if key.endswith("_s") else int(number)
    return QueryLimits(**{**defaults.__dict__, **values})


def read_sources_file(path: Path) -> Mapping[str, Any]:
    """The `sources` table of a configuration document (server/config_document.py: YAML, TOML or
    JSON by extension): `sources: {prometheus: {...}, ...}`."""
    try:
        return section(read_document(path), "sources", path)
    except ConfigDocumentError as exc:
        raise SourceConfigError(f"sources file {exc}") from exc


def sources_config(
    *,
    prometheus_url: str | None = None,
    alertmanager_url: str | None = None,
    clickhouse_url: str | None = None,
    env: Mapping[str, str] | None = None,
    file_sections: Mapping[str, Any] | None = None,
    cluster_flags: Mapping[str, Any] | None = None,
) -> SourcesConfig:
    """All sources from `--prometheus-url` / `--alertmanager-url` / `--clickhouse-url`, the cluster's
    flags (`dump`, `kubeconfig`, `context`, `in_cluster`, `namespaces`: kubernetes/cluster_config.py),
    the environment and the config file's `sources` mapping (`{"prometheus": {...}, "kubernetes": {...}}`)."""
    sections = dict(file_sections or {})
    unknown = sorted(set(sections) - set(SOURCE_NAMES))
    if unknown:
        raise SourceConfigError(f"unknown source section(s): {', '.join(unknown)}")
    for key, value in sections.items():
        if not isinstance(value, Mapping):
            raise SourceConfigError(f"{key}: expected a mapping of settings")
    clickhouse = source_settings(
        "clickhouse", flag_url=clickhouse_url, env=env, section=sections.get("clickhouse")
    )
    return SourcesConfig(
        prometheus_limits=query_limits(sections.get("prometheus") or {}),
        prometheus=source_settings(
            "prometheus", flag_url=prometheus_url, env=env, section=sections.get("prometheus")
        ),
        alertmanager=source_settings(
            "alertmanager", flag_url=alertmanager_url, env=env, section=sections.get("alertmanager")
        ),
        clickhouse=clickhouse,
        clickhouse_logs=_clickhouse_logs(clickhouse, sections.get("clickhouse") or {}),
        kubernetes=_cluster(cluster_flags or {}, sections.get("kubernetes") or {}),
    )


def _cluster(flags: Mapping[str, Any], section: Mapping[str, Any]) -> ClusterConfig | None:
    try:
        return cluster_config(**flags, section=section)
    except ClusterConfigError as error:
        raise SourceConfigError(str(error)) from None


def _clickhouse_logs(settings: SourceSettings | None, section: Mapping[str, Any]) -> ClickHouseConfig | None:
    if settings is None:
        return None
    try:
        return from_sources(settings.base_url, settings.read_timeout_s, settings.basic_auth, section)
    except ClickHouseConfigError as error:
        raise SourceConfigError(str(error)) from None
