"""The rule catalog loads, and a malformed one fails naming the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evigate.rules.rule_catalog import (
    DEFAULT_PATH,
    KNOWN_RULES,
    RuleCatalogError,
    load_rule_catalog,
    parse_rule_catalog,
)


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DEFAULT_PATH.read_text())
    return data


def test_default_catalog_is_complete_and_versioned() -> None:
    catalog = load_rule_catalog()
    assert catalog.version == "gatekeeper-rules-v2"
    assert [r.id for r in catalog.rules] == list(KNOWN_RULES)
    assert all(r.description and r.enabled for r in catalog.rules)
    assert catalog.param("excerpt.negation_elided", "cjk") == "不没未无非否"
    assert catalog.rule("backfill.unique_match").default_severity == "low_confid"


def _mutate(change: Any) -> dict[str, Any]:
    data = _data()
    change(data)
    return data


def _set(rule_id: str, **fields: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        for rule in data["rules"]:
            if rule["id"] == rule_id:
                rule.update(fields)

    return change


def _drop_field(rule_id: str, name: str) -> Any:
    def change(data: dict[str, Any]) -> None:
        for rule in data["rules"]:
            if rule["id"] == rule_id:
                del rule[name]

    return change


MALFORMED: dict[str, tuple[Any, str]] = {
    "unknown rule id": (
        _set("citation.tool_name", id="citation.tool_nam"),
        "unknown rule id 'citation.tool_nam'",
    ),
    "bad severity": (_set("excerpt.verbatim", default_severity="fatal"), "bad severity 'fatal'"),
    "missing field": (
        _drop_field("excerpt.verbatim", "default_severity"),
        "missing field 'default_severity'",
    ),
    "enabled not a bool": (_set("excerpt.verbatim", enabled="yes"), "enabled must be true or false"),
    "unknown param": (_set("excerpt.verbatim", params={"min_overlap": 0.8}), "unknown param 'min_overlap'"),
    "bad param": (
        _set("excerpt.negation_elided", params={"words": "not"}),
        "param 'words' must be a list of non-empty strings",
    ),
    "duplicate rule": (
        lambda d: d["rules"].append(dict(d["rules"][0])),
        "duplicate rule id 'contract.shape'",
    ),
    "missing rule": (lambda d: d["rules"].pop(), "missing rule(s) backfill.refs_missing"),
    "no version": (lambda d: d.pop("rule_set_version"), "missing field 'rule_set_version'"),
    "rules not a list": (lambda d: d.update(rules={}), "missing field 'rules'"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_catalog_names_the_problem(name: str, tmp_path: Path) -> None:
    change, message = MALFORMED[name]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(_mutate(change)))
    with pytest.raises(RuleCatalogError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_rule_catalog(path)
    assert str(path) in str(info.value)


def test_invalid_json_and_missing_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RuleCatalogError, match="not valid JSON"):
        load_rule_catalog(broken)
    with pytest.raises(RuleCatalogError, match="cannot read"):
        load_rule_catalog(tmp_path / "absent.json")
    with pytest.raises(RuleCatalogError, match="must be a JSON object"):
        parse_rule_catalog([])
