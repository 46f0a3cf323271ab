"""The sections of the evidence sources: the files backend's data, logs, the live servers
(server/sources) and the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evigate.server.settings.base import Section, setting


@dataclass(frozen=True)
class SourceSettings(Section):
    data_dir: Path | None = setting(None, "the fixture tool backend's data (default: the bundled demo world)")
    service_aliases_file: Path | None = setting(
        None, "JSON of service name → aliases (Chinese names, team names)"
    )  # on top of the data's own
    service_catalog_refresh_s: float = setting(
        60.0, "seconds between service catalog refreshes (0: built once)"
    )
    # with a URL set, alerts / metrics come from that server
    prometheus_url: str = setting(
        "", "Prometheus-compatible server for query_promql and alert history, e.g. http://prom:9090"
    )
    alertmanager_url: str = setting(
        "", "Alertmanager for the alerts active now, e.g. http://alertmanager:9093"
    )
    clickhouse_url: str = setting(
        "", "ClickHouse whose log table query_logs / summarize_logs read, e.g. http://clickhouse:8123"
    )
    # env only; or bearer_token(_file) in the sources file
    prometheus_bearer_token: str = setting("", secret=True)
    alertmanager_bearer_token: str = setting("", secret=True)
    sources_file: Path | None = setting(
        None, "YAML with a sources: section per source (auth, CA bundle, timeout, limits)"
    )
    signals_file: Path | None = setting(None, "JSON signal catalog adding to / replacing the shipped signals")
    # structured cases: an operator's fault-category catalog
    case_categories_file: Path | None = setting(
        None, "fault-category catalog JSON (default: rules/fault-categories.json)"
    )


@dataclass(frozen=True)
class LogSettings(Section):
    """The log files query_logs / summarize_logs read."""

    PREFIX = "logs_"
    # None: the logs config file's root, else <data_dir>/logs
    dir: Path | None = setting(
        None, "root of the log files query_logs / summarize_logs read (default: DATA_DIR/logs)"
    )
    config: Path | None = setting(
        None, "TOML or JSON file whose `logs` section sets field names, patterns, default_tz"
    )


@dataclass(frozen=True)
class ClusterSettings(Section):
    """The cluster source (server/sources/kubernetes): a dump, or a live API server."""

    PREFIX = "kube_"
    dump: Path | None = setting(
        None, "a `kubectl cluster-info dump --output-directory` tree, or kubectl get -o json files"
    )
    kubeconfig: Path | None = setting(
        None,
        "kubeconfig of a live cluster, read with get / list / log only (with --kube-context)",
        name="kubeconfig",
    )  # neither: no cluster
    context: str = setting("")
    in_cluster: bool = setting(False, "read the cluster the service runs in, through its service account")
    namespaces: tuple[str, ...] = setting(
        (), "comma-separated namespaces a live cluster is read in (default: all)"
    )
