"""The cluster's pod logs as a log source (ports.LogSource): query_logs and summarize_logs search
them like any log tree.

What each container wrote (and, after a restart, what the previous container wrote) is laid out as
the kubelet lays it out, `pods/<ns>_<pod>_<uid>/<container>/current.log` (`previous.log`), in a
folder of the source's own, and read by the log reader (server/sources/logs): each file's format is
detected as for any file, the service is the pod's workload, and namespace, pod, container (and
`instance: previous`) become every line's fields, so a cited line names where it was written.

- From a dump: each pod's `logs.txt`, cut at kubectl's `==== START logs for container C of pod
  ns/p ====` markers, once (a dump does not change).
- From the API: the containers of the pods a question is about (the service's pods; without a
  service, the pods with problems), at most MAX_PODS, their last lines (live.TAIL_LINES) with the API's
  timestamps, written as CRI lines (`<time> stdout F <line>`) so a line without a time of its own is
  still in time; re-read after the source's refresh period. A log the API refuses (403 on
  `pods/log`) or that times out is named under `unread_logs`; when every log asked for was refused,
  the call fails with why: could not check, never nothing found.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evigate.server.queries.types import LogsQuery, Page, PatternsQuery, ToolError
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.kubernetes.live import could_not_check
from evigate.server.sources.kubernetes.state import ClusterState, meta
from evigate.server.sources.logs import relevance as log_relevance
from evigate.server.sources.logs.layouts import service_of_pod
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.retrieval.embedder import Embedder

MAX_PODS = 20  # pods whose logs one live question reads
_MARKER = re.compile(r"^==== (START|END) logs for container (\S+) of pod (\S+)/(\S+) ====$")
_STAMPED = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (.*)$")


class PodLogReader(Protocol):
    """What the pod logs are read through (the cluster source)."""

    async def state(self) -> ClusterState: ...

    async def pod_log(
        self, namespace: str, pod: str, container: str | None, previous: bool, timestamps: bool = False
    ) -> str: ...


def split_containers(text: str, fallback: str) -> dict[str, str]:
    """A dump's logs.txt by container: the lines between kubectl's START and END markers; a file
    without markers is the `fallback` container's."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        marker = _MARKER.match(line)
        if marker is not None:
            current = marker.group(2) if marker.group(1) == "START" else None
            if current is not None:
                out.setdefault(current, [])
            continue
        out.setdefault(current or fallback, []).append(line)
    return {
        name: "\n".join(lines) + "\n" for name, lines in out.items() if any(line.strip() for line in lines)
    }


def cri_lines(text: str) -> str:
    """The API's `timestamps=true` lines as the kubelet writes them (CRI): `<time> stdout F <line>`;
    a line without the API's time is kept as it is."""
    out = []
    for line in text.splitlines():
        stamped = _STAMPED.match(line)
        out.append(f"{stamped.group(1)} stdout F {stamped.group(2)}" if stamped else line)
    return "\n".join(out) + ("\n" if out else "")


def pod_folder(namespace: str, pod: str, uid: str) -> str:
    """The kubelet's folder name; a pod without a uid (a hand-made dump) gets one from its name."""
    if not re.fullmatch(r"[0-9a-fA-F-]{8,}", uid or ""):
        uid = hashlib.sha1(f"{namespace}/{pod}".encode()).hexdigest()[:16]
    return f"{namespace}_{pod}_{uid}"


def _containers(item: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(container, restarts) of a pod, in its spec's order."""
    restarts = {
        str(s.get("name")): int(s.get("restartCount") or 0)
        for s in (item.get("status") or {}).get("containerStatuses") or []
    }
    names = [str(c.get("name")) for c in (item.get("spec") or {}).get("containers") or [] if c.get("name")]
    return [(name, restarts.get(name, 0)) for name in names or list(restarts)]


def _troubled(item: Mapping[str, Any]) -> bool:
    status = item.get("status") or {}
    if status.get("phase") not in ("Running", "Succeeded"):
        return True
    return any(
        int(s.get("restartCount") or 0) > 0 or not s.get("ready")
        for s in status.get("containerStatuses") or []
    )


@dataclass
class _Fetched:
    at: float
    unread: list[str] = field(default_factory=list)


class PodLogs:
    """The pod logs of one cluster source, under a temporary folder removed by `aclose`."""

    def __init__(
        self,
        cluster: PodLogReader,
        live: bool,
        refresh_s: float = 30.0,
        timeout_s: float = 10.0,
        embedder: Embedder | None = None,
    ) -> None:
        self.cluster = cluster
        self.embedder = embedder  # relevance mode fuses it with BM25, as the files' source does
        self.live = live
        self.refresh_s = refresh_s
        self.timeout_s = timeout_s
        self._files: LogFiles | None = None  # its folder made on first use
        self._lock = asyncio.Lock()
        self._dumped = False
        self._fetched: dict[tuple[str, str], _Fetched] = {}  # live: (namespace, pod) → when, what failed

    @property
    def files(self) -> LogFiles:
        if self._files is None:
            root = Path(tempfile.mkdtemp(prefix="evigate-pod-logs-"))
            # A dump's logs are laid out once, before the first query reads them: found once.
            self._files = LogFiles(LogConfig(root=root, suffixes=(".log",), static=not self.live))
        return self._files

    @property
    def root(self) -> Path:
        return self.files.root

    async def query_logs(self, query: LogsQuery) -> Page:
        unread = await self._ready(query.service)
        if not query.query:
            page = await asyncio.to_thread(self.files.query, query)
        else:
            found = await asyncio.to_thread(self.files.candidates, query)
            dense = await log_relevance.dense_scores(self.embedder, query.query, found.documents)
            page = self.files.ranked(found, query.query, dense, query.limit)
        return _noted(page, unread)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        unread = await self._ready(query.service)
        return _noted(await asyncio.to_thread(self.files.summarize, query), unread)

    async def _ready(self, service: str | None) -> list[str]:
        """The logs a question about `service` needs, written; the live logs that could not be read."""
        async with self._lock:
            state = await self.cluster.state()
            if not self.live:
                if not self._dumped:
                    await asyncio.to_thread(self._write_dump, state)
                    self._dumped = True
                return []
            return await self._fetch(state, service)

    def _write_dump(self, state: ClusterState) -> None:
        for (namespace, pod), path in state.pod_logs.items():
            item = state.get("Pod", namespace, pod) or {}
            containers = _containers(item)
            fallback = containers[0][0] if containers else "logs"
            text = path.read_text("utf-8", "replace")
            folder = self.root / "pods" / pod_folder(namespace, pod, str(meta(item).get("uid", "")))
            for container, body in split_containers(text, fallback).items():
                _write(folder / container / "current.log", body)

    async def _fetch(self, state: ClusterState, service: str | None) -> list[str]:
        wanted = _pods(state, service)[:MAX_PODS]
        unread: list[str] = []
        asked = 0
        now = time.monotonic()
        for item in wanted:
            m = meta(item)
            key = (str(m.get("namespace", "")), str(m.get("name", "")))
            known = self._fetched.get(key)
            if known is not None and now - known.at <= self.refresh_s:
                unread += known.unread
                asked += 1
                continue
            fetched = _Fetched(now)
            folder = self.root / "pods" / pod_folder(*key, str(m.get("uid", "")))
            for container, restarts in _containers(item):
                for previous in (False, True) if restarts else (False,):
                    asked += 1
                    try:
                        text = await self.cluster.pod_log(*key, container, previous, timestamps=True)
                    except Exception as exc:
                        why = could_not_check(exc, self.timeout_s)
                        if previous and why.startswith("API error 400"):
                            continue  # no previous container to read: nothing was missed
                        which = f"{key[0]}/{key[1]}/{container}{' (previous)' if previous else ''}"
                        fetched.unread.append(f"{which}: {why}")
                        continue
                    name = "previous.log" if previous else "current.log"
                    await asyncio.to_thread(_write, folder / container / name, cri_lines(text))
            self._fetched[key] = fetched
            unread += fetched.unread
        if asked and len(unread) >= asked and all(_refused(u) for u in unread):
            raise ToolError("could not check the pods' logs: " + "; ".join(unread[:3]))
        return unread

    async def aclose(self) -> None:
        if self._files is not None:
            await asyncio.to_thread(shutil.rmtree, self._files.root, True)
            self._files = None


def _pods(state: ClusterState, service: str | None) -> list[dict[str, Any]]:
    """The pods a question is about: the service's (by workload, app label or name), else those with
    problems. Both are found once per state."""
    if "pods_by_service" not in state.memo:
        by_service: dict[str, list[dict[str, Any]]] = {}
        for item in state.of("Pod"):
            m = meta(item)
            namespace, name = str(m.get("namespace", "")), str(m.get("name", ""))
            labels = m.get("labels") or {}
            names = {
                service_of_pod(name),
                state.workload_of("Pod", namespace, name)[1],
                str(labels.get("app", "")),
                str(labels.get("app.kubernetes.io/name", "")),
            }
            for known in {n.lower() for n in names if n}:
                by_service.setdefault(known, []).append(item)
        state.memo["pods_by_service"] = by_service
        state.memo["troubled_pods"] = [item for item in state.of("Pod") if _troubled(item)]
    if service is None:
        troubled: list[dict[str, Any]] = state.memo["troubled_pods"]
        return troubled
    found: list[dict[str, Any]] = state.memo["pods_by_service"].get(service.lower(), [])
    return found


def _refused(reason: str) -> bool:
    """A reason that says the log was not checked (not merely absent: no previous container)."""
    return "forbidden" in reason or "timed out" in reason or "unreachable" in reason


def _noted(page: Page, unread: list[str]) -> Page:
    if unread:
        page.extra["unread_logs"] = unread[:10]
    return page


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
