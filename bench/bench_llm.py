"""What a model adds: the offline agents, a null model and your model on the same labelled questions.

    .venv/bin/python bench/bench_llm.py [--base-url http://127.0.0.1:8080/v1 --model NAME]
        [--world demo tidewater kestrel] [--mix llm] [--cases ID ...] [--limit N] [--timeout S]

In one run, on each world's labelled questions (tests/worlds/<world>/questions.json, judged by
tests/worlds/judge.py, the same judge as the worlds' tests), three contestants answer:
  offline   the offline agents alone, as `evigate serve` runs by default;
  null      every stage on a null model: an OpenAI-compatible endpoint (started here, on loopback)
            that answers every request with prose nonsense, so whatever it gets right, the offline
            fallbacks earned;
  model     every stage (or the stages `--mix` names) on the endpoint of `--base-url`, if given.

Per contestant and world it prints: correct; correct with no stage fallback and an answer the
Composer wrote ("model-authored": what the model earned itself; for the offline agents every
answer is theirs); correct with the evidence of a call the model made quoted by code (its planned
calls, or those it added where code's evidence ranked low); FAILED sessions; answers with an
unsupported fact, an over-statement, a placeholder not in any tool result, or "could not check"
said as "nothing found" (the judge's counters, which are 0 for code); stage fallbacks per stage
and why; seconds and tokens per stage.
Then the headline: the model's gain over the offline agents on the questions the offline agents
miss (recovered), and what it lost of theirs (lost). Storage is a scratch SQLite file; kestrel's
alerts and metrics are served live by a VictoriaMetrics and an Alertmanager started here.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.worlds (the labelled worlds and their judge)

from bench import figures  # noqa: E402
from evigate.server.agents.base import BY_CODE, OFFLINE_FALLBACK, AgentBackend  # noqa: E402
from evigate.server.agents.llm import LLMSettings  # noqa: E402
from evigate.server.agents.llm.follow_up import (  # noqa: E402
    MODEL_ADDED_CALLS,
    MODEL_CALLS_QUOTED,
    MODEL_UNUSED,
)
from evigate.server.agents.llm.routing import VERIFIER_DISAGREEMENT  # noqa: E402
from evigate.server.agents.mix import build_agents  # noqa: E402
from evigate.server.agents.offline import build_offline_backend  # noqa: E402
from evigate.server.sources.services import ServiceCatalog  # noqa: E402
from evigate.server.sources.signals import SignalCatalog  # noqa: E402
from evigate.storage import Database  # noqa: E402
from evigate.storage.records import TraceRecord  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, reply  # noqa: E402
from tests.worlds import judge  # noqa: E402
from tests.worlds.live import AgentsFor, offline_agents, start_live_sources  # noqa: E402

JSON = dict[str, Any]
STAGES = ("planner", "executor", "verifier", "composer")
PRESETS = {
    "llm": dict.fromkeys(STAGES, "llm"),
    "offline+llm": {"planner": "offline", "executor": "offline", "verifier": "llm", "composer": "llm"},
    "llm+offline": {"planner": "llm", "executor": "llm", "verifier": "offline", "composer": "offline"},
}
NONSENSE = (
    "Thank you for your question. Monitoring is a journey rather than a destination, and every "
    "service has its seasons. I would suggest reflecting on the broader picture before acting."
)
_PLACEHOLDER = re.compile(r"<[a-z][a-z _,'-]{2,60}>")
# the Composer wrote the answer (not the offline Composer, not code)
_MODEL_SOURCES = frozenset({"composer", "composer_retry"})


def parse_mix(text: str) -> dict[str, str]:
    if text in PRESETS:
        return PRESETS[text]
    short = {"p": "planner", "e": "executor", "v": "verifier", "c": "composer"}
    mix = dict.fromkeys(STAGES, "offline")
    for part in text.split(","):
        key, _, value = part.partition("=")
        mix[short.get(key, key)] = value
    return mix


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
    authored: set[str] = field(default_factory=set)  # correct, no stage fallback, Composer-written
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
    source = (extras.get("answer_check") or {}).get("answer_source")
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
    return f"{'ok ' if judged.correct else 'BAD'} {trace.session.status:<7} {' '.join(flags)}"


async def run_contestant(
    name: str,
    agents: AgentsFor,
    llm_stages: set[str],
    world: str,
    *,
    db: Database,
    args: argparse.Namespace,
    live: Any,
) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix=f"bench-llm-{name}-") as tmp, tally.tokens.counting():
        judgements = await judge.run_world(
            world, db, live, Path(tmp), agents=agents, seconds=args.timeout, only=args.cases, limit=args.limit
        )
        for judged in judgements:
            trace = await db.repo.get_trace(judged.session_id)
            assert trace is not None
            line = account(tally, judged, trace, llm_stages)
            print(f"  [{name} {world}] {judged.question.id:<36} {line}", flush=True)
            if args.show:
                print("      answer: " + judged.answer.replace("\n", "\n              ")[:1200])
    return tally


def llm_agents(mix: dict[str, str], settings: LLMSettings) -> AgentsFor:
    def build(services: ServiceCatalog | None, signals: SignalCatalog | None) -> AgentBackend:
        offline = build_offline_backend(catalog=services, signals=signals)
        return build_agents(mix, settings, offline=offline)

    return build


def report(world: str, tallies: dict[str, Tally]) -> list[figures.Figure]:
    print(f"\nworld {world}")
    found: list[figures.Figure] = []
    # kestrel's questions were written before the code, but the code has since grown on them too
    sample = "in-sample"
    for name, t in tallies.items():
        n = max(1, t.sessions)
        print(
            f"  {name}: correct {len(t.correct)}/{t.sessions}, model-authored {len(t.authored)}, "
            f"with the model's calls quoted {len(t.assisted)} (model asked for calls in {t.model_calls})"
        )
        print(
            f"    FAILED {t.failed}; unsupported {t.unsupported}, over-statements {t.overstated}, "
            f"placeholders {t.placeholder}, could-not-check said as nothing found {t.unchecked_as_nothing}"
        )
        if t.by_code or t.disagreements:
            handed = ", ".join(f"{stage} {count}" for stage, count in sorted(t.by_code.items()))
            print(f"    handed to code: {handed or 'none'}; verifier disagreements {t.disagreements}")
        if t.fallbacks:
            shown = ", ".join(
                f"{stage} ({why}) {count}" for (stage, why), count in sorted(t.fallbacks.items())
            )
            print(f"    fallbacks: {shown}")
        for stage in STAGES:
            if t.seconds[stage] or t.tokens.calls[stage]:
                calls = max(1, t.tokens.calls[stage])
                print(
                    f"    {stage:<9} {t.seconds[stage] / n:7.2f} s/session {t.tokens.tokens[stage] / n:8.0f} "
                    f"tokens/session ({t.tokens.calls[stage]} calls, "
                    f"{t.tokens.prompt[stage] / calls:.0f} prompt tokens/call; estimated "
                    f"{t.tokens.estimated[stage] / calls:.0f}/call, "
                    f"{t.tokens.new[stage] / calls:.0f} after the shared prefix)"
                )

        found.append(
            figures.Figure(
                f"bench_llm {world}, {name}: correct / model-authored / model's calls quoted / "
                "unsupported / FAILED",
                f"{len(t.correct)}/{t.sessions} / {len(t.authored)} / {len(t.assisted)} / "
                f"{t.unsupported} / {t.failed}",
                sample,
            )
        )
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


async def main_async(args: argparse.Namespace) -> None:
    logging.getLogger().addHandler(logging.NullHandler())  # quiet, but the llm.call lines still count
    found: list[figures.Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp, FakeOpenAI(default=reply(NONSENSE)) as null:
        db = await Database.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}", pool_size=5)
        settings = LLMSettings(
            base_url=null.base_url,
            model="null",
            timeout_s=args.timeout,
            max_retries=1,
            max_tokens=args.max_tokens,
        )
        contestants: dict[str, tuple[AgentsFor, set[str]]] = {
            "offline": (offline_agents, set()),
            "null": (llm_agents(PRESETS["llm"], settings), set(STAGES)),
        }
        if args.base_url:
            mix = parse_mix(args.mix)
            model = LLMSettings(
                base_url=args.base_url,
                api_key=args.api_key,
                model=args.model,
                timeout_s=args.timeout,
                max_retries=1,
                max_tokens=args.max_tokens,
                json_mode=args.json_mode,
            )
            contestants["model"] = (llm_agents(mix, model), {s for s, b in mix.items() if b == "llm"})
        try:
            for world in args.world:
                live = None
                if world in judge.LIVE_WORLDS:
                    live = start_live_sources(judge.DATA_DIRS[world], Path(tmp) / world / "servers")
                try:
                    tallies = {}
                    for name, (agents, llm_stages) in contestants.items():
                        tallies[name] = await run_contestant(
                            name, agents, llm_stages, world, db=db, args=args, live=live
                        )
                finally:
                    if live is not None:
                        live.stop()
                found += report(world, tallies)
        finally:
            await db.close()
    what = f"offline agents, a null model and {args.model or 'no model'} on {', '.join(args.world)}"
    figures.write(args.json, "bench_llm", what, found)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--base-url", help="the model's OpenAI-compatible endpoint (none: offline and null only)"
    )
    parser.add_argument("--model", default="")
    parser.add_argument("--api-key", default="")
    parser.add_argument(
        "--world", nargs="+", choices=sorted(judge.DATA_DIRS), default=["demo", "tidewater", "kestrel"]
    )
    parser.add_argument(
        "--mix", default="llm", help="the model's stages: llm, offline+llm, llm+offline or p=..,e=.."
    )
    parser.add_argument("--cases", nargs="*", help="only these question ids")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions of each world")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per session (and per request)")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--show", action="store_true", help="print each answer")
    parser.add_argument("--json-mode", default="auto", choices=["auto", "json_object", "json_schema", "off"])
    figures.add_json_flag(parser)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
