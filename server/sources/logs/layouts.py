"""Which files under a root are logs, how rotated files group into one stream, and which service
each stream belongs to by its place in the tree (Kubernetes, Docker, or a plain directory)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .log_config import LogConfig

# `x.log`, `x.log.1`, `x.log.2.gz`, `x.log-20260708.gz`, kubelet's `0.log.20260708-230000.gz`.
_ROTATED = re.compile(r"^(?P<base>.+?)(?:[.-](?P<rot>\d{8}(?:[-T]?\d{2,6})?|\d{1,4}))?(?P<gz>\.gz)?$")
# /var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log
_POD_DIR = re.compile(r"^(?P<ns>[^_]+)_(?P<pod>[^_]+)_(?P<uid>[0-9a-fA-F-]{8,})$")
# /var/log/containers/<pod>_<namespace>_<container>-<64 hex>.log
_CONTAINER_LINK = re.compile(r"^(?P<pod>[^_]+)_(?P<ns>[^_]+)_(?P<container>.+)-(?P<id>[0-9a-f]{64})\.log$")
_DOCKER_FILE = re.compile(r"^(?P<id>[0-9a-f]{64})-json\.log$")
# Kubernetes' random suffixes use this alphabet (no vowels, no 0 1 3), so `-server` is never one.
_SAFE = "[bcdfghjklmnpqrstvwxz2456789]"
_POD_SUFFIX = re.compile(rf"-{_SAFE}{{5}}$")
_TEMPLATE_HASH = re.compile(rf"-(?:{_SAFE}{{6,10}}|\d{{8,10}})$")  # ReplicaSet hash, CronJob time
_ORDINAL = re.compile(r"-\d+$")  # StatefulSet pods
_BARE_NAMES = ("syslog", "messages")
PREVIOUS = "previous.log"


def service_of_pod(pod: str) -> str:
    """`payment-service-7d9f8b6c5d-x2kqz` → `payment-service`, `kafka-0` → `kafka`."""
    stripped = _POD_SUFFIX.sub("", pod)
    if stripped != pod:
        return _TEMPLATE_HASH.sub("", stripped)
    return _ORDINAL.sub("", pod)


@dataclass(frozen=True)
class Member:
    """One physical file of a stream."""

    path: Path  # what to open
    rel: str  # what to show: the path relative to the root


@dataclass(frozen=True)
class LogSource:
    """One logical stream: a file and its rotated predecessors, oldest first."""

    key: str
    members: tuple[Member, ...]
    service: str  # from the layout; a record's own service field wins over it
    fields: Mapping[str, str] = field(default_factory=dict)


def _is_log_name(base: str, config: LogConfig) -> bool:
    return base.endswith(config.suffixes) or base in _BARE_NAMES


def _rotation_key(rot: str | None, gz: bool) -> tuple[int, int, str]:
    """Older first: numbered rotations by descending number, dated ones by date, the live file last."""
    if rot is None:
        return (0, 0, "") if gz else (1, 0, "")
    if len(rot) >= 8:
        return (0, 0, rot)
    return (0, -int(rot), "")


def _layout(base_path: Path, root: Path, config: LogConfig) -> tuple[str, dict[str, str]]:
    """(service, fields) a stream's place in the tree implies. The container format (CRI, Docker)
    is told by the content: a pod log may be a symlink to Docker's json-file."""
    parts = base_path.relative_to(root).parts
    if len(parts) >= 3 and (pod_dir := _POD_DIR.match(parts[-3])):
        pod = pod_dir.group("pod")
        meta = {"namespace": pod_dir.group("ns"), "pod": pod, "container": parts[-2]}
        if base_path.name == PREVIOUS:  # the cluster source's copy of the container before its restart
            meta["instance"] = "previous"
        return service_of_pod(pod), meta
    if link := _CONTAINER_LINK.match(base_path.name):
        pod = link.group("pod")
        meta = {"namespace": link.group("ns"), "pod": pod, "container": link.group("container")}
        return service_of_pod(pod), meta
    if docker := _DOCKER_FILE.match(base_path.name):
        return docker.group("id")[:12], {"container_id": docker.group("id")[:12]}
    stem = base_path.name.split(".", 1)[0]
    if stem.lower() in config.generic_stems or stem.isdigit():
        parent = base_path.parent
        if parent != root:
            return parent.name, {}
    return stem, {}


def discover(config: LogConfig) -> list[LogSource]:
    """Every log stream under the root. A symlink (Kubernetes' /var/log/containers) whose target is
    also under the root is read once, through its target."""
    root = config.root
    real_files: set[str] = set()
    links: list[Path] = []
    plain: list[Path] = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_symlink():
                links.append(path)
            elif path.is_file():
                plain.append(path)
                real_files.add(os.path.realpath(path))
    # Pod-layout links first: their path names the pod when /var/log/containers points at them too.
    links.sort(key=lambda p: (not (len(p.parts) >= 3 and _POD_DIR.match(p.parts[-3])), str(p)))
    for link in links:
        target = os.path.realpath(link)
        if target not in real_files and os.path.isfile(target):
            plain.append(link)
            real_files.add(target)
    groups: dict[Path, list[tuple[tuple[int, int, str], Path]]] = {}
    for path in plain:
        match = _ROTATED.match(path.name)
        if match is None or not _is_log_name(match.group("base"), config):
            continue
        base = path.with_name(match.group("base"))
        groups.setdefault(base, []).append((_rotation_key(match.group("rot"), bool(match.group("gz"))), path))
    sources = []
    for base, entries in sorted(groups.items()):
        entries.sort(key=lambda e: e[0])
        service, meta = _layout(base, root, config)
        members = tuple(Member(p, str(p.relative_to(root))) for _, p in entries)
        sources.append(LogSource(str(base.relative_to(root)), members, service, meta))
    return sources
