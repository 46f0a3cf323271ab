"""The answer check (rules.answer_check): a table of one row per rule, the labelled corpus of Composer
outputs under tests/golden/answer_check/, a property (any number or identifier absent from the
allowed material is caught), and the offline composer passing by construction over every
reference and golden Gatekeeper session."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import answer_check as ac
from evigate.rules import answer_text, sentence_check
from evigate.rules.answer_check import AnswerMaterial, check
from evigate.rules.types import EvidenceRef, InvocationFacts
from evigate.server.agents.llm.prompt_loader import echo_phrases, load_prompt
from evigate.server.agents.offline.composer import compose
from evigate.server.pipeline import material
from evigate.server.pipeline.answer_check_stage import grounded_input, material_for
from evigate.storage.records import InvocationRecord
from tests.support.tool_table import check as gatekeeper_check

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CORPUS = json.loads((GOLDEN / "answer_check" / "corpus.json").read_text())

EXCERPT = (
    "alert=HighCPUUsage, service=payment-service, state=firing, current=92%, threshold=85%, duration=25m"
)
CLAIM = "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。"
QUESTION = "payment-service 现在有 HighCPUUsage 告警吗？"
ZH = AnswerMaterial(facts=(QUESTION, CLAIM, EXCERPT, "query_metrics"), language="zh")
EN = AnswerMaterial(facts=(QUESTION, CLAIM, EXCERPT, "query_metrics"), language="en")


def _answer(text: str, summary: str = "", actions: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"user_facing_answer": text, "answer_summary": summary, "recommended_actions": actions or []}


def _rules(output: dict[str, Any], m: AnswerMaterial) -> set[str]:
    return {v.rule_id for v in check(output, m).violations}


class Row(NamedTuple):
    name: str
    material: AnswerMaterial
    output: dict[str, Any]
    expect: set[str]


ROWS = [
    Row("verbatim claim passes", ZH, _answer(CLAIM), set()),
    Row(
        "nothing found over a firing alert",
        ZH,
        _answer("查询未检索到 HighCPUUsage 告警信息。"),
        {ac.UNSUPPORTED_ABSENCE},
    ),
    Row(
        "no alert was found, over a firing alert",
        EN,
        _answer("No HighCPUUsage alert was found."),
        {ac.UNSUPPORTED_ABSENCE},
    ),
    Row(
        "nothing found, from a negative observation",
        AnswerMaterial(facts=("当前查询未检索到 inventory-service 的 HikariCP 日志。",), language="zh"),
        _answer("没有查到 inventory-service 的 HikariCP 日志。"),
        set(),
    ),
    Row("92 % = 92%", ZH, _answer("payment-service 的 CPU 为 92 %。"), set()),
    Row("full-width digits and percent", ZH, _answer("payment-service 的 CPU 为９２％。"), set()),
    Row("92% = 0.92", ZH, _answer("payment-service 的 CPU 使用率 0.92。"), set()),
    Row("25m = 25 分钟", ZH, _answer("HighCPUUsage 已持续 25 分钟。"), set()),
    Row(
        "CPU inside HighCPUUsage", EN, _answer("payment-service CPU is high: HighCPUUsage is firing."), set()
    ),
    Row(ac.EMPTY, ZH, _answer(""), {ac.EMPTY}),
    Row("punctuation only is empty", EN, _answer(" ... "), {ac.EMPTY}),
    Row(ac.WRONG_LANGUAGE, EN, _answer(CLAIM), {ac.WRONG_LANGUAGE}),
    Row(ac.PLACEHOLDER, EN, _answer("The <service> has an alert."), {ac.PLACEHOLDER}),
    Row(
        ac.QUESTION_ECHO,
        AnswerMaterial(facts=ZH.facts, language="zh", question=QUESTION),
        _answer("payment-service 现在有 HighCPUUsage 告警吗？"),
        {ac.QUESTION_ECHO},
    ),
    Row(
        "an answer that says more than the question",
        AnswerMaterial(facts=ZH.facts, language="zh", question=QUESTION),
        _answer(CLAIM),
        set(),
    ),
    Row(
        ac.PIPELINE_TALK,
        EN,
        _answer("HighCPUUsage is firing, as supported by the executor output."),
        {ac.PIPELINE_TALK},
    ),
    Row(
        "a pipeline word the material holds",
        AnswerMaterial(facts=("task-executor logged ERROR RejectedExecutionException",), language="en"),
        _answer("task-executor logged ERROR RejectedExecutionException."),
        set(),
    ),
    Row(
        ac.PROMPT_ECHO,
        AnswerMaterial(
            facts=ZH.facts, language="en", forbidden=("Reply with one JSON object and nothing else",)
        ),
        _answer("Reply with one JSON object and nothing else. payment-service has HighCPUUsage."),
        {ac.PROMPT_ECHO},
    ),
    Row(ac.UNSUPPORTED_NUMBER, ZH, _answer("payment-service 的 CPU 为 99%。"), {ac.UNSUPPORTED_NUMBER}),
    Row("another unit", ZH, _answer("HighCPUUsage 已持续 25 小时。"), {ac.UNSUPPORTED_NUMBER}),
    Row(
        ac.UNSUPPORTED_IDENTIFIER,
        EN,
        _answer("payment-service runs on pod payment-service-abc12."),
        {ac.UNSUPPORTED_IDENTIFIER},
    ),
    Row("CamelCase class", EN, _answer("PaymentController is busy."), {ac.UNSUPPORTED_IDENTIFIER}),
    Row("ticket id", ZH, _answer("见工单 OPS-4711。"), {ac.UNSUPPORTED_IDENTIFIER}),
    Row(ac.UNSUPPORTED_QUOTE, ZH, _answer("日志写着“disk quota exceeded”。"), {ac.UNSUPPORTED_QUOTE}),
    Row(
        "a quote cut with an ellipsis",
        EN,
        _answer('The alert says "HighCPUUsage, service=payment-service … duration=25m".'),
        set(),
    ),
    Row(
        "a quote cut with an ellipsis, one span invented",
        EN,
        _answer('The alert says "HighCPUUsage … state=resolved".'),
        {ac.UNSUPPORTED_QUOTE},
    ),
    Row("a quote of the excerpt", ZH, _answer("告警内容为“state=firing, current=92%”。"), set()),
    Row(
        ac.UNSUPPORTED_ROOT_CAUSE,
        ZH,
        _answer("HighCPUUsage 告警的根因是内存泄漏。"),
        {ac.UNSUPPORTED_ROOT_CAUSE},
    ),
    Row("not knowing the cause is honest", ZH, _answer("目前无法确定 HighCPUUsage 的根因。"), set()),
    Row(
        "root cause from a root_cause claim",
        AnswerMaterial(
            facts=(*EN.facts, "a runaway batch job"), root_causes=("a runaway batch job",), language="en"
        ),
        _answer("The root cause is a runaway batch job."),
        set(),
    ),
    Row(
        ac.UNMARKED_HYPOTHESIS,
        AnswerMaterial(facts=ZH.facts, hypotheses=("cron-reindex 任务可能占满 CPU",), language="zh"),
        _answer("cron-reindex 任务占满了 CPU。"),
        {ac.UNMARKED_HYPOTHESIS},
    ),
    Row(
        "hypothesis marked unconfirmed",
        AnswerMaterial(facts=ZH.facts, hypotheses=("cron-reindex 任务可能占满 CPU",), language="zh"),
        _answer("待验证的方向（未经证实）：\n- cron-reindex 任务占满 CPU"),
        set(),
    ),
    Row(
        "action text is checked",
        EN,
        _answer(
            "payment-service has HighCPUUsage firing.",
            actions=[{"action_text": "Scale to 8 pods", "reason": ""}],
        ),
        {ac.UNSUPPORTED_NUMBER},
    ),
    Row(
        "summary is checked",
        ZH,
        _answer(CLAIM, summary="CPU 为 97%"),
        {ac.UNSUPPORTED_NUMBER},
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_rule_table(row: Row) -> None:
    assert _rules(row.output, row.material) == row.expect


def test_every_rule_has_a_row() -> None:
    covered = set().union(*(r.expect for r in ROWS))
    assert covered == set(ac.RULES)


def test_violation_names_field_and_token() -> None:
    output = _answer(CLAIM, actions=[{"action_text": "Open ticket OPS-4711", "reason": ""}])
    (violation,) = check(output, ZH).violations
    assert violation.to_seed() == {
        "rule_id": ac.UNSUPPORTED_IDENTIFIER,
        "field": "recommended_actions[0].action_text",
        "token": "ops-4711",
        "message": ac.RULES[ac.UNSUPPORTED_IDENTIFIER],
    }


@pytest.mark.parametrize("bad", [None, 42, [], {"x": 1}])
def test_adversarial_shapes_never_raise(bad: Any) -> None:
    output = {
        "user_facing_answer": bad,
        "answer_summary": bad,
        "recommended_actions": [bad, {"action_text": bad}],
    }
    assert ac.EMPTY in _rules(output, ZH)


# --- the labelled corpus -----------------------------------------------------------------------


def _world(name: str) -> AnswerMaterial:
    w = CORPUS["worlds"][name]
    # "forbidden_prompt": the instruction phrases of that real prompt, as the LLM backend passes them
    prompt = w.get("forbidden_prompt")
    return AnswerMaterial(
        facts=tuple(w["facts"]),
        hypotheses=tuple(w.get("hypotheses", ())),
        root_causes=tuple(w.get("root_causes", ())),
        language=w["language"],
        forbidden=echo_phrases(load_prompt(prompt)) if prompt else (),
        question=w.get("question", ""),
    )


def test_corpus_is_large_and_balanced() -> None:
    cases = CORPUS["cases"]
    languages = {CORPUS["worlds"][c["world"]]["language"] for c in cases}
    assert len(cases) >= 40 and languages == {"zh", "en"}
    assert sum(1 for c in cases if not c["expect"]) >= 15  # valid outputs: no false rejection
    assert set().union(*(set(c["expect"]) for c in cases)) == set(ac.RULES)


@pytest.mark.parametrize("case", CORPUS["cases"], ids=[c["name"] for c in CORPUS["cases"]])
def test_corpus_case(case: dict[str, Any]) -> None:
    result = check(case["output"], _world(case["world"]))
    assert sorted({v.rule_id for v in result.violations}) == case["expect"], result.to_seed()


# --- property: an inserted fact is always caught -----------------------------------------------

VALID = [c for c in CORPUS["cases"] if not c["expect"]]
_numbers = st.builds(
    lambda n, unit: f"{n}{unit}",
    st.integers(min_value=1000, max_value=99999),
    st.sampled_from(["", "%", "ms", " 条", "MB"]),
)
_identifiers = st.builds(
    lambda prefix, n, joiner: f"{prefix}{joiner}{n}",
    st.sampled_from(["OPS", "pod-api", "Db", "ERR", "node", "INC", "worker"]),
    st.integers(min_value=100, max_value=99999),
    st.sampled_from(["-", "_", "."]),
)
_camel = st.builds(
    lambda a, b: f"{a}{b}Handler",
    st.sampled_from(["Order", "Ledger", "Quota", "Shard"]),
    st.sampled_from(["Sync", "Flush", "Retry", "Batch"]),
)


_ips = st.builds(
    lambda parts: ".".join(map(str, parts)), st.tuples(*[st.integers(min_value=1, max_value=254)] * 4)
)
_urls = st.builds(
    lambda host, path: f"https://{host}.example.org/{path}",
    st.sampled_from(["wiki", "grafana", "runbooks", "jira"]),
    st.from_regex(r"[a-z]{3,8}/[a-z0-9]{2,6}", fullmatch=True),
)
_timestamps = st.builds(
    lambda day, h, m, iso: f"2031-05-{day:02d}{'T' if iso else ' '}{h:02d}:{m:02d}:00{'Z' if iso else ''}",
    st.integers(min_value=1, max_value=28),
    st.integers(min_value=0, max_value=23),
    st.integers(min_value=0, max_value=59),
    st.booleans(),
)
_paths = st.builds(
    lambda dirs, name: "/" + "/".join(dirs) + f"/{name}.log",
    st.lists(st.sampled_from(["var", "log", "opt", "srv", "data"]), min_size=1, max_size=3),
    st.sampled_from(["gc", "app", "audit", "slow"]),
)
_exceptions = st.builds(
    lambda pkg, a, kind: f"{pkg}{a}{kind}",
    st.sampled_from(["", "java.io.", "com.acme."]),
    st.sampled_from(["Ledger", "Quota", "Shard", "Cursor"]),
    st.sampled_from(["Exception", "Error", "TimeoutException"]),
)
_functions = st.builds(
    lambda verb, noun, snake: f"{verb}_{noun.lower()}()" if snake else f"{verb}{noun}()",
    st.sampled_from(["flush", "settle", "rebalance", "evict"]),
    st.sampled_from(["Ledger", "Cursor", "Shard"]),
    st.booleans(),
)


@settings(max_examples=400)
@given(
    case=st.sampled_from(VALID),
    fact=st.one_of(_numbers, _identifiers, _camel, _ips, _urls, _timestamps, _paths, _exceptions, _functions),
    where=st.sampled_from(["start", "end", "summary", "action"]),
)
def test_an_inserted_fact_is_always_caught(case: dict[str, Any], fact: str, where: str) -> None:
    m = _world(case["world"])
    everything = " ".join((*m.facts, *m.hypotheses)).lower()
    if fact.lower().split()[0] in everything:
        return  # not absent from the material after all
    output = dict(case["output"])
    if where == "start":
        output["user_facing_answer"] = f"{fact} {output['user_facing_answer']}"
    elif where == "end":
        output["user_facing_answer"] = f"{output['user_facing_answer']} ({fact})"
    elif where == "summary":
        output["answer_summary"] = f"{output['answer_summary']} {fact}"
    else:
        output["recommended_actions"] = [{"action_text": f"check {fact}", "reason": ""}]
    rules = _rules(output, m)
    assert rules & {ac.UNSUPPORTED_NUMBER, ac.UNSUPPORTED_IDENTIFIER}, (fact, output)


CPU_VALID = [c for c in VALID if c["world"] in {"cpu_zh", "cpu_en"}]  # current=92%, threshold=85%, 25m


@settings(max_examples=200)
@given(
    case=st.sampled_from(CPU_VALID),
    value=st.sampled_from(["92", "85", "25"]),
    unit=st.sampled_from(["ms", "小时", "天", "次", "倍", "hours", "days", "times", "GB", "MB"]),
)
def test_a_material_number_in_another_unit_is_caught(case: dict[str, Any], value: str, unit: str) -> None:
    """92% is not 92 ms, 25m is not 25 hours or 25 times: a number counts with its unit."""
    output = dict(case["output"])
    output["user_facing_answer"] = f"{output['user_facing_answer']} ({value} {unit})"
    assert _rules(output, _world(case["world"])) & {ac.UNSUPPORTED_NUMBER, ac.UNSUPPORTED_IDENTIFIER}


@settings(max_examples=200)
@given(
    case=st.sampled_from(VALID),
    words=st.from_regex(r"[a-z]{4,9}( [a-z]{4,9}){1,3}", fullmatch=True),
    marks=st.sampled_from([("“", "”"), ('"', '"'), ("「", "」"), ("‘", "’"), ("'", "'"), ("`", "`")]),
)
def test_an_inserted_quote_is_always_caught(case: dict[str, Any], words: str, marks: tuple[str, str]) -> None:
    m = _world(case["world"])
    if words in " ".join((*m.facts, *m.hypotheses)).lower():
        return  # not absent from the material after all
    output = dict(case["output"])
    output["user_facing_answer"] = f"{output['user_facing_answer']} {marks[0]}{words}{marks[1]}"
    assert ac.UNSUPPORTED_QUOTE in _rules(output, m), output


# --- the offline composer passes by construction -----------------------------------------------


def _records(invocations: list[dict[str, Any]]) -> list[InvocationRecord]:
    return [
        InvocationRecord(
            id=i["id"],
            session_id="s",
            tool_name=i["tool_name"],
            arguments=i.get("arguments", {}),
            status="success",
            error=None,
            raw_result=None,
            retrieval_details={"evidence_refs": i["evidence_refs"]},
            latency_ms=1.0,
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        for i in invocations
    ]


GATEKEEPER_CASES = sorted((GOLDEN / "gatekeeper").glob("*.json"))


@pytest.mark.parametrize("path", GATEKEEPER_CASES, ids=[p.stem for p in GATEKEEPER_CASES])
@pytest.mark.parametrize("verdict", ["PASS", "LOW_CONFID", "REJECT"])
def test_offline_composer_passes_on_every_golden_session(path: Path, verdict: str) -> None:
    case = json.loads(path.read_text())
    facts = [
        InvocationFacts(
            i["id"],
            i["tool_name"],
            None
            if i["evidence_refs"] is None
            else tuple(EvidenceRef(r["raw_path"], r["text"]) for r in i["evidence_refs"]),
        )
        for i in case["invocations"]
    ]
    evidence = case["evidence"]
    gate = gatekeeper_check(evidence, facts).to_seed()
    claims = material.claims_of(evidence)
    checks = [{"claim_id": c.get("claim_id"), "supported": True} for c in claims]
    composer_input = material.composer_input(
        "问题" if case["language"] == "zh" else "the question",
        case["language"],
        evidence,
        gate,
        {"verdict": verdict, "claim_checks": checks},
    )
    records = _records(case["invocations"])
    grounded = grounded_input(composer_input, material_for(composer_input, gate, records))
    # as the Composer stage checks it: the structured answer sentence by sentence
    said = material.sentence_material(grounded, gate, records)
    output = compose(grounded, said)
    sentences = answer_text.sentences_of(output)
    assert sentences
    result = sentence_check.check(sentences, said)
    assert result.ok, result.to_seed()


def test_an_argument_the_model_chose_is_no_allowed_material() -> None:
    """A pod the Executor only asked about (a tool argument) is no fact the answer may state; the
    tool's name and the error it returned are."""
    claim = {"claim_id": "c1", "claim_type": "observation", "claim_text": CLAIM}
    composer_input = {"original_query": QUESTION, "language": "zh", "allowed_claims": [claim]}
    (asked,) = _records(
        [
            {
                "id": 7,
                "tool_name": "query_logs",
                "arguments": {"service": "payment-service", "pod": "payment-service-abc12"},
                "evidence_refs": [],
            }
        ]
    )
    failed = dataclasses.replace(asked, id=8, status="failed", error="timeout after 5000ms")
    allowed = material_for(composer_input, {}, [asked, failed])
    lie = _answer(f"{CLAIM}请重启 pod payment-service-abc12。")
    assert {(v.rule_id, v.token) for v in check(lie, allowed).violations} == {
        (ac.UNSUPPORTED_IDENTIFIER, "payment-service-abc12")
    }
    assert check(_answer(f"{CLAIM}query_logs 调用失败：timeout after 5000ms。"), allowed).ok
