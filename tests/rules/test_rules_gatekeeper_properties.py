"""Invariants of the Gatekeeper: a mutated citation never passes clean, and nothing ever raises."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evigate.rules.text import tokenize
from tests.rules.session import (
    ALERT_CPU,
    ALERT_MEM,
    INVOCATIONS,
    KNOWLEDGE,
    LOG_HIKARI,
    LOG_HTTP,
    NEG_EXCERPT,
    NO_EVIDENCE_HIKARI,
    binding,
    claim,
    output,
)
from tests.support.tool_table import check

# (claim_type, binding, ref text) of every valid citation the session offers.
VALID: list[tuple[str, dict[str, Any], str]] = [
    (
        "observation",
        binding("query_metrics", 517, "$.alerts[0]", "HighCPUUsage, service=payment-service, current=92%"),
        ALERT_CPU,
    ),
    ("observation", binding("query_metrics", 517, "$.alerts[1]", ALERT_MEM), ALERT_MEM),
    ("observation", binding("query_logs", 518, "$.logs[0]", LOG_HIKARI), LOG_HIKARI),
    ("observation", binding("query_logs", 518, "$.logs[1]", LOG_HTTP[20:]), LOG_HTTP),
    ("negative_observation", binding("query_logs", 519, "$.no_evidence", NEG_EXCERPT), NO_EVIDENCE_HIKARI),
    (
        "observation",
        binding(
            "lookup_knowledge",
            520,
            "$.evidence_blocks[0]",
            "HikariCP 连接池耗尽时日志出现 Connection is not available",
        ),
        KNOWLEDGE,
    ),
]
POSITIVE = [v for v in VALID if v[0] == "observation"]
TOOLS = ["query_metrics", "query_logs", "lookup_knowledge", "query_traces", "", "QUERY_LOGS"]
_NUMBER = re.compile(r"\d+")
_IDENT = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+")

valid = st.sampled_from(VALID)


def _run(claim_type: str, b: dict[str, Any]) -> str:
    return check(output(claim("claim-1", claim_type, b)), INVOCATIONS).severity


def test_every_valid_citation_passes() -> None:
    for claim_type, b, _ in VALID:
        assert _run(claim_type, b) == "none", b


@given(valid, st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_another_invocation_id_never_passes(case: tuple[str, dict[str, Any], str], other: int) -> None:
    claim_type, b, _ = case
    assume(other != b["source_invocation_id"])
    assert _run(claim_type, {**b, "source_invocation_id": other}) != "none"


@given(valid, st.sampled_from(TOOLS) | st.text(max_size=20))
def test_another_tool_name_never_passes(case: tuple[str, dict[str, Any], str], other: str) -> None:
    claim_type, b, _ = case
    assume(other != b["tool_name"])
    assert _run(claim_type, {**b, "tool_name": other}) != "none"


raw_paths = st.one_of(
    st.builds(
        "$.{}[{}]".format, st.sampled_from(["alerts", "logs", "evidence_blocks", "items"]), st.integers(0, 5)
    ),
    st.sampled_from(
        ["$.no_evidence", "$.alerts[0].state", "$.logs[0].message", "$.alerts", "alerts[0]", "$"]
    ),
    st.text(max_size=30),
)


@given(valid, raw_paths)
def test_another_raw_path_never_passes(case: tuple[str, dict[str, Any], str], other: str) -> None:
    claim_type, b, _ = case
    assume(other not in (b["raw_path"], ""))
    assert _run(claim_type, {**b, "raw_path": other}) != "none"


@given(valid, st.data())
def test_a_changed_number_never_passes(case: tuple[str, dict[str, Any], str], data: st.DataObject) -> None:
    claim_type, b, ref = case
    excerpt = b["evidence_excerpt"]
    numbers = list(_NUMBER.finditer(excerpt))
    assume(numbers)
    m = data.draw(st.sampled_from(numbers))
    new = data.draw(st.integers(0, 10**6).map(str))
    assume(new != m.group())
    changed = excerpt[: m.start()] + new + excerpt[m.end() :]
    # A number that the very same ref states elsewhere, unkeyed, is indistinguishable by tokens.
    assume(not set(tokenize(changed)) <= set(tokenize(ref)))
    assert _run(claim_type, {**b, "evidence_excerpt": changed}) != "none"


@given(valid, st.data(), st.from_regex(r"[a-z]{3,9}-[a-z0-9]{1,9}", fullmatch=True))
def test_a_changed_identifier_never_passes(
    case: tuple[str, dict[str, Any], str], data: st.DataObject, new: str
) -> None:
    claim_type, b, ref = case
    excerpt = b["evidence_excerpt"]
    idents = list(_IDENT.finditer(excerpt))
    assume(idents)
    m = data.draw(st.sampled_from(idents))
    assume(new.lower() not in tokenize(ref))
    changed = excerpt[: m.start()] + new + excerpt[m.end() :]
    assert _run(claim_type, {**b, "evidence_excerpt": changed}) != "none"


@given(st.sampled_from(POSITIVE))
def test_a_positive_ref_under_a_negative_observation_never_passes(
    case: tuple[str, dict[str, Any], str],
) -> None:
    _, b, _ = case
    assert _run("negative_observation", b) != "none"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)
binding_like = st.fixed_dictionaries(
    {},
    optional={
        "tool_name": json_values | st.sampled_from(TOOLS),
        "source_invocation_id": json_values | st.sampled_from([517, 518, 519, None]),
        "raw_path": json_values | raw_paths,
        "evidence_excerpt": json_values | st.sampled_from([v[1]["evidence_excerpt"] for v in VALID]),
    },
)


@settings(max_examples=200)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "answer_version": json_values | st.just("executor_evidence_v2"),
            "claims": json_values
            | st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "claim_id": json_values | st.sampled_from(["claim-1", "claim-2"]),
                        "claim_type": json_values | st.sampled_from(["observation", "negative_observation"]),
                        "evidence_bindings": json_values | st.lists(binding_like, max_size=4),
                    },
                ),
                max_size=4,
            ),
        },
    )
    | json_values
)
def test_arbitrary_json_never_raises(evidence: Any) -> None:
    result = check(evidence, INVOCATIONS)
    assert result.severity in {"none", "low_confid", "reject"}
    assert (result.status == "pass") is (not result.errors)
    for error in result.errors:
        assert error.rule_id and error.message and isinstance(error.claim_id, str)
