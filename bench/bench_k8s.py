"""The cluster source on a large dump: load time, the cluster tools' warm latency, peak RSS.

    .venv/bin/python bench/bench_k8s.py [--pods 5000] [--events 50000] [--runs 50] [--json FILE]

Generates a `kubectl cluster-info dump` tree (synthetic: 50 namespaces, a deployment per 5 pods with
its ReplicaSets, pods named as the ReplicaSet controller names them — `<deployment>-<pod-template-hash>-
<5 characters>` —, one pod in ten crash-looping, events spread over the pods), then, in a child
process so the generator's memory is not counted, reads it through the tools as the service would:
the first call (the dump read and summarised), the first pod-log query (every pod's logs.txt laid
out for the log reader), then each query `--runs` times in new sessions.
Targets: warm p99 under 50 ms, peak RSS under 300 MB."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.deadline import Deadline
from evigate.server.sources.kubernetes.source import DumpCluster
from evigate.server.tools import SessionToolBox, build_backend
from tests.sources.kubernetes import objects as o
from tests.sources.kubernetes.clusters import Cluster
from tests.tools.conftest import MemoryCases, MemoryRecorder, write_world

NAMESPACES = 50
PODS_PER_DEPLOYMENT = 5


def generate(root: Path, pods: int, events: int) -> Path:
    c = Cluster()
    c.nodes += [o.node(f"worker-{i}") for i in range(20)]
    per_pod = max(1, events // pods)
    for p in range(pods):
        ns, d = f"team-{p % NAMESPACES:02d}", f"app-{(p // NAMESPACES) // PODS_PER_DEPLOYMENT:03d}"
        spec = o.container(d, f"{d}:1.{p % 7}.0", env=[{"name": "MODE", "value": "a"}])
        if (p // NAMESPACES) % PODS_PER_DEPLOYMENT == 0:
            c.add(
                "deployments", o.deployment(ns, d, [spec], ready=PODS_PER_DEPLOYMENT, replicas=5, revision=2)
            )
            for rev in (1, 2):
                rs = o.replicaset(
                    ns,
                    d,
                    suffix=safe(f"{ns}/{d}/{rev}", 10),
                    containers=[spec],
                    revision=rev,
                    replicas=5 * (rev - 1),
                    minutes_ago=100 / rev,
                )
                c.add("replicasets", rs)
        replicaset = f"{d}-{safe(f'{ns}/{d}/2', 10)}"
        name = f"{replicaset}-{safe(f'{ns}/{replicaset}/{p}', 5)}"
        broken = p % 10 == 0
        state = (
            o.waiting("CrashLoopBackOff", f"back-off 5m0s restarting failed container={d}")
            if broken
            else o.running()
        )
        last = o.terminated("Error", 1, 2) if broken else None
        status = o.container_status(d, f"{d}:1.0.0", state, last, 9 if broken else 0)
        c.add("pods", o.pod(ns, name, [spec], [status], owner_rs=replicaset))
        c.logs[(ns, name)] = _log(d, p, broken)
        for e in range(per_pod):
            reason, type_ = ("BackOff", "Warning") if broken and e % 2 else ("Pulled", "Normal")
            c.add(
                "events",
                o.event(
                    ns,
                    "Pod",
                    name,
                    reason,
                    f"{reason} {d} #{e}",
                    type_=type_,
                    count=e + 1,
                    first=60 - e,
                    last=30 - e,
                ),
            )
    return c.write(root)


# The alphabet of the names Kubernetes makes up (no vowels, no 0 1 3): a pod-template-hash, a pod's suffix.
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def safe(seed: str, length: int) -> str:
    """`length` characters of SAFE, the same for the same seed: `7d9f8b6c5d`, `x2kqz`, as kubectl shows."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(SAFE[b % len(SAFE)] for b in digest[:length])


def _log(workload: str, number: int, broken: bool) -> str:
    """LOG_LINES lines a pod wrote (JSON lines, as many services write), the last an error when it
    crash-loops."""
    lines = [
        json.dumps({"time": f"2026-07-08T11:{m % 60:02d}:{number % 60:02d}Z", "level": "info",
                    "msg": f"handled request {m} in {m % 40 + 3}ms", "app": workload})
        for m in range(LOG_LINES)
    ]  # fmt: skip
    if broken:
        lines[-1] = json.dumps(
            {"time": "2026-07-08T11:59:59Z", "level": "error", "msg": "cannot connect to db:5432: refused"}
        )
    return "\n".join(lines)


LOG_LINES = 20

QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    "query_k8s workload (pods + deployment)": ("query_k8s", {"name": "app-003", "namespace": "team-07"}),
    "query_k8s problems in a namespace": ("query_k8s", {"namespace": "team-10", "problems_only": True}),
    "query_k8s every pod with a problem": ("query_k8s", {"kind": "pod", "problems_only": True}),
    "query_k8s_events of a workload": ("query_k8s_events", {"object": "app-000", "namespace": "team-00"}),
    "query_k8s_events warnings, last hour": ("query_k8s_events", {"type": "Warning", "since": "1h"}),
    "k8s_rollout_history": ("k8s_rollout_history", {"deployment": "app-002", "namespace": "team-03"}),
    "query_logs pod logs of a workload (keyword)": (
        "query_logs",
        {"service": "app-003", "keyword": "refused"},
    ),
    "summarize_logs pod logs of a workload": ("summarize_logs", {"service": "app-003", "level": "INFO"}),
}


async def child(dump: Path, world: Path, runs: int) -> dict[str, Any]:
    backend = build_backend(world, MemoryCases())
    cluster = DumpCluster(dump)
    backend.cluster = (cluster,)
    backend.logs = (*backend.logs, cluster)  # its pods' logs searched beside the files, as configured
    recorder = MemoryRecorder()
    out: dict[str, Any] = {}
    start = time.perf_counter()
    first = await SessionToolBox(backend, recorder, "cold").call(
        "query_k8s", {"name": "app-001"}, Deadline.none()
    )
    out["first call ms"] = round((time.perf_counter() - start) * 1000, 1)
    out["first call status"] = first.retrieval_details["evidence_status"]
    start = time.perf_counter()
    first = await SessionToolBox(backend, recorder, "cold").call(
        "query_logs", {"service": "app-001", "keyword": "refused"}, Deadline.none()
    )
    out["first pod-log query ms"] = round((time.perf_counter() - start) * 1000, 1)
    out["first pod-log query status"] = first.retrieval_details["evidence_status"]
    for label, (tool, args) in QUERIES.items():
        await SessionToolBox(backend, recorder, "warm").call(tool, args, Deadline.none())  # its caches built
        latencies = []
        result = None
        for _ in range(runs):
            box = SessionToolBox(backend, recorder, "bench")
            begin = time.perf_counter()
            result = await box.call(tool, args, Deadline.none())
            latencies.append((time.perf_counter() - begin) * 1000)
        raw = result.raw_result or {} if result is not None else {}
        ordered = sorted(latencies)
        out[label] = {
            "p50_ms": round(statistics.median(latencies), 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1),
            "total": raw.get("total", 0),
        }
        recorder.rows.clear()
    out["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    await cluster.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--child", nargs=2, metavar=("DUMP", "WORLD"))
    figures.add_json_flag(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(Path(args.child[0]), Path(args.child[1]), args.runs))))
        return
    with tempfile.TemporaryDirectory(prefix="evigate-bench-k8s-") as tmp:
        began = time.perf_counter()
        dump = generate(Path(tmp) / "dump", args.pods, args.events)
        size = sum(p.stat().st_size for p in dump.rglob("*.json"))
        took = time.perf_counter() - began
        print(f"generated {args.pods:,} pods, {args.events:,} events ({size / 2**20:.0f} MB) in {took:.1f} s")
        world = write_world(Path(tmp) / "world", now=o.NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(dump), str(world), "--runs", str(args.runs)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        result: dict[str, Any] = json.loads(proc.stdout)
    for key, value in result.items():
        print(f"  {key}: {value}")
    scale = f"{args.pods:,} pods, {args.events:,} events ({size / 2**20:.0f} MB)"
    found = [
        figures.Figure(
            f"first call on {scale}: dump read and summarised",
            f"{result['first call ms']:.0f} ms",
            cache="cold",
        ),
        figures.Figure(
            f"first pod-log query ({args.pods:,} logs.txt laid out for the log reader, one workload's read)",
            f"{result['first pod-log query ms']:.0f} ms",
            cache="cold",
        ),
    ]
    for key, value in result.items():
        if isinstance(value, dict):
            found.append(
                figures.Figure(f"{key}, p50 / p99", f"{value['p50_ms']} / {value['p99_ms']} ms", cache="warm")
            )
    found.append(
        figures.Figure("peak RSS of the process (dump held and summarised)", f"{result['maxrss_mb']:.0f} MB")
    )
    figures.write(
        args.json, "bench_k8s", f"the cluster tools over a generated dump of {scale}", found, result
    )


if __name__ == "__main__":
    main()
