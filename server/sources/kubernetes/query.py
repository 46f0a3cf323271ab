"""The questions the tools ask of a ClusterState: objects with their status, by kind, namespace and
name (a workload's name finds its pods too), and the closest names when nothing has the name."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from evigate.server.sources.kubernetes.kinds import STATUS_KINDS
from evigate.server.sources.kubernetes.state import JSON, ClusterState, meta
from evigate.server.sources.kubernetes.summary import summarize

MAX_CLOSEST = 5


@dataclass(frozen=True)
class ObjectFilter:
    kind: str | None = None  # None: every kind with a status (pods, workloads, jobs, HPA, PVC, nodes)
    namespace: str | None = None
    name: str | None = None  # an object's name, its workload's name, or a name's prefix
    problems_only: bool = False


def _named(summary: JSON, name: str) -> bool:
    own = str(summary.get("name", ""))
    workload = str(summary.get("workload", "/")).split("/", 1)[1]
    target = str(summary.get("target", "/")).split("/", 1)[1]
    if summary.get("kind") == "PersistentVolumeClaim" and re.search(rf"-{re.escape(name)}-\d+$", own):
        return True  # a StatefulSet's claim: <template>-<statefulset>-<ordinal>
    return name in {own, workload, target} or own.startswith(f"{name}-")


def summaries(state: ClusterState, kind: str) -> list[JSON]:
    """Every object of a kind, summarized once per state (a state does not change once read)."""
    key = f"summaries:{kind}"
    if key not in state.memo:
        state.memo[key] = [summarize(state, kind, item) for item in state.of(kind)]
    cached: list[JSON] = state.memo[key]
    return cached


def objects(state: ClusterState, f: ObjectFilter) -> list[JSON]:
    """Summaries of the objects that pass the filter: those with problems first, then by kind
    (in STATUS_KINDS order), namespace and name."""
    kinds = [f.kind] if f.kind else list(STATUS_KINDS)
    found: list[tuple[int, int, JSON]] = []
    for rank, kind in enumerate(kinds):
        if f.namespace and kind == "Node":
            continue  # nodes belong to no namespace: asked for one, they are not listed
        for summary in summaries(state, kind):
            if f.namespace and summary.get("namespace") != f.namespace:
                continue
            if f.name and not _named(summary, f.name):
                continue
            if f.problems_only and not summary.get("problems"):
                continue
            found.append((0 if summary.get("problems") else 1, rank, summary))
    found.sort(key=lambda e: (e[0], e[1], e[2].get("namespace", ""), e[2]["name"]))
    return [e[2] for e in found]


def names(state: ClusterState) -> list[str]:
    """Every object name and namespace the state holds (for closest-name suggestions)."""
    if "names" not in state.memo:
        state.memo["names"] = _names(state)
    known: list[str] = state.memo["names"]
    return known


def _names(state: ClusterState) -> list[str]:
    seen = {meta(o).get("name", "") for kind in STATUS_KINDS for o in state.of(kind)}
    seen.update(state.namespaces())
    seen.update(name for _kind, _namespace, name in state.workloads())
    return sorted(n for n in seen if n)


def _stem(name: str) -> str:
    """A pod's name without the hash-like suffixes of its ReplicaSet and itself."""
    parts = name.split("-")
    while len(parts) > 1 and any(ch.isdigit() for ch in parts[-1]):
        parts.pop()
    return "-".join(parts)


def closest(state: ClusterState, name: str) -> list[str]:
    """The known names nearest `name`: those that contain it or it contains, then those nearest
    it or its stem (a pod name without its hash suffixes) in spelling or common prefix."""
    known = names(state)
    lowered = name.lower()
    near = [n for n in known if lowered in n.lower() or n.lower() in lowered]
    stem = _stem(lowered)
    scored = []
    for n in known:
        if n in near:
            continue
        pairs = zip(stem, n.lower(), strict=False)
        prefix = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(stem), len(n)))
        matcher = difflib.SequenceMatcher(None, stem, n.lower())
        score = max(
            matcher.ratio() if matcher.quick_ratio() >= 0.5 else 0.0,
            prefix / max(len(n), 1) if prefix >= 4 else 0.0,
        )
        if score >= 0.5:
            scored.append((-score, n))
    near += [n for _, n in sorted(scored)]
    return near[:MAX_CLOSEST]
