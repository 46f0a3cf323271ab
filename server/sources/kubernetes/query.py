"""The questions the tools ask of a ClusterState: objects with their status, by kind, namespace and
name (a workload's name finds its pods too), and the closest names when nothing has the name."""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass

from evigate.server.sources.kubernetes.kinds import STATUS_KINDS
from evigate.server.sources.kubernetes.state import JSON, ClusterState, dash_prefixes, meta
from evigate.server.sources.kubernetes.summary import summarize

MAX_CLOSEST = 5


@dataclass(frozen=True)
class ObjectFilter:
    kind: str | None = None  # None: every kind with a status (pods, workloads, jobs, HPA, PVC, nodes)
    namespace: str | None = None
    name: str | None = None  # an object's name, its workload's name, or a name's prefix
    problems_only: bool = False


def _claim_sets(name: str) -> list[str]:
    """`data-my-kafka-0` → `my-kafka`, `kafka`: the StatefulSets whose claim (<template>-<set>-<n>)
    it may be."""
    stem = re.fullmatch(r"(.+)-\d+", name)
    if stem is None:
        return []
    body = stem.group(1)
    return [body[i + 1 :] for i, ch in enumerate(body) if ch == "-" and body[i + 1 :]]


def _name_keys(summary: JSON) -> set[str]:
    """Every `name` a filter can give that finds this object: its own, its workload's or target's,
    a prefix of its own up to a dash (a workload's name finds its pods), a claim's StatefulSet."""
    own = str(summary.get("name", ""))
    keys = {own, *dash_prefixes(own)}
    for field in ("workload", "target"):
        keys.add(str(summary.get(field, "/")).split("/", 1)[1])
    if summary.get("kind") == "PersistentVolumeClaim":
        keys.update(_claim_sets(own))
    keys.discard("")
    return keys


@dataclass
class _Kind:
    """One kind's summaries, those with problems first, then by namespace and name (the order
    `objects` lists them in), and where a filter starts looking: positions by namespace and by
    every name that finds the object, ascending."""

    rows: list[JSON]
    with_problems: int  # rows[:with_problems] have problems
    by_namespace: dict[str, list[int]]
    by_name: dict[str, list[int]]

    def candidates(self, f: ObjectFilter) -> list[int] | range:
        end = self.with_problems if f.problems_only else len(self.rows)
        if f.name:
            found = self.by_name.get(f.name, [])
            if f.namespace:
                found = [i for i in found if self.rows[i].get("namespace") == f.namespace]
            return found[: bisect.bisect_left(found, end)]
        if f.namespace:
            found = self.by_namespace.get(f.namespace, [])
            return found[: bisect.bisect_left(found, end)]
        return range(end)


def _kind(state: ClusterState, kind: str) -> _Kind:
    """A kind's summaries and their indexes, built once per state (a state does not change once read)."""
    key = f"objects:{kind}"
    if key not in state.memo:
        rows = [summarize(state, kind, item) for item in state.of(kind)]
        rows.sort(key=lambda s: (not s.get("problems"), s.get("namespace", ""), s["name"]))
        by_namespace: dict[str, list[int]] = {}
        by_name: dict[str, list[int]] = {}
        for i, summary in enumerate(rows):
            by_namespace.setdefault(summary.get("namespace", ""), []).append(i)
            for name in _name_keys(summary):
                by_name.setdefault(name, []).append(i)
        problems = sum(1 for s in rows if s.get("problems"))
        state.memo[key] = _Kind(rows, problems, by_namespace, by_name)
    index: _Kind = state.memo[key]
    return index


def index(state: ClusterState) -> None:
    """Every kind's summaries and indexes, and the names, built now."""
    for kind in STATUS_KINDS:
        _kind(state, kind)
    names(state)


def objects(state: ClusterState, f: ObjectFilter) -> list[JSON]:
    """Summaries of the objects that pass the filter: those with problems first, then by kind
    (in STATUS_KINDS order), namespace and name."""
    kinds = [f.kind] if f.kind else list(STATUS_KINDS)
    troubled: list[JSON] = []
    healthy: list[JSON] = []
    for kind in kinds:
        if f.namespace and kind == "Node":
            continue  # nodes belong to no namespace: asked for one, they are not listed
        index = _kind(state, kind)
        for i in index.candidates(f):
            (troubled if i < index.with_problems else healthy).append(index.rows[i])
    return troubled + healthy


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
