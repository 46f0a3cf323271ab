"""Gatekeeper throughput: one executor output with N bindings against N invocations.

Run: .venv/bin/python bench/bench_gatekeeper.py [--repeat 5]

Two excerpt styles of ~100 characters each: a verbatim quote of the ref text (the common case,
served by the substring fast path) and an excerpt with other case, spacing, full-width forms and an
ellipsis joining two spans, which needs the word-for-word comparison (rules.verbatim). Prints
bindings per second at each size and the per-binding cost relative to the smallest size: a ratio
near 1.0 at every size means cost grows linearly with the bindings.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.rules.gatekeeper import check
from evigate.rules.types import EvidenceRef, InvocationFacts
from evigate.server.tools.registry import default_registry

SIZES = (10, 100, 1_000, 10_000)


def _ref_text(i: int) -> str:
    return (
        f"2026-07-08 23:{i % 60:02d}:{i % 59:02d} ERROR order-service-{i} HikariPool-{i % 7 + 1} - "
        f"Connection is not available, request timed out after {30000 + i}ms, "
        f"host=db-{i % 13:02d}.prod.internal"
    )


def _quote(i: int) -> str:
    text = _ref_text(i)
    return text[text.index("order-service") : text.index(", host=")]


def _elided(i: int) -> str:
    return (
        f"ERROR  ORDER-SERVICE-{i} hikaripool-{i % 7 + 1} - Connection is not available，"
        f"request timed out … host＝db-{i % 13:02d}.prod.internal"
    )


def _session(n: int, excerpt: Callable[[int], str]) -> tuple[dict[str, Any], list[InvocationFacts]]:
    invocations = [
        InvocationFacts(1000 + i, "query_logs", (EvidenceRef("$.logs[0]", _ref_text(i)),)) for i in range(n)
    ]
    bindings = [
        {
            "source_type": "tool_trace",
            "source_id": "",
            "tool_name": "query_logs",
            "source_invocation_id": 1000 + i,
            "raw_path": "$.logs[0]",
            "evidence_excerpt": excerpt(i),
        }
        for i in range(n)
    ]
    evidence = {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "claim-1",
                "claim_type": "observation",
                "claim_text": "order-service HikariCP pools timed out.",
                "support_level": "direct",
                "evidence_bindings": bindings,
            }
        ],
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
    }
    return evidence, invocations


def _seconds(n: int, excerpt: Callable[[int], str], repeat: int) -> float:
    evidence, invocations = _session(n, excerpt)
    catalog = default_registry().catalog()
    result = check(evidence, invocations, catalog)
    if result.severity != "none" or len(result.checked_bindings) != n:
        raise SystemExit(f"bench input did not pass cleanly: {result.errors[:3]}")
    rounds = max(1, 10_000 // n)  # enough work per timing at the small sizes
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(rounds):
            check(evidence, invocations, catalog)
        best = min(best, (time.perf_counter() - start) / rounds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timings per size; the best is kept")
    figures.add_json_flag(parser)
    args = parser.parse_args()
    found: list[figures.Figure] = []
    raw: dict[str, list[float]] = {}
    print(
        f"excerpt lengths: quote {len(_quote(1234))} chars, "
        f"re-spaced with an ellipsis {len(_elided(1234))} chars"
    )
    for label, excerpt in (("verbatim quote", _quote), ("re-spaced excerpt with an ellipsis", _elided)):
        print(f"\n{label}")
        print(f"{'bindings':>10} {'seconds':>10} {'bindings/s':>12} {'us/binding':>11} {'cost ratio':>11}")
        base = 0.0
        rates = raw.setdefault(label, [])
        for n in SIZES:
            seconds = _seconds(n, excerpt, args.repeat)
            per = seconds / n
            base = base or per
            rates.append(n / seconds)
            print(f"{n:>10,} {seconds:>10.5f} {n / seconds:>12,.0f} {per * 1e6:>11.2f} {per / base:>11.2f}")
        sizes = f"{SIZES[0]:,} … {SIZES[-1]:,} bindings"
        found.append(figures.Figure(f"{label}, bindings/s over {sizes} (best of {args.repeat})",
                                    f"{min(rates):,.0f}–{max(rates):,.0f}", cache="warm"))  # fmt: skip
    what = "one executor output with N bindings checked against N invocations"
    figures.write(args.json, "bench_gatekeeper", what, found, raw)


if __name__ == "__main__":
    main()
