"""The pipeline on a real model: any OpenAI-compatible endpoint, the demo world's questions.

    .venv/bin/python bench/bench_llm.py --base-url http://127.0.0.1:8080/v1 --model NAME
        [--world DIR] [--mix llm offline+llm ...] [--cases ID ...] [--limit N] [--timeout S]

Runs each question of tests/pipeline/test_demo_questions.py (the demo world) and, with `--world DIR`,
each question of DIR/questions.json on DIR's data. That file is either a labelled world as under
tests/worlds/ ({"questions": [...]} with `must`, `must_not`, `tools`, judged by tests/worlds/judge.py,
e.g. `--world tests/worlds/tidewater`) or a list of {"id", "query", "language", "verdict",
"claim_types"} (the verdict and the first claim types a correct answer has). Each session runs once
per stage-backend mix (`--mix`):
  llm           every stage on the model
  offline+llm   offline Planner and Executor, LLM Verifier and Composer
  llm+offline   LLM Planner and Executor, offline Verifier and Composer
  p=..,e=..,v=..,c=..  any other mix (offline | llm per stage)
LLM stages fall back to offline (the default); the fallbacks are counted.

Prints per mix: sessions, SUCCESS / FAILED, verdicts, correct (demo questions: the expected verdict
and claims about the question's service, alert and facts, as tests/pipeline/test_demo_questions
judges them; a world's questions: tests/worlds/judge; a plain list: verdict and first claim
types), answers with a fact that is in no tool result of the session (must be 0), answers holding a
prompt placeholder (must be 0), stage fallbacks, tool calls per session, and seconds and tokens per
stage. Storage is a scratch SQLite file.
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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.pipeline (the demo questions); evigate is installed

from bench import figures  # noqa: E402
from evigate.rules import answer_check  # noqa: E402
from evigate.rules.catalog import load_catalog  # noqa: E402
from evigate.server.agents.llm import LLMSettings  # noqa: E402
from evigate.server.agents.mix import build_agents  # noqa: E402
from evigate.server.agents.offline import build_offline_backend  # noqa: E402
from evigate.server.deadline import Deadline  # noqa: E402
from evigate.server.pipeline import Pipeline  # noqa: E402
from evigate.server.pipeline.events import ChatResult  # noqa: E402
from evigate.server.pipeline.orchestrator import PipelineSettings  # noqa: E402
from evigate.server.skills import load_skills  # noqa: E402
from evigate.server.tools import build_backend  # noqa: E402
from evigate.storage import Database  # noqa: E402
from evigate.storage.records import TraceRecord  # noqa: E402
from tests.pipeline.test_demo_questions import answers_the_case  # noqa: E402
from tests.worlds import judge  # noqa: E402

JSON = dict[str, Any]
STAGES = ("planner", "executor", "verifier", "composer")
PRESETS = {
    "llm": dict.fromkeys(STAGES, "llm"),
    "offline+llm": {"planner": "offline", "executor": "offline", "verifier": "llm", "composer": "llm"},
    "llm+offline": {"planner": "llm", "executor": "llm", "verifier": "offline", "composer": "offline"},
}
_PLACEHOLDER = re.compile(r"<[a-z][a-z _,'-]{2,60}>")


@dataclass(frozen=True)
class Question:
    id: str
    query: str
    language: str
    verdict: str
    claim_types: tuple[str, ...]
    data_dir: Path | None  # None: the bundled demo world
    labelled: judge.Question | None = None  # a world's labelled question: judged by tests/worlds/judge
    demo: Any = None  # a demo case: judged by tests/pipeline/test_demo_questions.answers_the_case


def demo_questions() -> list[Question]:
    from tests.pipeline.test_demo_questions import CASES

    return [
        Question(c.id, c.query, c.language, c.verdict, tuple(x.claim_type for x in c.claims), None, demo=c)
        for c in CASES
    ]


def world_questions(world: Path) -> list[Question]:
    path = world / "questions.json"
    items = json.loads(path.read_text("utf-8"))
    if isinstance(items, dict):  # a labelled world (tests/worlds/*)
        return [Question(q.id, q.query, q.language, q.verdict or "", (), world, q) for q in judge.load(path)]
    return [
        Question(
            str(q["id"]),
            str(q["query"]),
            str(q.get("language", "zh")),
            str(q.get("verdict", "PASS")),
            tuple(q.get("claim_types", ())),
            world,
        )
        for q in items
    ]


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
    """Tokens per stage, from the client's `llm.call` log lines (stage, model, attempt, outcome,
    latency, tokens)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.tokens: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("llm.call") and isinstance(record.args, tuple) and len(record.args) == 6:
            stage, tokens = str(record.args[0]), int(record.args[5])  # type: ignore[call-overload]
            self.tokens[stage] += tokens
            self.calls[stage] += 1


def tool_material(trace: TraceRecord, query: str, language: str) -> answer_check.AnswerMaterial:
    """Everything this session's tools returned, and the question: an answer's fact outside it is
    a fact of no tool result."""
    facts = [query]
    for inv in trace.invocations:
        facts.append(inv.tool_name)
        facts.append(json.dumps(inv.arguments, ensure_ascii=False))
        facts.append(json.dumps(inv.raw_result, ensure_ascii=False))
        facts.extend(
            str(ref.get("text", "")) for ref in (inv.retrieval_details or {}).get("evidence_refs") or []
        )
        if inv.error:
            facts.append(inv.error)
    return answer_check.AnswerMaterial(facts=tuple(facts), language=language)


_FACT_RULES = {
    answer_check.UNSUPPORTED_NUMBER,
    answer_check.UNSUPPORTED_IDENTIFIER,
    answer_check.UNSUPPORTED_QUOTE,
    answer_check.UNSUPPORTED_ABSENCE,  # "nothing found" while every tool found something
}


@dataclass
class Tally:
    sessions: int = 0
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    verdicts: collections.Counter[str] = field(default_factory=collections.Counter)
    correct: int = 0
    unsupported: int = 0
    placeholder: int = 0
    fallbacks: collections.Counter[str] = field(default_factory=collections.Counter)
    tool_calls: int = 0
    seconds: collections.defaultdict[str, float] = field(
        default_factory=lambda: collections.defaultdict(float)
    )
    wall: float = 0.0


async def run_mix(
    name: str, mix: dict[str, str], questions: list[Question], settings: LLMSettings, args: argparse.Namespace
) -> tuple[Tally, TokenCounter]:
    counter = TokenCounter()
    llm_log = logging.getLogger("evigate.llm")
    llm_log.setLevel(logging.INFO)  # the per-call lines (with tokens) are INFO
    llm_log.addHandler(counter)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        db = await Database.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}", pool_size=5)
        pipelines: dict[Path | None, Pipeline] = {}
        try:
            for q in questions:
                pipeline = pipelines.get(q.data_dir)
                if pipeline is None:
                    tools = build_backend("fixture", q.data_dir, db.repo)
                    # The offline stages (and fallbacks) over the world's service catalog, as served.
                    offline = build_offline_backend(catalog=tools.services)
                    pipeline = Pipeline(
                        db.repo,
                        tools,
                        build_agents(mix, settings, offline=offline),
                        load_skills(),
                        load_catalog(),
                        PipelineSettings(owner="bench-llm"),
                    )
                    pipelines[q.data_dir] = pipeline
                started = time.perf_counter()
                result = await pipeline.run(q.query, None, q.language, Deadline.after(args.timeout))
                elapsed = time.perf_counter() - started
                trace = await db.repo.get_trace(result.session_id)
                assert trace is not None
                judged = judge.judge(q.labelled, result, trace.invocations) if q.labelled else None
                line = _account(tally, q, result, trace, elapsed, judged)
                print(f"  [{name}] {q.id:<32} {line}", flush=True)
                if args.show:
                    show(trace, result, judged)
        finally:
            for pipeline in pipelines.values():
                await pipeline.aclose()
            await db.close()
            logging.getLogger("evigate.llm").removeHandler(counter)
    return tally, counter


def _account(  # noqa: PLR0917 - one per thing a session is judged on
    tally: Tally,
    q: Question,
    result: ChatResult,
    trace: TraceRecord,
    elapsed: float,
    judged: judge.Judgement | None,
) -> str:
    status, verdict, answer = result.status, result.verdict, result.answer
    tally.sessions += 1
    tally.wall += elapsed
    tally.statuses[status] += 1
    word = str((verdict or {}).get("verdict", "-"))
    tally.verdicts[word] += 1
    extras = trace.session.extras or {}
    for latency in extras.get("stage_latencies") or []:
        tally.seconds[str(latency["stage"])] += float(latency["latency_ms"]) / 1000
    fell = [n["stage"] for n in extras.get("stage_notes") or [] if n.get("kind") == "offline_fallback"]
    tally.fallbacks.update(fell)
    tally.tool_calls += len(trace.invocations)
    checked = answer_check.check_text(answer, tool_material(trace, q.query, q.language), "answer")
    unsupported = [v.token for v in checked.violations if v.rule_id in _FACT_RULES]
    placeholder = bool(_PLACEHOLDER.search(answer))
    tally.unsupported += bool(unsupported)
    tally.placeholder += placeholder
    claims = (
        [c.get("claim_type") for c in (trace.rounds[-1].executor_output or {}).get("claims") or []]
        if trace.rounds
        else []
    )
    if judged is not None:
        correct = judged.correct
    elif q.demo is not None:
        correct = answers_the_case(q.demo, result, trace.invocations)
    else:
        correct = (
            status == "SUCCESS" and word == q.verdict and tuple(claims[: len(q.claim_types)]) == q.claim_types
        )
    tally.correct += correct
    flags = [f"unsupported={unsupported}"] if unsupported else []
    flags += ["PLACEHOLDER"] if placeholder else []
    flags += [f"offline:{','.join(fell)}"] if fell else []
    return (
        f"{status:<7} {word:<10} {'ok ' if correct else 'BAD'} {elapsed:6.1f}s "
        f"calls={len(trace.invocations)} {' '.join(flags)}"
    )


def show(trace: TraceRecord, result: ChatResult, judged: judge.Judgement | None) -> None:
    """Each round's claims and verdict, and the answer: what a wrong session did."""
    for r in trace.rounds:
        claims = (r.executor_output or {}).get("claims") or []
        verdict = (r.verdict or {}).get("verdict")
        print(f"      round {r.round}: {verdict}; parse {(r.parse_status or {}).get('status')}")
        for c in claims:
            print(f"        {c.get('claim_type')}: {str(c.get('claim_text'))[:160]!r}")
        gate = r.gatekeeper_result or {}
        for failure in [*(gate.get("errors") or []), *(gate.get("warnings") or [])][:4]:
            print(f"        gatekeeper: {json.dumps(failure, ensure_ascii=False)[:240]}")
        for check in (r.verdict or {}).get("claim_checks") or []:
            if isinstance(check, dict) and not check.get("supported", True):
                print(f"        verifier: {check.get('claim_id')}: {str(check.get('reason'))[:200]!r}")
    checked = (trace.session.extras or {}).get("answer_check") or {}
    for rejection in checked.get("rejections") or []:
        refused = [
            f"{v.get('rule_id')}:{str(v.get('token'))[:40]!r}" for v in rejection.get("violations") or []
        ]
        text = str((rejection.get("composer_output") or {}).get("user_facing_answer", ""))[:160]
        print(f"      composer attempt {rejection.get('attempt')} refused {refused[:4]}: {text!r}")
    if judged is not None and judged.problems:
        print(f"      problems: {judged.problems}")
    print("      answer: " + result.answer.replace("\n", "\n              ")[:1200])


def report(name: str, mix: dict[str, str], tally: Tally, tokens: TokenCounter) -> list[figures.Figure]:
    n = max(1, tally.sessions)
    print(f"\nmix {name}: " + ", ".join(f"{stage}={backend}" for stage, backend in mix.items()))
    print(f"  sessions            {tally.sessions}")
    print(f"  SUCCESS / FAILED    {tally.statuses['SUCCESS']} / {tally.statuses['FAILED']}")
    print(f"  verdicts            {dict(tally.verdicts)}")
    print(f"  correct             {tally.correct} ({tally.correct / n:.0%})")
    print(f"  unsupported facts   {tally.unsupported}   (answers with a fact in no tool result; must be 0)")
    print(f"  placeholder answers {tally.placeholder}   (must be 0)")
    print(f"  stage fallbacks     {dict(tally.fallbacks)}")
    print(f"  tool calls/session  {tally.tool_calls / n:.1f}")
    print(f"  seconds/session     {tally.wall / n:.1f}")
    seconds = tally.seconds
    for stage in STAGES:
        print(
            f"    {stage:<9} {seconds[stage] / n:7.1f} s/session  "
            f"{tokens.tokens[stage] / n:8.0f} tokens/session  ({tokens.calls[stage]} calls)"
        )
    # The demo questions (and a world's) are the ones the prompts were written against: in-sample.
    head = f"mix {name}, {tally.sessions} sessions"
    return [
        figures.Figure(
            f"{head}: SUCCESS / FAILED",
            f"{tally.statuses['SUCCESS']} / {tally.statuses['FAILED']}",
            "in-sample",
        ),
        figures.Figure(f"{head}: correct (the offline test's judge)", f"{tally.correct}", "in-sample"),
        figures.Figure(
            f"{head}: answers with an unsupported fact / a placeholder",
            f"{tally.unsupported} / {tally.placeholder}",
            "in-sample",
        ),
        figures.Figure(f"{head}: seconds per session", f"{tally.wall / n:.0f} s", "in-sample"),
    ]


async def main_async(args: argparse.Namespace) -> None:
    questions = demo_questions()
    if args.world is not None:
        questions += world_questions(args.world)
    if args.cases:
        questions = [q for q in questions if q.id in set(args.cases)]
    if args.limit:
        questions = questions[: args.limit]
    settings = LLMSettings(
        base_url=args.base_url,
        api_key=args.api_key,
        model=args.model,
        timeout=args.timeout,
        max_retries=1,
        max_tokens=args.max_tokens,
        json_mode=args.json_mode,
    )
    print(f"{len(questions)} questions, endpoint {args.base_url}, model {args.model}", flush=True)
    found: list[figures.Figure] = []
    for name in args.mix:
        mix = parse_mix(name)
        tally, tokens = await run_mix(name, mix, questions, settings, args)
        found += report(name, mix, tally, tokens)
    what = f"the pipeline on a real model ({args.model}), {len(questions)} questions"
    figures.write(args.json, "bench_llm", what, found)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default="")
    parser.add_argument("--world", type=Path, help="a second world: DIR with its data and questions.json")
    parser.add_argument("--mix", nargs="+", default=["llm", "offline+llm"])
    parser.add_argument("--cases", nargs="*", help="only these question ids")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per session (and per request)")
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--show", action="store_true", help="print each session's claims and answer")
    parser.add_argument("--json-mode", default="auto", choices=["auto", "json_object", "json_schema", "off"])
    figures.add_json_flag(parser)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
