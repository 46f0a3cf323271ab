"""The sentence check's cost per answer, on real answers.

Run: .venv/bin/python bench/bench_sentence_check.py [--repeat 20]

The answers are the sentence check's golden corpus (tests/golden/sentence_check/corpus.json): each
case is one answer of one to eight sentences written over a real session of the demo or tidewater
world (its material: tests/golden/sentence_check/sessions/), valid or false. Each answer is checked
`--repeat` times, the material prepared anew every time (as the pipeline does once per answer);
prints the answers' size, the cost per answer (p50, p99, max) and per sentence, and the token layer
(rules.answer_check) alone for comparison. The cost is CPU time of this process (what the check
spends, whatever else the machine runs); wall time is printed beside it. Target: p50 under 5 ms per
answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from evigate.rules import answer_check
from evigate.rules.sentence_check import check, token_material
from evigate.rules.sentence_types import Sentence, SentenceMaterial, material_from_seed

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "sentence_check"
TARGET_P50_MS = 5.0


def _answers() -> list[tuple[str, list[Sentence], SentenceMaterial]]:
    sessions: dict[str, Any] = {}
    for path in sorted((GOLDEN / "sessions").glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            sessions[f"{path.stem}/{key}"] = value
    out = []
    for case in json.loads((GOLDEN / "corpus.json").read_text(encoding="utf-8"))["cases"]:
        material = material_from_seed({**sessions[case["session"]], "language": case["language"]})
        out.append((case["id"], [Sentence.from_seed(s) for s in case["sentences"]], material))
    return out


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _time(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU and wall milliseconds of `repeat` runs."""
    cpu, wall = [], []
    for _ in range(repeat):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        run()
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start_wall) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="checks of each answer (default 20)")
    args = parser.parse_args()
    answers = _answers()
    rows: dict[str, list[float]] = {
        "sentence check per answer": [],
        "  per sentence": [],
        "  wall time per answer": [],
        "token layer alone": [],
    }
    for _, sentences, material in answers:
        check(sentences, material)  # the regexes compile once per process, not per answer
        cpu, wall = _time(partial(check, sentences, material), args.repeat)
        rows["sentence check per answer"].append(cpu)
        rows["  per sentence"].append(cpu / max(1, len(sentences)))
        rows["  wall time per answer"].append(wall)
        texts = [s.text for s in sentences]
        tokens, _ = _time(partial(answer_check.check_texts, texts, token_material(material)), args.repeat)
        rows["token layer alone"].append(tokens)
    sizes = [len(s) for _, s, _ in answers]
    chars = [sum(len(x.text) for x in s) for _, s, _ in answers]
    excerpts = [sum(len(c.excerpts) or 1 for c in m.claims) for _, _, m in answers]
    print(f"answers: {len(answers)} (corpus cases over real sessions), repeat {args.repeat}")
    print(f"sentences per answer: mean {statistics.mean(sizes):.1f}, max {max(sizes)}")
    print(f"characters per answer: mean {statistics.mean(chars):.0f}, max {max(chars)}")
    print(f"excerpts in the material: mean {statistics.mean(excerpts):.1f}, max {max(excerpts)}")
    print(f"{'CPU time':28} {'p50':>8} {'p99':>8} {'max':>8}")
    for name, values in rows.items():
        p50, p99 = _percentile(values, 0.5), _percentile(values, 0.99)
        print(f"{name:28} {p50:7.2f}ms {p99:7.2f}ms {max(values):7.2f}ms")
    p50 = _percentile(rows["sentence check per answer"], 0.5)
    verdict = "meets" if p50 < TARGET_P50_MS else "misses"
    print(f"p50 {p50:.2f} ms CPU per answer {verdict} the {TARGET_P50_MS:.0f} ms target")


if __name__ == "__main__":
    main()
