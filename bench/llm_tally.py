"""bench_llm's accounts: per contestant and world, what the judge said of each answer, which stages
fell back or were handed to code, and the model's seconds and tokens per stage (from the client's
`llm.call` log lines); then the printed table, the README figures and the raw measurements."""

from __future__ import annotations

import collections
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench import figures
from evigate.server.agents.base import BY_CODE, OFFLINE_FALLBACK
from evigate.server.agents.llm.follow_up import MODEL_ADDED_CALLS, MODEL_CALLS_QUOTED, MODEL_UNUSED
from evigate.server.agents.llm.routing import VERIFIER_DISAGREEMENT
from evigate.storage.records import TraceRecord
from tests.worlds import judge

JSON = dict[str, Any]
STAGES = ("planner", "executor", "verifier", "composer")
_PLACEHOLDER = re.compile(r"<[a-z][a-z _,'-]{2,60}>")
# the model wrote every slot sentence of the answer (not code's draft, not the offline Composer)
_MODEL_SOURCES = frozenset({"composer"})


class TokenCounter(logging.Handler):
    """Tokens, prompt tokens and calls per stage, from the client's `llm.call` log lines (stage,
    model, attempt, outcome, latency, tokens, prompt tokens as the server counts them, then the
    client's upper estimate of the prompt tokens and of those after the prefix the request shares
    with the one before it: what a server that keeps its cache reads)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.tokens: collections.Counter[str] = collections.Counter()
        self.prompt: collections.Counter[str] = collections.Counter()
        self.estimated: collections.Counter[str] = collections.Counter()
        self.new: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        # seconds waiting on the model
        self.request_seconds: collections.defaultdict[str, float] = collections.defaultdict(float)

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("llm.call") and isinstance(record.args, tuple) and len(record.args) == 9:
            if record.args[3] != "ok":
                return  # a failed attempt read nothing the server counted
            stage = str(record.args[0])
            self.tokens[stage] += int(str(record.args[5]))
            self.prompt[stage] += int(str(record.args[6]))
            self.estimated[stage] += int(str(record.args[7]))
            self.new[stage] += int(str(record.args[8]))
            self.calls[stage] += 1
            self.request_seconds[stage] += float(str(record.args[4])) / 1000

    @contextmanager
    def counting(self) -> Iterator[TokenCounter]:
        llm_log = logging.getLogger("evigate.llm")
        llm_log.setLevel(logging.INFO)  # the per-call lines (with tokens) are INFO
        llm_log.addHandler(self)
        try:
            yield self
        finally:
            llm_log.removeHandler(self)


@dataclass
class Tally:
    """One contestant on one world."""

    sessions: int = 0
    asked: set[str] = field(default_factory=set)
    correct: set[str] = field(default_factory=set)
    # correct, no stage fallback, and every slot sentence of the answer written by the model
    authored: set[str] = field(default_factory=set)
    slots: int = 0  # slot sentences of the answers the model's Composer was asked to rewrite
    model_sentences: int = 0  # of those, the model's: passed the check and differ from code's draft
    with_model_sentence: int = 0  # answers with at least one model-written sentence
    # correct, with evidence of a call the model made (planned or added) quoted by code
    assisted: set[str] = field(default_factory=set)
    model_calls: int = 0  # sessions where the model added calls after code's evidence ranked low
    failed: int = 0
    unsupported: int = 0
    overstated: int = 0
    unchecked_as_nothing: int = 0
    placeholder: int = 0
    fallbacks: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    by_code: collections.Counter[str] = field(default_factory=collections.Counter)  # stages code handled
    disagreements: int = 0  # a model REJECT of code's verified claims, recorded, code's verdict kept
    seconds: collections.defaultdict[str, float] = field(
        default_factory=lambda: collections.defaultdict(float)
    )
    tokens: TokenCounter = field(default_factory=TokenCounter)
    session_seconds: list[float] = field(default_factory=list)  # each session, first event to last
    lines: dict[str, str] = field(default_factory=dict)  # question id -> the verdict line


def placeholders(answer: str, trace: TraceRecord) -> list[str]:
    """Prompt placeholders (`<pod>`) in the answer that no tool result of the session holds (a
    runbook's own `<pod>`, quoted, is the runbook's text, not a placeholder left unfilled)."""
    material = " ".join(
        json.dumps([inv.raw_result, inv.retrieval_details], ensure_ascii=False, default=str)
        for inv in trace.invocations
    )
    return [p for p in _PLACEHOLDER.findall(answer) if p not in material]


_ASKED_FOR_CALLS = "calls asked, "


def _why(note: JSON) -> str:
    return str(note.get("detail", "")).split(":", 1)[0]


def account(tally: Tally, judged: judge.Judgement, trace: TraceRecord, llm_stages: set[str]) -> str:
    extras = trace.session.extras or {}
    q = judged.question
    tally.sessions += 1
    tally.asked.add(q.id)
    tally.failed += trace.session.status == "FAILED"
    elapsed = (trace.session.updated_at - trace.session.created_at).total_seconds()
    tally.session_seconds.append(elapsed)
    for latency in extras.get("stage_latencies") or []:
        tally.seconds[str(latency["stage"])] += float(latency["latency_ms"]) / 1000
    # a stage that ran offline, and a request for calls whose reply was unusable (code's stood)
    fell = [
        (str(n.get("stage")), _ASKED_FOR_CALLS * (n.get("kind") == MODEL_UNUSED) + _why(n))
        for n in extras.get("stage_notes") or []
        if n.get("kind") in (OFFLINE_FALLBACK, MODEL_UNUSED)
    ]
    tally.fallbacks.update(fell)
    notes = extras.get("stage_notes") or []
    handed = sorted({str(n.get("stage")) for n in notes if n.get("kind") == BY_CODE})
    tally.by_code.update(handed)
    tally.disagreements += sum(n.get("kind") == VERIFIER_DISAGREEMENT for n in notes)
    tally.model_calls += any(n.get("kind") == MODEL_ADDED_CALLS for n in notes)
    quoted = any(n.get("kind") == MODEL_CALLS_QUOTED for n in notes)
    check = extras.get("answer_check") or {}
    source = check.get("answer_source")
    slots = check.get("slots") or {}
    tally.slots += int(slots.get("slots") or 0)
    tally.model_sentences += int(slots.get("model_sentences") or 0)
    tally.with_model_sentence += bool(slots.get("model_sentences"))
    # model-authored: every model stage wrote its own output (no fallback, no hand-over to code)
    authored = (
        bool(llm_stages)
        and not fell
        and not handed
        and ("composer" not in llm_stages or source in _MODEL_SOURCES)
    ) or not llm_stages
    unfilled = placeholders(judged.answer, trace)
    tally.unsupported += bool(judged.unsupported)
    tally.overstated += judged.overstated
    tally.unchecked_as_nothing += judged.unchecked_as_nothing
    tally.placeholder += bool(unfilled)
    if judged.correct:
        tally.correct.add(q.id)
        if authored:
            tally.authored.add(q.id)
        if quoted:
            tally.assisted.add(q.id)
    flags = [f"unsupported={judged.unsupported}"] if judged.unsupported else []
    flags += ["OVERSTATED"] if judged.overstated else []
    flags += [f"PLACEHOLDER={unfilled}"] if unfilled else []
    flags += ["offline:" + ",".join(f"{stage}({why})" for stage, why in fell)] if fell else []
    flags += ["by code:" + ",".join(handed)] if handed else []
    flags += ["model's calls quoted"] if quoted else []
    flags += [f"answer by {source}"] if source and source not in _MODEL_SOURCES else []
    if slots:
        flags += [f"model sentences {slots.get('model_sentences', 0)}/{slots.get('slots', 0)}"]
    line = f"{'ok ' if judged.correct else 'BAD'} {trace.session.status:<7} {elapsed:6.1f}s {' '.join(flags)}"
    tally.lines[q.id] = line
    return line


def sample_of(world: str) -> str:
    """demo and tidewater grew with the code; kestrel and osprey were written questions-first, and the
    code has been worked on since with them in view (bench/figures.py)."""
    return "in-sample" if world in ("demo", "tidewater") else "questions-first"


def _print_tally(name: str, t: Tally) -> None:
    n = max(1, t.sessions)
    print(
        f"  {name}: correct {len(t.correct)}/{t.sessions}, model-authored {len(t.authored)}, "
        f"with the model's calls quoted {len(t.assisted)} (model asked for calls in {t.model_calls})"
    )
    print(
        f"    FAILED {t.failed}; unsupported {t.unsupported}, over-statements {t.overstated}, "
        f"placeholders {t.placeholder}, could-not-check said as nothing found {t.unchecked_as_nothing}"
    )
    if t.slots:
        print(f"    model-written sentences: {model_written(t)}")
    if t.session_seconds:
        ordered = sorted(t.session_seconds)
        print(
            f"    seconds per session: mean {sum(ordered) / len(ordered):.1f}, "
            f"median {ordered[len(ordered) // 2]:.1f}, max {ordered[-1]:.1f}"
        )
    if t.by_code or t.disagreements:
        handed = ", ".join(f"{stage} {count}" for stage, count in sorted(t.by_code.items()))
        print(f"    handed to code: {handed or 'none'}; verifier disagreements {t.disagreements}")
    if t.fallbacks:
        shown = ", ".join(f"{stage} ({why}) {count}" for (stage, why), count in sorted(t.fallbacks.items()))
        print(f"    fallbacks: {shown}")
    for stage in STAGES:
        if t.seconds[stage] or t.tokens.calls[stage]:
            calls = max(1, t.tokens.calls[stage])
            print(
                f"    {stage:<9} {t.seconds[stage] / n:7.2f} s/session "
                f"({t.tokens.request_seconds[stage] / n:.2f} waiting on the model) "
                f"{t.tokens.tokens[stage] / n:8.0f} tokens/session ({t.tokens.calls[stage]} calls, "
                f"{t.tokens.prompt[stage] / calls:.0f} prompt tokens/call; estimated "
                f"{t.tokens.estimated[stage] / calls:.0f}/call, "
                f"{t.tokens.new[stage] / calls:.0f} after the shared prefix)"
            )


def model_written(t: Tally) -> str:
    """The model's share of the slot sentences, and how many answers hold at least one of its."""
    share = f"{100 * t.model_sentences / t.slots:.0f}%" if t.slots else "-"
    return (
        f"{t.model_sentences} of {t.slots} slot sentences ({share}); "
        f"answers with >=1 model sentence {t.with_model_sentence}/{t.sessions}"
    )


def _stage_figures(world: str, name: str, t: Tally, sample: str, cache: str) -> list[figures.Figure]:
    """Where a model contestant's time and tokens went: per session, and per stage."""
    n = max(1, t.sessions)
    ordered = sorted(t.session_seconds) or [0.0]
    found = [
        figures.Figure(
            f"bench_llm {world}, {name}: seconds per session, mean / median / max",
            f"{sum(ordered) / len(ordered):.0f} / {ordered[len(ordered) // 2]:.0f} / {ordered[-1]:.0f} s",
            sample,
            cache,
        )
    ]
    stages = [s for s in STAGES if t.tokens.calls[s]]
    if stages:
        per_stage = "; ".join(
            f"{s} {t.tokens.calls[s] / n:.1f} calls, {t.tokens.prompt[s] / n:.0f} prompt + "
            f"{(t.tokens.tokens[s] - t.tokens.prompt[s]) / n:.0f} completion tokens, "
            f"{t.tokens.request_seconds[s] / n:.0f} s"
            for s in stages
        )
        found.append(
            figures.Figure(
                f"bench_llm {world}, {name}: model requests per session, by stage", per_stage, sample, cache
            )
        )
    if t.fallbacks:
        fell = ", ".join(f"{stage} ({why}) {count}" for (stage, why), count in sorted(t.fallbacks.items()))
        found.append(figures.Figure(f"bench_llm {world}, {name}: stage fallbacks (why)", fell, sample))
    return found


def report(world: str, tallies: dict[str, Tally], cache: str = "-") -> list[figures.Figure]:
    print(f"\nworld {world}")
    found: list[figures.Figure] = []
    sample = sample_of(world)
    for name, t in tallies.items():
        _print_tally(name, t)
        found.append(
            figures.Figure(
                f"bench_llm {world}, {name}: correct / model-authored / model's calls quoted / "
                "unsupported / FAILED",
                f"{len(t.correct)}/{t.sessions} / {len(t.authored)} / {len(t.assisted)} / "
                f"{t.unsupported} / {t.failed}",
                sample,
            )
        )
        if name != "offline":
            found.append(
                figures.Figure(
                    f"bench_llm {world}, {name}: model-written slot sentences; answers with >=1",
                    model_written(t),
                    sample,
                )
            )
        if name == "model":
            found += _stage_figures(world, name, t, sample, cache)
    offline = tallies["offline"]
    for name, t in tallies.items():
        if name == "offline":
            continue
        missed = (offline.asked & t.asked) - offline.correct
        recovered, lost = len(missed & t.correct), len((offline.correct & t.asked) - t.correct)
        print(f"  {name} over offline: recovered {recovered} of {len(missed)} offline misses, lost {lost}")
        found.append(
            figures.Figure(
                f"bench_llm {world}, {name}: offline misses recovered / offline answers lost",
                f"{recovered} of {len(missed)} / {lost}",
                sample,
            )
        )
    return found


def raw(world: str, tallies: dict[str, Tally]) -> JSON:
    """Each contestant's verdict line per question, and its seconds and tokens per stage."""
    return {
        "world": world,
        "contestants": {
            name: {
                "lines": t.lines,
                "session_seconds": t.session_seconds,
                "stage_seconds": dict(t.seconds),
                "request_seconds": dict(t.tokens.request_seconds),
                "calls": dict(t.tokens.calls),
                "tokens": dict(t.tokens.tokens),
                "prompt_tokens": dict(t.tokens.prompt),
                "estimated_new_tokens": dict(t.tokens.new),
                "fallbacks": {f"{stage} ({why})": c for (stage, why), c in t.fallbacks.items()},
                "by_code": dict(t.by_code),
                "disagreements": t.disagreements,
                "slot_sentences": t.slots,
                "model_sentences": t.model_sentences,
                "answers_with_model_sentence": t.with_model_sentence,
            }
            for name, t in tallies.items()
        },
    }
