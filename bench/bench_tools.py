"""Tool benchmarks through the tool box (validation, the backend, refs, recording): query_logs over
1,000,000 NDJSON log lines (read by server.sources.logs) and lookup_knowledge (the lexical search)
over 1,000 documents.

    .venv/bin/python bench/bench_tools.py [--lines 1000000] [--docs 1000] [--runs 30] [--json FILE]

Data is generated into a temporary directory. Each measurement runs in a child process so its peak
RSS (ru_maxrss: interpreter, index, page cache of mapped files excluded) is its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.deadline import Deadline
from evigate.server.tools import SessionToolBox, build_backend

SERVICES = ["payment-service", "order-service", "inventory-service", "user-service", "gateway"]
START = datetime(2026, 7, 8, 0, 0, tzinfo=UTC)


class NoCases:
    async def list_cases(self, limit: int = 1000) -> list[Any]:
        return []


class NullRecorder:
    def __init__(self) -> None:
        self.count = 0

    async def record_invocation(  # noqa: PLR0917 - storage's signature
        self,
        session_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        status: str,
        error: str | None,
        raw_result: dict[str, Any] | None,
        retrieval_details: dict[str, Any],
        latency_ms: float,
        *,
        created_at: datetime | None = None,
    ) -> int:
        self.count += 1
        return self.count


def generate_logs(root: Path, lines: int, files: int = 4) -> None:
    rng = random.Random(7)
    (root / "logs").mkdir(parents=True)
    (root / "knowledge").mkdir()
    (root / "alerts.json").write_text("[]")
    (root / "world.json").write_text(json.dumps({"now": "2026-07-09T00:00:00Z"}))
    per_file = lines // files
    for number in range(files):
        with (root / "logs" / f"part-{number}.ndjson").open("w", encoding="utf-8") as out:
            for i in range(per_file):
                service = SERVICES[rng.randrange(5)]
                roll = rng.random()
                if service == "order-service" and roll < 0.005:
                    level, message = (
                        "ERROR",
                        "HikariPool-1 - Connection is not available, request timed out after 30000ms",
                    )
                    message = "HikariCP " + message if roll < 0.0025 else message
                elif roll < 0.02:
                    level, message = (
                        "WARN",
                        f"支付回调处理超时 orderId=O{rng.randrange(10**8)} elapsed={rng.randrange(9000)}ms",
                    )
                else:
                    level = rng.choice(["DEBUG", "INFO", "INFO", "INFO"])
                    message = f"GET /api/orders/O{rng.randrange(10**8)} 200 {rng.randrange(300)}ms"
                moment = START + timedelta(seconds=(number * per_file + i) * 0.08)
                record = {
                    "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                    "level": level,
                    "service": service,
                    "message": message,
                    "logger": "com.shop.api.Controller",
                    "trace_id": f"{rng.getrandbits(64):016x}",
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def generate_docs(root: Path, docs: int) -> None:
    rng = random.Random(11)
    words = [f"term{i}" for i in range(3000)]
    zh = "连接池耗尽告警日志延迟内存磁盘网络超时重启错误率缓存数据库线程"
    folder = root / "knowledge"
    folder.mkdir(parents=True)
    for i in range(docs):
        body = " ".join(rng.choice(words) for _ in range(120))
        chinese = "".join(rng.choice(zh) for _ in range(60))
        steps = " ".join(rng.choice(words) for _ in range(80))
        (folder / f"doc-{i}.md").write_text(
            f"---\ntitle: Runbook {i}\nkeys: [Alert{i}Fired, ERR-{1000 + i}]\nskill: skill-{i % 50}\n---\n"
            f"# Symptoms\n{body}\n\n# 中文\n{chinese}\n\n# Steps\n{steps}\n",
            encoding="utf-8",
        )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def child(kind: str, root: Path, runs: int) -> dict[str, Any]:
    backend = build_backend(root, NoCases())
    recorder = NullRecorder()
    if kind == "logs":
        calls = {
            "service+keyword (HikariCP, rare)": {"service": "order-service", "keyword": "HikariCP"},
            "service+keyword (支付回调处理超时)": {
                "service": "payment-service",
                "keyword": "支付回调处理超时",
            },
            "service only, newest 20 (timestamps index)": {"service": "gateway"},
            "service+level, no keyword (timestamps index)": {
                "service": "order-service",
                "level": "ERROR",
            },
            "service+keyword+level+window": {
                "service": "order-service",
                "keyword": "HikariCP",
                "level": "ERROR",
                "since": "6h",
            },
        }
    else:
        calls = {
            "L0 key (ERR-1500)": {"query": "what does ERR-1500 mean"},
            "L1 words": {"query": "term17 term2048 term999 term5"},
            "L1 Chinese": {"query": "数据库连接池耗尽怎么办"},
        }
    out: dict[str, Any] = {}
    first_args = next(iter(calls.values()))
    tool = "query_logs" if kind == "logs" else "lookup_knowledge"
    start = time.perf_counter()
    first = await SessionToolBox(backend, recorder, "warm").call(tool, first_args, Deadline.none())
    out["first call ms"] = round((time.perf_counter() - start) * 1000, 1)
    out["first call status"] = first.retrieval_details["evidence_status"]
    for name, args in calls.items():
        latencies = []
        total = None
        for _ in range(runs):
            toolbox = SessionToolBox(backend, recorder, "bench")  # a new session: no dedup
            start = time.perf_counter()
            result = await toolbox.call(tool, args, Deadline.none())
            latencies.append((time.perf_counter() - start) * 1000)
            raw = result.raw_result or {}
            total = raw.get("total", 0)
        out[name] = {
            "p50_ms": round(statistics.median(latencies), 1),
            "p99_ms": round(pct(latencies, 0.99), 1),
            "total": total,
        }
    out["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def run_child(kind: str, root: Path, runs: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(root), "--runs", str(runs)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "DIR"))
    figures.add_json_flag(parser)
    args = parser.parse_args()
    if args.child:
        print(
            json.dumps(asyncio.run(child(args.child[0], Path(args.child[1]), args.runs)), ensure_ascii=False)
        )
        return
    with tempfile.TemporaryDirectory(prefix="evigate-bench-") as tmp:
        logs_root, docs_root = Path(tmp) / "logs-world", Path(tmp) / "docs-world"
        start = time.perf_counter()
        generate_logs(logs_root, args.lines)
        size = sum(p.stat().st_size for p in (logs_root / "logs").glob("*.ndjson"))
        took = time.perf_counter() - start
        print(f"generated {args.lines:,} log lines ({size / 2**20:.0f} MB) in {took:.1f} s")
        logs = run_child("logs", logs_root, args.runs)
        for key, value in logs.items():
            print(f"  query_logs  {key}: {value}")
        generate_docs(docs_root, args.docs)
        (docs_root / "logs").mkdir()
        print(f"generated {args.docs:,} knowledge documents")
        knowledge = run_child("knowledge", docs_root, args.runs)
        for key, value in knowledge.items():
            print(f"  lookup_knowledge  {key}: {value}")
    found = [figures.Figure(f"query_logs {args.lines:,} lines ({size / 2**20:.0f} MB): first call",
                            f"{logs['first call ms']:.0f} ms", cache="cold")]  # fmt: skip
    for tool, result in (("query_logs", logs), ("lookup_knowledge", knowledge)):
        for key, value in result.items():
            if isinstance(value, dict):
                latency = f"{value['p50_ms']} / {value['p99_ms']} ms"
                found.append(figures.Figure(f"{tool} {key}, p50 / p99", latency, cache="warm"))
        found.append(figures.Figure(f"{tool}: peak RSS of its process", f"{result['maxrss_mb']:.0f} MB"))
    what = (
        f"the tool box over {args.lines:,} generated NDJSON log lines and {args.docs:,} generated documents"
    )
    figures.write(args.json, "bench_tools", what, found, {"query_logs": logs, "lookup_knowledge": knowledge})


if __name__ == "__main__":
    main()
