"""The Gatekeeper against docs/design.md §5.1: one case per row of the table, the §8.8 reference sessions,
back-fill, adversarial input and catalog-driven behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from evigate.rules.rule_catalog import DEFAULT_PATH
from evigate.rules.types import EvidenceRef, InvocationFacts, VerifiedBinding
from tests.rules.session import (
    ALERT_CPU,
    CPU_EXCERPT,
    INVOCATIONS,
    KNOWLEDGE,
    LOG_HIKARI,
    NEG_EXCERPT,
    NO_EVIDENCE_HIKARI,
    binding,
    claim,
    cpu_binding,
    neg_binding,
    output,
)
from tests.support.tool_table import check, rule_catalog


def _positive(*bindings: dict[str, Any]) -> dict[str, Any]:
    return output(claim("claim-1", "observation", *bindings))


def _negative(*bindings: dict[str, Any]) -> dict[str, Any]:
    return output(claim("claim-1", "negative_observation", *bindings))


class Row(NamedTuple):
    evidence: dict[str, Any]
    severity: str
    failed_rules: tuple[str, ...]


# One case per row (and per clause) of the docs/design.md §5.1 table.
TABLE: dict[str, Row] = {
    "contract: answer_version is not executor_evidence_v2": Row(
        {**_positive(cpu_binding()), "answer_version": "executor_evidence_v1"},
        "reject",
        ("contract.answer_version",),
    ),
    "contract: forbidden top-level field user_facing_answer": Row(
        {**_positive(cpu_binding()), "user_facing_answer": "payment-service 一切正常"},
        "reject",
        ("contract.forbidden_fields",),
    ),
    "contract: forbidden top-level field diagnosis_summary": Row(
        {**_positive(cpu_binding()), "diagnosis_summary": "CPU high"},
        "reject",
        ("contract.forbidden_fields",),
    ),
    "contract: claim without bindings": Row(
        output(claim("claim-1", "observation")), "reject", ("contract.bindings_required",)
    ),
    "citation: invocation id not in this session (forged)": Row(
        _positive(cpu_binding(source_invocation_id=999)), "reject", ("citation.invocation_exists",)
    ),
    "citation: tool_name differs from the invocation's": Row(
        _positive(cpu_binding(tool_name="query_logs")), "reject", ("citation.tool_name",)
    ),
    "citation: raw_path is a field sub-path": Row(
        _positive(cpu_binding(raw_path="$.alerts[0].state")), "reject", ("citation.raw_path_grammar",)
    ),
    "citation: raw_path of another tool's array": Row(
        _positive(cpu_binding(raw_path="$.logs[0]")), "reject", ("citation.raw_path_grammar",)
    ),
    "citation: raw_path absent from the invocation's evidence_refs": Row(
        _positive(cpu_binding(raw_path="$.alerts[7]")), "reject", ("citation.raw_path_exists",)
    ),
    "excerpt: English excerpt not supported by the ref text": Row(
        _positive(cpu_binding(evidence_excerpt="payment-service pods restarted repeatedly after deployment")),
        "reject",
        ("excerpt.verbatim",),
    ),
    "excerpt: Chinese excerpt not supported by the ref text": Row(
        _positive(
            binding(
                "lookup_knowledge", 520, "$.evidence_blocks[0]", "知识库：磁盘写满导致服务不可用，建议扩容。"
            )
        ),
        "reject",
        ("excerpt.verbatim",),
    ),
    "beyond the source: current=95% against current=92%": Row(
        _positive(cpu_binding(evidence_excerpt=CPU_EXCERPT.replace("92%", "95%"))),
        "reject",
        ("excerpt.critical_tokens",),
    ),
    "beyond the source: another pool name": Row(
        _positive(
            binding("query_logs", 518, "$.logs[0]", LOG_HIKARI.replace("HikariPool-1", "HikariPool-2"))
        ),
        "reject",
        ("excerpt.critical_tokens",),
    ),
    "negative_observation bound to a positive log": Row(
        _negative(binding("query_logs", 518, "$.logs[0]", LOG_HIKARI)),
        "reject",
        ("negative.no_evidence_only",),
    ),
    "missing source_invocation_id matching no invocation": Row(
        _positive(cpu_binding(source_invocation_id=None, evidence_excerpt=CPU_EXCERPT.replace("92%", "99%"))),
        "low_confid",
        ("backfill.unique_match",),
    ),
    "invocation stored without evidence_refs": Row(
        _positive(cpu_binding(source_invocation_id=521)), "low_confid", ("backfill.refs_missing",)
    ),
}


@pytest.mark.parametrize("name", list(TABLE))
def test_design_table_row(name: str) -> None:
    row = TABLE[name]
    result = check(row.evidence, INVOCATIONS)
    assert (result.severity, result.failed_rules) == (row.severity, row.failed_rules), result.errors
    assert result.status == "fail"
    for error in result.errors:
        assert error.rule_id in row.failed_rules
        assert error.message
        assert error.claim_id in {"claim-1", ""}


def test_reference_session_highcpu_positive() -> None:
    result = check(_positive(cpu_binding()), INVOCATIONS)
    seed = result.to_seed()
    assert (seed["status"], seed["severity"], seed["errors"], seed["failed_rules"]) == (
        "pass",
        "none",
        [],
        [],
    )
    assert seed["rule_set_version"] == "gatekeeper-rules-v2"
    assert seed["checked_bindings"] == [
        {
            "claim_id": "claim-1",
            "tool_name": "query_metrics",
            "source_invocation_id": 517,
            "raw_path": "$.alerts[0]",
            "matched_text": ALERT_CPU,
            "status": "pass",
            "binding_index": 0,
            "backfilled": False,
        }
    ]
    assert result.verified_bindings == {"claim-1": (VerifiedBinding(CPU_EXCERPT, ALERT_CPU),)}


def test_reference_session_hikari_negative() -> None:
    result = check(_negative(neg_binding()), INVOCATIONS)
    assert (result.status, result.severity) == ("pass", "none")
    assert result.checked_bindings[0].raw_path == "$.no_evidence"
    assert result.verified_bindings["claim-1"] == ((NEG_EXCERPT, NO_EVIDENCE_HIKARI),)


def test_rules_lists_enabled_rule_metadata() -> None:
    seed = check(_positive(cpu_binding()), INVOCATIONS).to_seed()
    ids = [r["id"] for r in seed["rules"]]
    assert "excerpt.critical_tokens" in ids and len(ids) == len(set(ids)) == 16
    assert set(seed["rules"][0]) == {"id", "description", "enabled", "default_severity"}


def test_backfill_unique_match_fills_the_id_with_a_warning() -> None:
    result = check(_negative(neg_binding(source_invocation_id=None)), INVOCATIONS)
    assert (result.status, result.severity) == ("pass", "none")
    checked = result.checked_bindings[0]
    assert (checked.source_invocation_id, checked.backfilled, checked.status) == (519, True, "pass")
    assert [w.rule_id for w in result.warnings] == ["backfill.unique_match"]
    assert "519" in result.warnings[0].message
    assert "claim-1" in result.verified_bindings


def test_backfill_missing_raw_path_from_the_cited_invocation() -> None:
    result = check(_positive(cpu_binding(raw_path=None)), INVOCATIONS)
    assert result.severity == "none"
    assert result.checked_bindings[0].raw_path == "$.alerts[0]"
    assert result.checked_bindings[0].backfilled


def test_backfill_ambiguous_match_is_low_confid() -> None:
    twin = InvocationFacts(600, "query_logs", (EvidenceRef("$.no_evidence", NO_EVIDENCE_HIKARI),))
    result = check(_negative(neg_binding(source_invocation_id=None)), (*INVOCATIONS, twin))
    assert (result.severity, result.failed_rules) == ("low_confid", ("backfill.unique_match",))
    assert "several" in result.errors[0].message
    assert result.checked_bindings[0].source_invocation_id is None


def test_item_bound_once_per_claim() -> None:
    second = cpu_binding(evidence_excerpt="state=firing, current=92%")
    result = check(_positive(cpu_binding(), second), INVOCATIONS)
    assert (result.severity, result.failed_rules) == ("reject", ("citation.item_bound_once",))
    assert result.errors[0].binding_index == 1


def test_same_item_in_two_claims_is_allowed() -> None:
    evidence = output(
        claim("claim-1", "observation", cpu_binding()), claim("claim-2", "observation", cpu_binding())
    )
    assert check(evidence, INVOCATIONS).severity == "none"


def test_errors_name_claim_binding_rule_and_reason() -> None:
    evidence = output(
        claim("claim-1", "observation", cpu_binding()),
        claim(
            "claim-2",
            "observation",
            cpu_binding(),
            cpu_binding(source_invocation_id=4242, raw_path="$.alerts[1]"),
        ),
    )
    (error,) = check(evidence, INVOCATIONS).errors
    assert (error.claim_id, error.binding_index, error.rule_id) == (
        "claim-2",
        1,
        "citation.invocation_exists",
    )
    assert "4242" in error.message and "forged" in error.message


def test_reject_outranks_low_confid() -> None:
    evidence = _positive(cpu_binding(source_invocation_id=521), cpu_binding(source_invocation_id=999))
    result = check(evidence, INVOCATIONS)
    assert result.severity == "reject"
    assert set(result.failed_rules) == {"backfill.refs_missing", "citation.invocation_exists"}


@pytest.mark.parametrize(
    "excerpt",
    [
        # spacing, sentence punctuation and full-width forms differ; the words are the ref's
        "知识库 HikariCP连接池耗尽时 日志出现 CONNECTION is not available, 常见原因是慢查询",
        "ＨｉｋａｒｉＣＰ 连接池耗尽时日志出现 Connection   is not available",
        "知识库 HikariCP 连接池耗尽时 日志出现 Connection is not available",
        # an ellipsis joins two spans of the ref, in order
        "知识库 … 常见原因是慢查询长期占用连接",
        "HikariCP 连接池耗尽时... maximumPoolSize=20 与慢 SQL",
    ],
)
def test_an_excerpt_in_the_refs_own_words_passes(excerpt: str) -> None:
    result = check(_positive(binding("lookup_knowledge", 520, "$.evidence_blocks[0]", excerpt)), INVOCATIONS)
    assert result.severity == "none", result.errors
    assert result.verified_bindings["claim-1"][0].matched_text == KNOWLEDGE


@pytest.mark.parametrize(
    ("excerpt", "rule"),
    [
        # words left out without an ellipsis, or spans out of order
        ("知识库 连接池耗尽时日志出现 Connection is not available", "excerpt.verbatim"),
        ("常见原因是慢查询 … 知识库", "excerpt.verbatim"),
        # a span that cuts a word in two
        ("Connect is not available", "excerpt.verbatim"),
        # an ellipsis that drops the negation
        ("Connection is … available", "excerpt.negation_elided"),
        ("Connection is not available … 常见原因是慢查询", "none"),
    ],
)
def test_an_excerpt_that_is_not_the_refs_words_fails(excerpt: str, rule: str) -> None:
    result = check(_positive(binding("lookup_knowledge", 520, "$.evidence_blocks[0]", excerpt)), INVOCATIONS)
    assert result.failed_rules == (() if rule == "none" else (rule,)), result.errors


ADVERSARIAL: list[Any] = [
    None,
    [],
    "executor_evidence_v2",
    {},
    {"answer_version": "executor_evidence_v2"},
    {"answer_version": "executor_evidence_v2", "claims": "claim-1"},
    {"answer_version": "executor_evidence_v2", "claims": [None, 3, "x", []]},
    {"answer_version": "executor_evidence_v2", "claims": [{"claim_id": 7, "evidence_bindings": {}}]},
    output(claim("claim-1", "observation", None, 5, "binding", [])),  # type: ignore[arg-type]
    output(claim("claim-1", "observation", binding(None, "517", 3.5, None))),
    output(claim("claim-1", "observation", binding("query_metrics", True, "$.alerts[0]", CPU_EXCERPT))),
    output(claim("claim-1", "observation", binding("query_metrics", 517, ["$.alerts[0]"], CPU_EXCERPT))),
    output(claim("claim-1", "observation", binding("query_metrics", 517, "$.alerts[0]", "   ,;  "))),
    output(
        claim("claim-1", "observation", binding("query_metrics", 2**80, "$.alerts[99999999999]", "x" * 9000))
    ),
    output(claim("claim-1", "observation", cpu_binding()), claim("claim-1", "observation", cpu_binding())),
    output(*[claim(f"c{i}", "observation", cpu_binding()) for i in range(500)]),
    {
        "answer_version": {"nested": True},
        "claims": [{"claim_id": "c", "claim_type": None, "evidence_bindings": [{}]}],
    },
]


@pytest.mark.parametrize("evidence", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_input_reports_instead_of_raising(evidence: Any) -> None:
    result = check(evidence, INVOCATIONS)
    assert result.status == "fail" and result.severity == "reject"
    assert all(e.rule_id.startswith("contract.") or e.rule_id.startswith("citation.") for e in result.errors)
    json.dumps(result.to_seed())  # always JSON-able


def test_huge_binding_list_is_capped(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_PATH.read_text())
    for rule in data["rules"]:
        if rule["id"] == "contract.shape":
            rule["params"]["max_bindings"] = 50
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(data))
    evidence = _positive(*[cpu_binding(raw_path=f"$.alerts[{i}]") for i in range(10_000)])
    result = check(evidence, INVOCATIONS, rule_catalog(path))
    assert len(result.checked_bindings) == 50
    assert "contract.shape" in result.failed_rules


def _catalog_with(tmp_path: Path, rule_id: str, **changes: Any) -> Path:
    data = json.loads(DEFAULT_PATH.read_text())
    for rule in data["rules"]:
        if rule["id"] == rule_id:
            rule.update(changes)
    path = tmp_path / "gatekeeper-rules.json"
    path.write_text(json.dumps(data))
    return path


def test_disabling_a_rule_in_the_catalog_changes_behaviour(tmp_path: Path) -> None:
    evidence = _positive(cpu_binding(evidence_excerpt=CPU_EXCERPT.replace("92%", "95%")))
    assert check(evidence, INVOCATIONS).failed_rules == ("excerpt.critical_tokens",)
    catalog = rule_catalog(_catalog_with(tmp_path, "excerpt.critical_tokens", enabled=False))
    result = check(evidence, INVOCATIONS, catalog)
    # The changed number is no longer named as such, but the excerpt is still not the ref's words.
    assert (result.severity, result.failed_rules) == ("reject", ("excerpt.verbatim",))
    assert "excerpt.critical_tokens" not in [r.id for r in result.rules]


def test_changing_a_severity_in_the_catalog_changes_behaviour(tmp_path: Path) -> None:
    evidence = _positive(cpu_binding(source_invocation_id=999))
    catalog = rule_catalog(
        _catalog_with(tmp_path, "citation.invocation_exists", default_severity="low_confid")
    )
    result = check(evidence, INVOCATIONS, catalog)
    assert (result.severity, result.failed_rules) == ("low_confid", ("citation.invocation_exists",))


def test_severity_none_reports_a_warning_only(tmp_path: Path) -> None:
    evidence = {**_positive(cpu_binding()), "diagnosis_summary": "x"}
    catalog = rule_catalog(_catalog_with(tmp_path, "contract.forbidden_fields", default_severity="none"))
    result = check(evidence, INVOCATIONS, catalog)
    assert (result.status, result.severity) == ("pass", "none")
    assert [w.rule_id for w in result.warnings] == ["contract.forbidden_fields"]


def test_the_verbatim_rules_severity_comes_from_the_catalog(tmp_path: Path) -> None:
    evidence = _positive(cpu_binding(evidence_excerpt=f"{CPU_EXCERPT}, and the service has since recovered"))
    assert check(evidence, INVOCATIONS).failed_rules == ("excerpt.verbatim",)
    lenient = _catalog_with(tmp_path, "excerpt.verbatim", default_severity="low_confid")
    assert check(evidence, INVOCATIONS, rule_catalog(lenient)).severity == "low_confid"


def test_oversized_names_never_reach_the_result() -> None:
    huge = "x" * 1_000_000
    evidence = output(
        claim(huge, "observation", cpu_binding()),
        claim("claim-2", "observation", cpu_binding(tool_name=huge), cpu_binding(raw_path=huge)),
    )
    result = check(evidence, INVOCATIONS)
    assert result.severity == "reject"
    assert len(json.dumps(result.to_seed())) < 20_000


def test_backfill_work_is_bounded_on_adversarial_input() -> None:
    refs = tuple(
        EvidenceRef(f"$.logs[{i}]", f"2026-07-08 23:05:{i % 60:02d} ERROR order-service line {i}")
        for i in range(50)
    )
    invocations = [InvocationFacts(i, "query_logs", refs) for i in range(2_000)]
    evidence = _positive(
        *[binding("query_logs", None, None, f"order-service line {i}") for i in range(2_000)]
    )
    result = check(evidence, invocations)  # the work budget, not the input, bounds it
    assert result.severity == "low_confid"
    assert any("budget" in e.message for e in result.errors)
