"""Where the cluster is read from: one typed object, no I/O beyond checking the dump is a folder.

Flags (`--kube-dump`, `--kubeconfig` with `--kube-context`, `--kube-in-cluster`,
`--kube-namespaces`) win over the sources file's section:

    sources:
      kubernetes: {kubeconfig: /etc/evigate/kubeconfig, context: prod, namespaces: [payments, checkout],
                   timeout_s: 10, refresh_s: 30}
      # or {dump: /srv/dumps/prod-2026-07-08}, or {in_cluster: true}

A cluster is read from a dump or from an API server, not both; a context names one of a kubeconfig.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evigate.rules.errors import EvigateError

NAME = "kubernetes"
_KEYS = frozenset({"dump", "kubeconfig", "context", "in_cluster", "namespaces", "timeout_s", "refresh_s"})


class ClusterConfigError(EvigateError, ValueError):
    """The cluster's settings cannot name one cluster; the message names the setting."""


@dataclass(frozen=True)
class ClusterConfig:
    dump: Path | None = None  # a `kubectl cluster-info dump` tree or `kubectl get -o json` files
    kubeconfig: Path | None = None  # a live API server, with `context`
    context: str | None = None
    in_cluster: bool = False  # the service account of the pod the service runs in
    namespaces: tuple[str, ...] = ()  # the namespaces read (empty: all)
    timeout_s: float = 10.0
    refresh_s: float = 30.0  # a live snapshot is reused this long

    name = NAME

    def __post_init__(self) -> None:
        live = self.kubeconfig is not None or self.in_cluster
        if self.dump is not None and live:
            raise ClusterConfigError(
                "kube_dump: a cluster is read from a dump or from an API server, not both"
            )
        if self.context and self.kubeconfig is None:
            raise ClusterConfigError("kube_context: names a context of --kubeconfig, which is not set")
        if self.dump is None and not live:
            raise ClusterConfigError("kubernetes: name a dump, a kubeconfig or in_cluster")
        if self.dump is not None and not self.dump.is_dir():
            raise ClusterConfigError(f"kube_dump: {self.dump} is not a directory")
        if self.timeout_s <= 0 or self.refresh_s < 0:
            raise ClusterConfigError("kubernetes: timeout_s must be positive and refresh_s not negative")

    @property
    def live(self) -> bool:
        """An API server (data about now), not a dump (data about when it was taken)."""
        return self.dump is None

    @property
    def where(self) -> str:
        if self.dump is not None:
            return str(self.dump)
        return (
            f"{self.kubeconfig}" + (f" ({self.context})" if self.context else "")
            if self.kubeconfig
            else "in-cluster"
        )

    def describe(self) -> dict[str, Any]:
        """The settings for start-up logs and `evigate sources` (a kubeconfig's path, not its keys)."""
        return {
            "url": self.where,
            "mode": "dump" if self.dump is not None else "api",
            "namespaces": list(self.namespaces) or "all",
            "timeout_s": self.timeout_s,
        }


def cluster_config(
    *,
    dump: Path | None = None,
    kubeconfig: Path | None = None,
    context: str = "",
    in_cluster: bool = False,
    namespaces: tuple[str, ...] = (),
    section: Mapping[str, Any] | None = None,
) -> ClusterConfig | None:
    """The cluster from the flags, then the sources file's `kubernetes` section; None when neither
    names one."""
    section = dict(section or {})
    if unknown := sorted(set(section) - _KEYS):
        raise ClusterConfigError(f"kubernetes: unknown key(s) {', '.join(unknown)}")
    flagged = dump is not None or kubeconfig is not None or in_cluster
    if not flagged:  # the section names the cluster; flags may still narrow it
        dump = _path(section.get("dump"))
        kubeconfig = _path(section.get("kubeconfig"))
        in_cluster = bool(section.get("in_cluster", False))
        context = context or str(section.get("context") or "")
    if dump is None and kubeconfig is None and not in_cluster:
        if context:
            raise ClusterConfigError("kube_context: names a context of --kubeconfig, which is not set")
        return None
    listed = section.get("namespaces") or ()
    if isinstance(listed, str) or not all(isinstance(n, str) for n in listed):
        raise ClusterConfigError("kubernetes.namespaces: expected a list of names")
    try:
        return ClusterConfig(
            dump=dump,
            kubeconfig=kubeconfig,
            context=context or None,
            in_cluster=in_cluster,
            namespaces=namespaces or tuple(listed),
            timeout_s=float(section.get("timeout_s", 10.0)),
            refresh_s=float(section.get("refresh_s", 30.0)),
        )
    except (TypeError, ValueError) as error:
        if isinstance(error, ClusterConfigError):
            raise
        raise ClusterConfigError(f"kubernetes: {error}") from None


def _path(value: Any) -> Path | None:
    return Path(str(value)) if value else None
