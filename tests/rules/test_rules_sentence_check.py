"""The sentence check (rules.sentence_check): a table of rows per rule over one small session, in both
languages, and its data in and out (seed shapes, adversarial input, the material built from a
session's seed data)."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import pytest

from evigate.rules import answer_check as ac
from evigate.rules import sentence_types as t
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_material import build
from evigate.rules.sentence_types import (
    RULES,
    ClaimFacts,
    Excerpt,
    HypothesisFacts,
    Sentence,
    SentenceMaterial,
    material_from_seed,
    material_to_seed,
)
from evigate.rules.types import EvidenceRef, InvocationFacts
from tests.rules.session import ALERT_CPU, ALERT_MEM
from tests.rules.session import LOG_HIKARI as LOG

NEG = "query_logs returned no evidence; query=inventory-service HikariCP; service=inventory-service; total=0"
RUNBOOK = (
    "Runbook: when HikariCP is exhausted, check slow queries first, then restart the service and raise "
    "maximumPoolSize=20."
)
FAILED = "query_metrics(service=order-service) failed (prometheus is unreachable: connect timeout)"

CLAIMS = (
    ClaimFacts(
        "cpu",
        "observation",
        "payment-service 的 HighCPUUsage 告警正在触发。",
        (Excerpt(ALERT_CPU, ALERT_CPU, "query_metrics", "$.alerts[0]"),),
    ),
    ClaimFacts(
        "mem",
        "observation",
        "payment-service 的 HighMemoryUsage 告警已恢复。",
        (Excerpt(ALERT_MEM, ALERT_MEM, "query_metrics", "$.alerts[1]"),),
    ),
    ClaimFacts(
        "log",
        "observation",
        "order-service logged a HikariPool-1 timeout.",
        (Excerpt(LOG, LOG, "query_logs", "$.logs[0]"),),
    ),
    ClaimFacts(
        "neg",
        "negative_observation",
        "当前查询未检索到 inventory-service 的 HikariCP 日志。",
        (Excerpt(NEG, NEG, "query_logs", "$.no_evidence"),),
    ),
    ClaimFacts(
        "runbook",
        "observation",
        "The runbook for HikariCP exhaustion.",
        (Excerpt(RUNBOOK, RUNBOOK, "lookup_knowledge", "$.evidence_blocks[0]"),),
    ),
    ClaimFacts(
        "cause",
        "root_cause",
        "order-service 的 HikariPool-1 连接池耗尽导致请求超时。",
        (Excerpt(LOG, LOG, "query_logs", "$.logs[0]"),),
    ),
    ClaimFacts("call-7", "", FAILED, (Excerpt(FAILED, FAILED, "query_metrics"),), failed=True),
)
HYPOTHESES = (
    HypothesisFacts("hypothesis-1", "可能是慢查询长期占用连接，待验证。"),
    HypothesisFacts("hypothesis-2", "Slow queries may be holding the pool's connections (unconfirmed)."),
)
EN = SentenceMaterial(
    claims=CLAIMS,
    hypotheses=HYPOTHESES,
    catalog=("payment-service", "order-service", "inventory-service", "gateway"),
    aliases=(("支付服务", "payment-service"), ("网关", "gateway")),
    question="What's wrong with payment-service?",
    language="en",
)
ZH = dataclasses.replace(EN, question="payment-service 怎么了？", language="zh")


def S(kind: str, text: str, *claims: str, hyps: tuple[str, ...] = (), fixed: str = "") -> Sentence:  # noqa: N802
    return Sentence(kind, text, claims, hyps, fixed)


H, FI, AB, CN, HY, ST, NO = (k.value for k in SentenceKind)


class Row(NamedTuple):
    name: str
    material: SentenceMaterial
    sentences: list[Sentence]
    expect: set[str]  # rules that must fire; empty: the answer must pass


ROWS = [
    # --- binding -------------------------------------------------------------------------------
    Row(
        "a finding bound to its claim",
        EN,
        [S(FI, "payment-service's HighCPUUsage alert is firing at 92%.", "cpu")],
        set(),
    ),
    Row(
        "the same in Chinese",
        ZH,
        [S(FI, "payment-service 的 HighCPUUsage 告警正在触发，CPU 92%。", "cpu")],
        set(),
    ),
    Row(t.UNBOUND, EN, [S(FI, "payment-service is having a bad day.")], {t.UNBOUND}),
    Row(t.UNKNOWN_ID, EN, [S(FI, "HighCPUUsage is firing.", "claim-9")], {t.UNKNOWN_ID, t.UNBOUND}),
    Row(
        "an unknown id beside a known one",
        EN,
        [S(FI, "HighCPUUsage is firing.", "cpu", "claim-9")],
        {t.UNKNOWN_ID},
    ),
    Row(t.KIND, EN, [S("summary", "HighCPUUsage is firing.", "cpu")], {t.KIND}),
    Row("an absence bound to a finding", EN, [S(AB, "HighCPUUsage is firing.", "cpu")], {t.KIND}),
    Row(
        "a could-not-check bound to a finding",
        EN,
        [S(CN, "HighCPUUsage could not be checked.", "cpu")],
        {t.KIND},
    ),
    Row("a hypothesis bound to no hypothesis", ZH, [S(HY, "可能是 HighCPUUsage 在触发。", "cpu")], {t.KIND}),
    Row("a step from no runbook", EN, [S(ST, "Check the HighCPUUsage alert.", "cpu")], {t.KIND}),
    Row("a fixed line", ZH, [S(NO, "缺少的信息：", fixed="missing_header")], set()),
    Row("a fixed line in English", EN, [S(NO, "Missing information:", fixed="missing_header")], set()),
    Row(
        t.FIXED_LINE,
        EN,
        [S(NO, "Missing information: none, all is fine.", fixed="missing_header")],
        {t.FIXED_LINE},
    ),
    Row("an unknown fixed line", EN, [S(NO, "All good.", fixed="all_good")], {t.FIXED_LINE}),
    Row(
        "a fixed line of the wrong kind",
        EN,
        [S(FI, "Missing information:", fixed="missing_header")],
        {t.FIXED_LINE},
    ),
    Row(
        "a fixed line in the other language",
        ZH,
        [S(NO, "Missing information:", fixed="missing_header")],
        {t.FIXED_LINE},
    ),
    Row(
        "a hedged hypothesis",
        ZH,
        [S(HY, "可能是慢查询长期占用连接，待验证。", hyps=("hypothesis-1",))],
        set(),
    ),
    Row(t.HEDGE, ZH, [S(HY, "慢查询长期占用连接。", hyps=("hypothesis-1",))], {t.HEDGE}),
    Row(
        "a finding bound only to a hypothesis",
        EN,
        [S(FI, "Slow queries hold the connections.", hyps=("hypothesis-2",))],
        {t.HEDGE},
    ),
    # --- subject -------------------------------------------------------------------------------
    Row(t.SUBJECT, EN, [S(FI, "order-service's HighCPUUsage alert is firing.", "cpu")], {t.SUBJECT}),
    Row("a one-word catalog name", EN, [S(FI, "The gateway is firing HighCPUUsage.", "cpu")], {t.SUBJECT}),
    Row(
        "a Chinese alias of another service",
        ZH,
        [S(FI, "网关的 HighCPUUsage 告警正在触发。", "cpu")],
        {t.SUBJECT},
    ),
    Row("an alias of the subject", ZH, [S(FI, "支付服务的 HighCPUUsage 告警正在触发。", "cpu")], set()),
    Row(
        "names bound but never together",
        EN,
        [S(FI, "order-service's HighMemoryUsage alert has resolved.", "mem", "log")],
        {t.SUBJECT},
    ),
    Row("an identifier of another claim", EN, [S(FI, "HikariPool-1 timed out.", "cpu")], {t.SUBJECT}),
    # --- state, absence, could not check, yes / no -----------------------------------------------
    Row(t.STATE, EN, [S(FI, "payment-service's HighMemoryUsage alert is still firing.", "mem")], {t.STATE}),
    Row("a negation flips it", EN, [S(FI, "The HighCPUUsage alert is not firing.", "cpu")], {t.STATE}),
    Row("resolved in Chinese", ZH, [S(FI, "HighCPUUsage 告警已经恢复。", "cpu")], {t.STATE}),
    Row("resolved, truly", ZH, [S(FI, "HighMemoryUsage 告警已经恢复，不再触发。", "mem")], set()),
    Row(
        "each alert its own state",
        EN,
        [S(FI, "HighCPUUsage is firing and HighMemoryUsage has resolved.", "cpu", "mem")],
        set(),
    ),
    Row(
        "states swapped between alerts",
        EN,
        [S(FI, "HighCPUUsage has resolved and HighMemoryUsage is firing.", "cpu", "mem")],
        {t.STATE},
    ),
    Row(
        "an absence from a negative claim",
        ZH,
        [S(AB, "当前查询未检索到 inventory-service 的 HikariCP 日志。", "neg")],
        set(),
    ),
    Row(t.ABSENCE, EN, [S(FI, "No HighCPUUsage alert was found for payment-service.", "cpu")], {t.ABSENCE}),
    Row(
        "an absence of another scope",
        EN,
        [S(AB, "No alerts were found for inventory-service.", "neg")],
        {t.ABSENCE},
    ),
    Row(
        "an absence of another subject",
        ZH,
        [S(AB, "没有 payment-service 的 HikariCP 日志。", "neg", "cpu")],
        {t.ABSENCE},
    ),
    Row(
        "an absence that says nothing is absent",
        EN,
        [S(AB, "inventory-service was queried.", "neg")],
        {t.ABSENCE},
    ),
    Row(
        "a failed call is not 'nothing found'",
        EN,
        [S(FI, "order-service has no alerts.", "call-7")],
        {t.ABSENCE, t.UNCHECKED},
    ),
    Row(
        "could not be checked",
        EN,
        [S(CN, "order-service's alerts could not be checked: prometheus is unreachable.", "call-7")],
        set(),
    ),
    Row(
        "could not be checked, in Chinese",
        ZH,
        [S(CN, "无法查询 order-service 的告警：prometheus 不可达。", "call-7")],
        set(),
    ),
    Row(t.UNCHECKED, EN, [S(FI, "HighCPUUsage could not be checked.", "cpu")], {t.UNCHECKED}),
    Row(
        "a yes that agrees",
        dataclasses.replace(EN, question="Is HighMemoryUsage still firing?"),
        [S(H, "No — HighMemoryUsage has resolved.", "mem")],
        set(),
    ),
    Row(
        t.YES_NO,
        dataclasses.replace(EN, question="Is HighMemoryUsage still firing?"),
        [S(H, "Yes.", "mem")],
        {t.YES_NO},
    ),
    Row(
        "a Chinese no that disagrees",
        dataclasses.replace(ZH, question="HighCPUUsage 还在触发吗？"),
        [S(H, "没有。", "cpu")],
        {t.YES_NO},
    ),
    # --- values --------------------------------------------------------------------------------
    Row("readable values", EN, [S(FI, "CPU 92% for 25 minutes, above the 85% threshold.", "cpu")], set()),
    Row("values in Chinese", ZH, [S(FI, "当前 CPU 92%，阈值 85%，已持续二十五分钟。", "cpu")], set()),
    Row(t.VALUE, EN, [S(FI, "CPU is at 95%.", "cpu")], {t.VALUE}),
    Row("a spelled-out number", EN, [S(FI, "It has been firing for thirty minutes.", "cpu")], {t.VALUE}),
    Row("a Chinese numeral", ZH, [S(FI, "已持续三十分钟。", "cpu")], {t.VALUE}),
    Row("a value of another subject", EN, [S(FI, "HighCPUUsage is at 71%.", "cpu", "mem")], {t.VALUE}),
    Row(t.ROLE, EN, [S(FI, "The threshold is 92% and CPU is currently 85%.", "cpu")], {t.ROLE}),
    Row("roles swapped in Chinese", ZH, [S(FI, "阈值 92%，当前 85%。", "cpu")], {t.ROLE}),
    Row(
        t.RELATIVE_TIME,
        EN,
        [S(FI, "HighCPUUsage has been firing since last night.", "cpu")],
        {t.RELATIVE_TIME},
    ),
    Row(
        "a relative time in Chinese", ZH, [S(FI, "HighCPUUsage 告警刚才开始触发。", "cpu")], {t.RELATIVE_TIME}
    ),
    Row("a time of the excerpt", EN, [S(FI, "order-service logged the timeout at 23:05:28.", "log")], set()),
    Row(t.QUOTE, EN, [S(FI, 'order-service logged "Connection refused".', "log")], {t.QUOTE}),
    Row(
        "a quote cut with an ellipsis",
        EN,
        [S(FI, 'order-service logged "Connection is not available … after 30000ms".', "log")],
        set(),
    ),
    # --- connectives, severity, quantities, actions -------------------------------------------
    Row(
        t.CAUSAL,
        EN,
        [S(FI, "HighCPUUsage is firing because HikariPool-1 timed out.", "cpu", "log")],
        {t.CAUSAL},
    ),
    Row(
        "a consequence nobody observed",
        EN,
        [S(FI, "The HikariPool-1 timeouts are making payments fail.", "log")],
        {t.CAUSAL},
    ),
    Row(
        "a cause a root-cause claim states",
        ZH,
        [S(FI, "order-service 的 HikariPool-1 连接池耗尽导致请求超时。", "cause")],
        set(),
    ),
    Row(
        "a cause in a hedged hypothesis",
        ZH,
        [S(HY, "可能是慢查询长期占用连接导致超时，待验证。", hyps=("hypothesis-1",))],
        set(),
    ),
    Row(
        "no root cause could be determined",
        EN,
        [S(FI, "No root cause could be determined for HighCPUUsage.", "cpu")],
        set(),
    ),
    Row(t.TREND, EN, [S(FI, "CPU usage on payment-service is rising.", "cpu")], {t.TREND}),
    Row("a trend in Chinese", ZH, [S(FI, "payment-service 的 CPU 还在上升。", "cpu")], {t.TREND}),
    Row(
        "a severity the ref gives",
        EN,
        [S(FI, "HighCPUUsage is critical; HighMemoryUsage was a warning.", "cpu", "mem")],
        set(),
    ),
    Row(t.SEVERITY, EN, [S(FI, "HighCPUUsage is minor, nothing urgent.", "cpu")], {t.SEVERITY}),
    Row("a severity in Chinese", ZH, [S(FI, "HighMemoryUsage 告警很严重。", "mem")], {t.SEVERITY}),
    Row("a severity no ref gives", EN, [S(FI, "The HikariPool-1 timeout is critical.", "log")], {t.SEVERITY}),
    Row(
        "a count the claims give",
        EN,
        [
            S(
                FI,
                "payment-service has two alerts: HighCPUUsage is firing and HighMemoryUsage has resolved.",
                "cpu",
                "mem",
            )
        ],
        set(),
    ),
    Row(t.QUANTITY, EN, [S(FI, "payment-service has three alerts.", "cpu", "mem")], {t.QUANTITY}),
    Row(
        "all, when one resolved",
        EN,
        [S(FI, "All of payment-service's alerts are firing.", "cpu")],
        {t.QUANTITY},
    ),
    Row("none, when one fires", ZH, [S(FI, "payment-service 没有正在触发的告警。", "mem")], {t.QUANTITY}),
    Row("a count in Chinese", ZH, [S(FI, "payment-service 有三个告警正在触发。", "cpu")], {t.QUANTITY}),
    Row(
        "a step of the runbook",
        EN,
        [S(ST, "Check slow queries first, then restart the service.", "runbook")],
        set(),
    ),
    Row(t.ACTION, EN, [S(FI, "Restart payment-service.", "cpu")], {t.ACTION}),
    Row("an action no runbook gives", EN, [S(ST, "Roll back the last deploy.", "runbook")], {t.ACTION}),
    Row("an action in Chinese", ZH, [S(FI, "建议扩容 payment-service。", "cpu")], {t.ACTION}),
    Row("an action a runbook gives, in Chinese", ZH, [S(ST, "先检查慢查询，再重启服务。", "runbook")], set()),
    # --- definitions and vague quantities -------------------------------------------------------
    Row(
        t.DEFINITION,
        EN,
        [S(FI, "The HighCPUUsage alert means payment-service is overloaded.", "cpu")],
        {t.DEFINITION},
    ),
    Row(
        "an implication in Chinese",
        ZH,
        [S(FI, "payment-service 的 HighCPUUsage 告警意味着服务已经过载。", "cpu")],
        {t.DEFINITION},
    ),
    Row(
        "a definition that restates its excerpt",
        EN,
        [S(FI, "The HighCPUUsage alert of payment-service is firing, which means CPU is at 92%.", "cpu")],
        set(),
    ),
    Row(
        "an implication a hypothesis hedges",
        EN,
        [
            S(
                HY,
                "This may mean that slow queries hold the pool's connections (unconfirmed).",
                hyps=("hypothesis-2",),
            )
        ],
        set(),
    ),
    Row(
        t.VAGUE_QUANTITY,
        EN,
        [S(FI, "order-service logged dozens of HikariPool-1 timeouts.", "log")],
        {t.VAGUE_QUANTITY},
    ),
    Row(
        "a vague quantity in Chinese",
        ZH,
        [S(FI, "order-service 记录了几十条 HikariPool-1 超时日志。", "log")],
        {t.VAGUE_QUANTITY},
    ),
    Row(
        "lots of, with no count",
        ZH,
        [S(FI, "payment-service 触发了大量 HighCPUUsage 告警。", "cpu")],
        {t.VAGUE_QUANTITY},
    ),
    # --- the token layer and the whole answer ---------------------------------------------------
    Row(ac.UNSUPPORTED_NUMBER, EN, [S(FI, "CPU is at 99%.", "cpu")], {ac.UNSUPPORTED_NUMBER, t.VALUE}),
    Row(ac.EMPTY, EN, [], {ac.EMPTY}),
    Row("an empty sentence", EN, [S(FI, " ", "cpu")], {ac.EMPTY}),
    Row(
        ac.WRONG_LANGUAGE,
        ZH,
        [S(FI, "payment-service's HighCPUUsage alert is firing.", "cpu")],
        {ac.WRONG_LANGUAGE},
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_rule_table(row: Row) -> None:
    result = check(row.sentences, row.material)
    shown = [(v.rule_id, v.token) for v in result.violations]
    if row.expect:
        assert row.expect <= result.rules(), shown
    else:
        assert result.ok, shown


def test_every_rule_has_a_failing_row() -> None:
    failing = {rule for row in ROWS for rule in row.expect}
    assert set(RULES) <= failing
    assert {r.name for r in ROWS} >= set(RULES)


def test_rule_ids_are_versioned_and_documented() -> None:
    for rule, meaning in RULES.items():
        assert rule.startswith("sentence.") and rule.rsplit("@", 1)[1].isdigit(), rule
        assert meaning


def test_violations_name_their_sentence_in_the_contract_shape() -> None:
    sentences = [S(NO, "Missing information:", fixed="missing_header"), S(FI, "CPU is at 95%.", "cpu")]
    result = check(sentences, EN)
    assert result.sentences[0] == ()
    seed = result.to_seed()
    assert seed and all(set(v) == {"rule_id", "field", "token", "message"} for v in seed)
    assert {v["field"] for v in seed} == {"sentences[1]"}
    annotated = result.annotated(sentences)
    assert annotated[0] == {
        "kind": "note",
        "text": "Missing information:",
        "claim_ids": [],
        "hypothesis_ids": [],
        "fixed_line": "missing_header",
        "violations": [],
    }
    assert annotated[1]["violations"] == [v for v in seed if v["field"] == "sentences[1]"]


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"kind": 3, "text": None, "claim_ids": "cpu", "hypothesis_ids": [1, None]},
        {"kind": "finding", "text": "x" * 20000, "claim_ids": ["cpu"] * 50},
        {"kind": "finding", "text": "“" * 300 + "92%", "claim_ids": ["cpu"]},
        {"kind": "note", "text": "", "fixed_line": 7},
    ],
)
def test_adversarial_sentences_never_raise(raw: dict[str, Any]) -> None:
    result = check([Sentence.from_seed(raw), Sentence.from_seed(raw)], EN)
    assert len(result.sentences) == 2


def test_material_round_trips_through_its_seed() -> None:
    assert material_from_seed(material_to_seed(EN)) == EN


def test_material_from_a_sessions_seed_data() -> None:
    composer_input = {
        "original_query": "payment-service 怎么了？",
        "language": "zh",
        "allowed_claims": [
            {
                "claim_id": "claim-1",
                "claim_type": "observation",
                "claim_text": "payment-service 的 HighCPUUsage 告警正在触发。",
                "evidence_bindings": [
                    {
                        "tool_name": "query_metrics",
                        "source_invocation_id": 1,
                        "raw_path": "$.alerts[0]",
                        "evidence_excerpt": ALERT_CPU,
                    },
                    {
                        "tool_name": "query_metrics",
                        "source_invocation_id": 1,
                        "raw_path": "$.alerts[1]",
                        "evidence_excerpt": "forged",
                    },
                ],
            },
            "not a claim",
        ],
        "allowed_hypotheses": [{"hypothesis_text": "可能是流量上升，待验证。"}],
    }
    gate = {
        "checked_bindings": [
            {"claim_id": "claim-1", "binding_index": 0, "status": "pass"},
            {"claim_id": "claim-1", "binding_index": 1, "status": "fail"},
        ]
    }
    invocations = [
        InvocationFacts(1, "query_metrics", (EvidenceRef("$.alerts[0]", ALERT_CPU + ", labels.x=y"),)),
        InvocationFacts(2, "query_promql", ()),
    ]
    built = build(
        composer_input,
        gate,
        invocations,
        failed_calls={2: "query_promql(signal=cpu) failed (timeout)"},
        catalog=["payment-service"],
        aliases={"支付服务": "payment-service"},
    )
    assert built.question == "payment-service 怎么了？" and built.language == "zh"
    assert [c.claim_id for c in built.claims] == ["claim-1", "call-2"]
    claim, failed = built.claims
    assert claim.excerpts == (Excerpt(ALERT_CPU, ALERT_CPU + ", labels.x=y", "query_metrics", "$.alerts[0]"),)
    assert not claim.failed and failed.failed and failed.text == "query_promql(signal=cpu) failed (timeout)"
    assert built.hypotheses == (HypothesisFacts("hypothesis-1", "可能是流量上升，待验证。"),)
    assert built.aliases == (("支付服务", "payment-service"),)
