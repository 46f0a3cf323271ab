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

Per contestant and world it prints: correct; "model-authored": correct with no stage fallback
and every slot sentence of the answer written by the model (the LLM Composer rewrites code's
draft slot by slot; a slot text counts as the model's only if it passed the sentence check and
the slot checks, its facts and its language, and differs from code's draft after case and
whitespace: a copy of the draft is code's; for the offline agents every answer is theirs); the
model-written share of the slot sentences, and the answers with at least one model-written
sentence; correct with the evidence of a call the model made quoted by code (its planned calls,
or those it added where code's evidence ranked low); FAILED sessions; answers with an
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
import contextlib
import functools
import io
import logging
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.worlds (the labelled worlds and their judge)

from bench import figures  # noqa: E402
from bench.llm_tally import JSON, STAGES, Tally, account, raw, report  # noqa: E402
from evigate.server.agents.base import AgentBackend  # noqa: E402
from evigate.server.agents.llm import LLMSettings  # noqa: E402
from evigate.server.agents.mix import build_agents  # noqa: E402
from evigate.server.agents.offline import build_offline_backend  # noqa: E402
from evigate.server.sources.services import ServiceCatalog  # noqa: E402
from evigate.server.sources.signals import SignalCatalog  # noqa: E402
from evigate.storage import Database  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, reply  # noqa: E402
from tests.worlds import judge  # noqa: E402
from tests.worlds.live import AgentsFor, offline_agents, start_live_sources  # noqa: E402

PRESETS = {
    "llm": dict.fromkeys(STAGES, "llm"),
    "offline+llm": {"planner": "offline", "executor": "offline", "verifier": "llm", "composer": "llm"},
    "llm+offline": {"planner": "llm", "executor": "llm", "verifier": "offline", "composer": "offline"},
}
NONSENSE = (
    "Thank you for your question. Monitoring is a journey rather than a destination, and every "
    "service has its seasons. I would suggest reflecting on the broader picture before acting."
)


def parse_mix(text: str) -> dict[str, str]:
    if text in PRESETS:
        return PRESETS[text]
    short = {"p": "planner", "e": "executor", "v": "verifier", "c": "composer"}
    mix = dict.fromkeys(STAGES, "offline")
    for part in text.split(","):
        key, _, value = part.partition("=")
        mix[short.get(key, key)] = value
    return mix


async def run_contestant(
    name: str,
    agents: AgentsFor,
    llm_stages: set[str],
    world: str,
    *,
    db: Database,
    args: argparse.Namespace,
    live: Any,
    asked_one: Callable[[Tally], None] = lambda tally: None,
) -> Tally:
    """One contestant on `world`'s questions, one question at a time so that each verdict line is
    printed (and `asked_one` told) as soon as the session ends: a CPU model takes minutes each."""
    tally = Tally()
    asked = judge.select(judge.questions(world), only=args.cases, limit=args.limit)
    if args.cases:  # in the order given: a run cut short has asked the first ones
        asked.sort(key=lambda q: args.cases.index(q.id))
    with tempfile.TemporaryDirectory(prefix=f"bench-llm-{name}-") as tmp, tally.tokens.counting():
        for question in asked:
            (judged,) = await judge.run_world(
                world, db, live, Path(tmp), agents=agents, seconds=args.timeout, only=[question.id]
            )
            trace = await db.repo.get_trace(judged.session_id)
            assert trace is not None
            line = account(tally, judged, trace, llm_stages)
            print(f"  [{name} {world}] {judged.question.id:<36} {line}", flush=True)
            if args.show:
                print("      answer: " + judged.answer.replace("\n", "\n              ")[:1200])
            asked_one(tally)
    return tally


def llm_agents(mix: dict[str, str], settings: LLMSettings) -> AgentsFor:
    def build(services: ServiceCatalog | None, signals: SignalCatalog | None) -> AgentBackend:
        offline = build_offline_backend(catalog=services, signals=signals)
        return build_agents(mix, settings, offline=offline)

    return build


async def main_async(args: argparse.Namespace) -> None:
    logging.getLogger().addHandler(logging.NullHandler())  # quiet, but the llm.call lines still count
    found: list[figures.Figure] = []
    measured: list[JSON] = []
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
                    tallies: dict[str, Tally] = {}
                    for name, (agents, llm_stages) in contestants.items():
                        saved = functools.partial(
                            save,
                            args=args,
                            found=found,
                            measured=measured,
                            world=world,
                            tallies=tallies,
                            name=name,
                        )
                        tallies[name] = await run_contestant(
                            name, agents, llm_stages, world, db=db, args=args, live=live, asked_one=saved
                        )
                finally:
                    if live is not None:
                        live.stop()
                found += report(world, tallies, args.server_cache)
                measured.append(raw(world, tallies))
        finally:
            await db.close()
    write(args, found, measured)


def save(
    tally: Tally,
    *,
    args: argparse.Namespace,
    found: list[figures.Figure],
    measured: list[JSON],
    world: str,
    tallies: dict[str, Tally],
    name: str,
) -> None:
    """What is measured so far, written after each question: a run cut short keeps its figures."""
    so_far = {**tallies, name: tally}
    with contextlib.redirect_stdout(io.StringIO()):
        rows = found + report(world, so_far, args.server_cache)
    partial = f"partial: {name} asked {tally.sessions} questions of {world}"
    write(args, rows, [*measured, raw(world, so_far)], partial)


def write(
    args: argparse.Namespace, found: list[figures.Figure], measured: list[JSON], partial: str = ""
) -> None:
    what = f"offline agents, a null model and {args.model or 'no model'} on {', '.join(args.world)}"
    if args.cases or args.limit:
        chosen = f"{len(args.cases)} chosen" if args.cases else f"the first {args.limit} of each world's"
        what += f" (a subset: {chosen} questions)"
    if args.label:
        what += f"; {args.label}"
    if partial:
        what += f" ({partial})"
    figures.write(args.json, "bench_llm", what, found, measured)


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
    parser.add_argument("--cases", nargs="*", help="only these question ids, asked in this order")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions of each world")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per session (and per request)")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--show", action="store_true", help="print each answer")
    parser.add_argument(
        "--server-cache",
        default="-",
        choices=figures.CACHES,
        help="the model server's state when the run began (cold: just started), for the time figures",
    )
    parser.add_argument("--label", default="", help="how the model was run (threads, load), for the table")
    parser.add_argument("--json-mode", default="auto", choices=["auto", "json_object", "json_schema", "off"])
    figures.add_json_flag(parser)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
