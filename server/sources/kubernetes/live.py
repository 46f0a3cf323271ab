"""The live API server through the official `kubernetes` client: list and get, and pod logs, only.

Every kind the cluster source reads is listed page by page (`limit` and `continue`, no watch),
across all namespaces or only those configured. A kind the server refuses (403 from RBAC) or that
does not answer in time is recorded in the state's `unavailable`, so a query of it reports that it
could not check, never that nothing was found. Secrets are never listed; nothing is ever exec'd."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

from evigate.server.sources.kubernetes.dump import add_document
from evigate.server.sources.kubernetes.state import ClusterState, Unread

PAGE = 500
TAIL_LINES = 5000  # lines of one container's log read for the log tools
# kind → (API class, list across namespaces, list in one namespace or None for cluster-scoped)
_LISTS: dict[str, tuple[type[Any], str, str | None]] = {
    "Pod": (k8s.CoreV1Api, "list_pod_for_all_namespaces", "list_namespaced_pod"),
    "Event": (k8s.CoreV1Api, "list_event_for_all_namespaces", "list_namespaced_event"),
    "Node": (k8s.CoreV1Api, "list_node", None),
    "PersistentVolumeClaim": (
        k8s.CoreV1Api,
        "list_persistent_volume_claim_for_all_namespaces",
        "list_namespaced_persistent_volume_claim",
    ),
    "Service": (k8s.CoreV1Api, "list_service_for_all_namespaces", "list_namespaced_service"),
    "Endpoints": (k8s.CoreV1Api, "list_endpoints_for_all_namespaces", "list_namespaced_endpoints"),
    "Deployment": (k8s.AppsV1Api, "list_deployment_for_all_namespaces", "list_namespaced_deployment"),
    "ReplicaSet": (k8s.AppsV1Api, "list_replica_set_for_all_namespaces", "list_namespaced_replica_set"),
    "StatefulSet": (k8s.AppsV1Api, "list_stateful_set_for_all_namespaces", "list_namespaced_stateful_set"),
    "DaemonSet": (k8s.AppsV1Api, "list_daemon_set_for_all_namespaces", "list_namespaced_daemon_set"),
    "Job": (k8s.BatchV1Api, "list_job_for_all_namespaces", "list_namespaced_job"),
    "CronJob": (k8s.BatchV1Api, "list_cron_job_for_all_namespaces", "list_namespaced_cron_job"),
    "HorizontalPodAutoscaler": (
        k8s.AutoscalingV2Api,
        "list_horizontal_pod_autoscaler_for_all_namespaces",
        "list_namespaced_horizontal_pod_autoscaler",
    ),
}
LIVE_KINDS = tuple(_LISTS)


@dataclass(frozen=True)
class LiveSettings:
    kubeconfig: str | None = None  # None: the service account of the pod the service runs in
    context: str | None = None
    namespaces: tuple[str, ...] = ()  # empty: every namespace
    timeout_s: float = 10.0
    refresh_s: float = 30.0  # a snapshot is reused this long


def api_client(settings: LiveSettings) -> k8s.ApiClient:
    """A client from the kubeconfig (and context) or from the in-cluster service account. A request
    is not retried: a timeout is reported after `timeout_s`, not after four of them."""
    configuration = k8s.Configuration()
    if settings.kubeconfig is None:
        k8s_config.load_incluster_config(client_configuration=configuration)
    else:
        k8s_config.load_kube_config(
            config_file=settings.kubeconfig, context=settings.context, client_configuration=configuration
        )
    configuration.retries = False
    return k8s.ApiClient(configuration)


def could_not_check(exc: BaseException, timeout_s: float) -> str:
    """Why a list failed, in words that say it was not checked."""
    if isinstance(exc, ApiException):
        if exc.status == 403:
            return f"forbidden by RBAC (403): {' '.join(str(exc.body or exc.reason).split())[:200]}"
        return f"API error {exc.status}: {exc.reason}"
    if isinstance(exc, urllib3.exceptions.TimeoutError | TimeoutError) or "timed out" in str(exc).lower():
        return f"timed out after {timeout_s:g} s"
    return f"unreachable: {type(exc).__name__}: {exc}"


class LiveCluster:
    """Snapshots of a live cluster, refreshed at most every `refresh_s` seconds."""

    def __init__(self, settings: LiveSettings, client: k8s.ApiClient | None = None) -> None:
        self.settings = settings
        self._client = client if client is not None else api_client(settings)
        self._state: ClusterState | None = None
        self._taken = 0.0
        self._lock = asyncio.Lock()

    @property
    def host(self) -> str:
        return str(self._client.configuration.host)

    async def state(self) -> ClusterState:
        async with self._lock:
            if self._state is None or time.monotonic() - self._taken > self.settings.refresh_s:
                self._state = await asyncio.to_thread(self.snapshot)
                self._taken = time.monotonic()
            return self._state

    def snapshot(self, kinds: Sequence[str] = LIVE_KINDS) -> ClusterState:
        """Every kind listed now; what could not be listed is named in `unavailable`."""
        state = ClusterState()
        for kind in kinds:
            try:
                for page in self._pages(kind):
                    add_document(state, page, default_kind=kind)
            except Exception as exc:
                reason = could_not_check(exc, self.settings.timeout_s)
                state.unavailable[kind] = reason
                state.unread.append(Unread(kind, reason))
        return state

    def _pages(self, kind: str) -> Any:
        api_class, across, namespaced = _LISTS[kind]
        api = api_class(self._client)
        calls: list[Callable[..., Any]]
        if self.settings.namespaces and namespaced is not None:
            calls = [_bound(getattr(api, namespaced), ns) for ns in self.settings.namespaces]
        else:
            calls = [getattr(api, across)]
        for call in calls:
            token: str | None = None
            while True:
                kwargs: dict[str, Any] = {"limit": PAGE, "_preload_content": False}
                kwargs["_request_timeout"] = self.settings.timeout_s
                if token:
                    kwargs["_continue"] = token
                response = call(**kwargs)
                page = json.loads(response.data)
                yield page
                token = (page.get("metadata") or {}).get("continue") or None
                if not token:
                    break

    async def pod_log(
        self, namespace: str, pod: str, container: str | None, previous: bool, timestamps: bool = False
    ) -> str:
        """A container's log, or the previous container's after a restart; with `timestamps`, each
        line led by the time the runtime took it, and only the last TAIL_LINES lines."""

        def read() -> str:
            kwargs: dict[str, Any] = {"previous": previous, "_request_timeout": self.settings.timeout_s}
            if timestamps:
                kwargs |= {"timestamps": True, "tail_lines": TAIL_LINES}
            if container:
                kwargs["container"] = container
            text = k8s.CoreV1Api(self._client).read_namespaced_pod_log(pod, namespace, **kwargs)
            return str(text)

        return await asyncio.to_thread(read)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._client.close)


def _bound(method: Callable[..., Any], namespace: str) -> Callable[..., Any]:
    def call(**kwargs: Any) -> Any:
        return method(namespace, **kwargs)

    return call
