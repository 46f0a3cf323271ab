"""A Kubernetes API server on loopback for the live mode's tests: HTTPS with a throwaway CA, a
bearer token, and the API's list responses (`kind: PodList`, items without kind, `metadata.continue`
when `limit` cuts a list) made from a cluster dump's objects. Paths can be made to answer 403 as
RBAC does, or to hang until the test ends (a timeout). Every request is recorded."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evigate.server.sources.kubernetes.podlogs import split_containers
from tests.server.certs import Certs

TOKEN = "evigate-test-token"
GROUPS = {
    "pods": ("/api/v1", "PodList", "v1"),
    "events": ("/api/v1", "EventList", "v1"),
    "nodes": ("/api/v1", "NodeList", "v1"),
    "services": ("/api/v1", "ServiceList", "v1"),
    "endpoints": ("/api/v1", "EndpointsList", "v1"),
    "persistentvolumeclaims": ("/api/v1", "PersistentVolumeClaimList", "v1"),
    "deployments": ("/apis/apps/v1", "DeploymentList", "apps/v1"),
    "replicasets": ("/apis/apps/v1", "ReplicaSetList", "apps/v1"),
    "statefulsets": ("/apis/apps/v1", "StatefulSetList", "apps/v1"),
    "daemonsets": ("/apis/apps/v1", "DaemonSetList", "apps/v1"),
    "jobs": ("/apis/batch/v1", "JobList", "batch/v1"),
    "cronjobs": ("/apis/batch/v1", "CronJobList", "batch/v1"),
    "horizontalpodautoscalers": ("/apis/autoscaling/v2", "HorizontalPodAutoscalerList", "autoscaling/v2"),
}
_FILES = {"replication-controllers": None}


@dataclass
class FakeApiServer:
    url: str
    ca: Path
    objects: dict[str, list[dict[str, Any]]]  # plural → items (no kind)
    logs: dict[tuple[str, str, bool], str] = field(default_factory=dict)  # (ns, pod, previous) → text
    forbidden: set[str] = field(default_factory=set)  # plurals answered 403
    hanging: set[str] = field(default_factory=set)  # plurals that never answer
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path with query, authorization)
    release: threading.Event = field(default_factory=threading.Event)

    def kubeconfig(self, path: Path, token: str = TOKEN) -> Path:
        """A kubeconfig with two contexts: `test` (this server) and `elsewhere` (a closed port)."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "test", "cluster": {"server": self.url, "certificate-authority": str(self.ca)}},
                {
                    "name": "closed",
                    "cluster": {"server": "https://127.0.0.1:9", "certificate-authority": str(self.ca)},
                },
            ],
            "users": [{"name": "reader", "user": {"token": token}}],
            "contexts": [
                {"name": "test", "context": {"cluster": "test", "user": "reader"}},
                {"name": "elsewhere", "context": {"cluster": "closed", "user": "reader"}},
            ],
            "current-context": "elsewhere",
        }
        path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
        return path


def objects_of(dump: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[tuple[str, str, bool], str]]:
    """A dump's objects by plural, and its logs (as the current container's)."""
    out: dict[str, list[dict[str, Any]]] = {plural: [] for plural in GROUPS}
    for path in sorted(dump.rglob("*.json")):
        listed = json.loads(path.read_text(encoding="utf-8"))
        if path.stem in out:
            out[path.stem] += [
                {k: v for k, v in item.items() if k not in {"kind", "apiVersion"}} for item in listed["items"]
            ]
    logs = {  # the API serves one container's lines, without kubectl's dump markers
        (p.parent.parent.name, p.parent.name, False): next(
            iter(split_containers(p.read_text(encoding="utf-8"), "main").values()), ""
        )
        for p in dump.glob("*/*/logs.txt")
    }
    return out, logs


def stamped(text: str) -> str:
    """`timestamps=true`: each line led by the runtime's time (RFC 3339 with nanoseconds)."""
    return "".join(
        f"2026-07-08T11:59:{n:02d}.123456789Z {line}\n" for n, line in enumerate(text.splitlines())
    )


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


@contextmanager
def api_server(dump: Path, certs: Certs) -> Iterator[FakeApiServer]:
    objects, logs = objects_of(dump)
    fake = FakeApiServer("", certs.ca, objects, logs)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            fake.requests.append((self.path, self.headers.get("Authorization", "")))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, _status(401, "Unauthorized", "Unauthorized"))
                return
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            parts = url.path.strip("/").split("/")
            if parts[-1] == "log":  # .../namespaces/<ns>/pods/<pod>/log
                if "pods/log" in fake.hanging:
                    fake.release.wait()
                    return
                if "pods/log" in fake.forbidden:
                    message = f'pods "{parts[-2]}" is forbidden: User "system:serviceaccount:evigate:reader" '
                    self._send(403, _status(403, "Forbidden", message + 'cannot get resource "pods/log"'))
                    return
                key = (parts[-4], parts[-2], query.get("previous") == "true")
                text = fake.logs.get(key)
                if text is None:
                    self._send(
                        400,
                        _status(
                            400, "BadRequest", f'previous terminated container not found in pod "{parts[-2]}"'
                        ),
                    )
                    return
                text = stamped(text) if query.get("timestamps") == "true" else text
                self._send_bytes(200, text.encode(), "text/plain")
                return
            plural = parts[-1]
            namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts else None
            if plural in fake.hanging:
                fake.release.wait()
                return
            if plural in fake.forbidden:
                scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
                message = (
                    f'{plural} is forbidden: User "system:serviceaccount:evigate:reader" cannot list '
                    f'resource "{plural}" in API group ""{scope}'
                )
                self._send(403, _status(403, "Forbidden", message))
                return
            if plural not in GROUPS:
                self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))
                return
            items = [
                i
                for i in fake.objects[plural]
                if namespace is None or i["metadata"].get("namespace") == namespace
            ]
            start = int(query.get("continue") or 0)
            limit = int(query.get("limit") or len(items) or 1)
            page = items[start : start + limit]
            meta: dict[str, Any] = {"resourceVersion": "9000"}
            if start + limit < len(items):
                meta["continue"] = str(start + limit)
                meta["remainingItemCount"] = len(items) - start - limit
            _, kind, api = GROUPS[plural]
            self._send(200, {"kind": kind, "apiVersion": api, "metadata": meta, "items": page})

        def _send(self, status: int, body: dict[str, Any]) -> None:
            self._send_bytes(status, json.dumps(body).encode(), "application/json")

        def _send_bytes(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.server_cert, certs.server_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    fake.url = f"https://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join()
