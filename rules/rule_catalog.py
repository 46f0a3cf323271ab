"""The versioned Gatekeeper rule catalog (rules/gatekeeper-rules.json).

The catalog holds metadata only — whether a rule is enabled, its severity and simple parameters —
so operators can tune the Gatekeeper without touching code. A malformed catalog fails at load
with a `RuleCatalogError` naming the problem.

The tool table (`citation.raw_path_grammar`: which array each tool's items are cited under, and
which claim types may cite it) belongs to the tools: the server's tool registry is the one place
that holds it and hands it in with `RuleCatalog.with_tools`, so adding a tool edits no rule file.
A catalog without it knows no tool's array: only `$.no_evidence` can then be cited.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from evigate.rules.enums import Severity
from evigate.rules.errors import EvigateError
from evigate.rules.types import SEVERITY_RANK, RuleInfo

DEFAULT_PATH = Path(__file__).with_name("gatekeeper-rules.json")
SEVERITIES = frozenset(SEVERITY_RANK)


class RuleCatalogError(EvigateError, ValueError):
    """The rule catalog cannot be used; the message names the file and the problem."""


def _positive_int(v: Any) -> bool:
    return type(v) is int and v > 0


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x for x in v)


def _str_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) and x for k, x in v.items())


def _str_list_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _str_list(x) for k, x in v.items())


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _non_empty_str(v: Any) -> bool:
    return isinstance(v, str) and bool(v)


# Every rule the code implements, with the parameters it reads (name → validator, described).
_PARAMS: Mapping[str, Mapping[str, tuple[Callable[[Any], bool], str]]] = {
    "contract.shape": {
        "max_claims": (_positive_int, "a positive integer"),
        "max_bindings": (_positive_int, "a positive integer"),
        "max_excerpt_chars": (_positive_int, "a positive integer"),
    },
    "contract.answer_version": {"expected": (_non_empty_str, "a non-empty string")},
    "contract.forbidden_fields": {"fields": (_str_list, "a list of non-empty strings")},
    "contract.bindings_required": {},
    "contract.binding_fields": {},
    "citation.invocation_exists": {},
    "citation.tool_name": {},
    "citation.raw_path_grammar": {
        "arrays": (_str_map, "an object mapping tool names to array names"),
        "claim_types": (_str_list_map, "an object mapping tool names to lists of claim types"),
    },
    "citation.raw_path_exists": {},
    "citation.item_bound_once": {},
    "excerpt.verbatim": {},
    "excerpt.negation_elided": {
        "words": (_str_list, "a list of non-empty strings"),
        "cjk": (_str, "a string of characters"),
        "cjk_except": (_str_list, "a list of non-empty strings"),
    },
    "excerpt.critical_tokens": {},
    "negative.no_evidence_only": {},
    "backfill.unique_match": {"max_comparisons": (_positive_int, "a positive integer")},
    "backfill.refs_missing": {},
}
KNOWN_RULES: tuple[str, ...] = tuple(_PARAMS)

_DEFAULT_PARAMS: Mapping[str, Mapping[str, Any]] = {
    "contract.shape": {"max_claims": 200, "max_bindings": 50000, "max_excerpt_chars": 8000},
    "contract.answer_version": {"expected": "executor_evidence_v2"},
    "contract.forbidden_fields": {
        "fields": ["diagnosis_summary", "user_facing_answer", "source_invocation_ids"]
    },
    # The tool registry's table (with_tools); a tool absent from claim_types may be cited by any
    # claim type.
    "citation.raw_path_grammar": {"arrays": {}, "claim_types": {}},
    "excerpt.negation_elided": {
        "words": ["not", "no", "never", "cannot", "without", "none", "neither", "nor"],
        "cjk": "不没未无非否",
        "cjk_except": ["非常"],
    },
    "backfill.unique_match": {"max_comparisons": 20000},
}


@dataclass(frozen=True, slots=True)
class ToolCitation:
    """What the Gatekeeper must know of one tool: its items are cited as `$.<item_array>[i]`;
    `claim_types` are the claim types that may cite it at all (None: any)."""

    name: str
    item_array: str
    claim_types: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class RuleSpec:
    id: str
    description: str
    enabled: bool
    default_severity: Severity
    params: Mapping[str, Any] = field(default_factory=dict)

    def info(self) -> RuleInfo:
        return RuleInfo(self.id, self.description, self.enabled, self.default_severity)


@dataclass(frozen=True)
class RuleCatalog:
    version: str
    rules: tuple[RuleSpec, ...]

    def rule(self, rule_id: str) -> RuleSpec:
        for spec in self.rules:
            if spec.id == rule_id:
                return spec
        raise KeyError(rule_id)

    def with_tools(self, tools: Iterable[ToolCitation]) -> RuleCatalog:
        """This catalog with its tool table replaced by `tools` (the tool registry's)."""
        tools = tuple(tools)
        grammar = "citation.raw_path_grammar"
        params = {
            "arrays": {t.name: t.item_array for t in tools},
            "claim_types": {t.name: sorted(t.claim_types) for t in tools if t.claim_types is not None},
        }
        rules = tuple(
            replace(spec, params={**spec.params, **params}) if spec.id == grammar else spec
            for spec in self.rules
        )
        return RuleCatalog(self.version, rules)

    def severities(self) -> dict[str, Severity]:
        """Enabled rule id → severity; a disabled rule is absent."""
        return {r.id: r.default_severity for r in self.rules if r.enabled}

    def param(self, rule_id: str, name: str) -> Any:
        """The catalog's value, else the built-in default."""
        value = self.rule(rule_id).params.get(name)
        return _DEFAULT_PARAMS[rule_id][name] if value is None else value

    def enabled_infos(self) -> tuple[RuleInfo, ...]:
        return tuple(r.info() for r in self.rules if r.enabled)


def _parse_rule(raw: Any, where: str) -> RuleSpec:
    if not isinstance(raw, dict):
        raise RuleCatalogError(f"{where}: a rule must be an object, got {type(raw).__name__}")
    for name in ("id", "description", "enabled", "default_severity"):
        if name not in raw:
            raise RuleCatalogError(f"{where}: missing field {name!r}")
    rule_id = raw["id"]
    if not isinstance(rule_id, str) or rule_id not in _PARAMS:
        raise RuleCatalogError(f"{where}: unknown rule id {rule_id!r} (known: {', '.join(KNOWN_RULES)})")
    where = f"{where} ({rule_id})"
    unknown = sorted(set(raw) - {"id", "description", "enabled", "default_severity", "params"})
    if unknown:
        raise RuleCatalogError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    if not isinstance(raw["description"], str) or not raw["description"].strip():
        raise RuleCatalogError(f"{where}: description must be a non-empty string")
    if not isinstance(raw["enabled"], bool):
        raise RuleCatalogError(f"{where}: enabled must be true or false, got {raw['enabled']!r}")
    severity = raw["default_severity"]
    if severity not in SEVERITIES:
        raise RuleCatalogError(
            f"{where}: bad severity {severity!r} (expected one of reject, low_confid, none)"
        )
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise RuleCatalogError(f"{where}: params must be an object")
    allowed = _PARAMS[rule_id]
    for name, value in params.items():
        if name not in allowed:
            raise RuleCatalogError(f"{where}: unknown param {name!r}")
        check, expected = allowed[name]
        if not check(value):
            raise RuleCatalogError(f"{where}: param {name!r} must be {expected}, got {value!r}")
    return RuleSpec(rule_id, raw["description"], raw["enabled"], Severity(severity), dict(params))


def parse_rule_catalog(data: Any, source: str = "<catalog>") -> RuleCatalog:
    """Validate already-decoded catalog JSON."""
    if not isinstance(data, dict):
        raise RuleCatalogError(f"{source}: the catalog must be a JSON object")
    version = data.get("rule_set_version")
    if not isinstance(version, str) or not version:
        raise RuleCatalogError(f"{source}: missing field 'rule_set_version' (a non-empty string)")
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list):
        raise RuleCatalogError(f"{source}: missing field 'rules' (a list)")
    specs: list[RuleSpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_rules):
        spec = _parse_rule(raw, f"{source}: rules[{i}]")
        if spec.id in seen:
            raise RuleCatalogError(f"{source}: rules[{i}]: duplicate rule id {spec.id!r}")
        seen.add(spec.id)
        specs.append(spec)
    missing = [r for r in KNOWN_RULES if r not in seen]
    if missing:
        raise RuleCatalogError(
            f"{source}: missing rule(s) {', '.join(missing)} (list them, disabled if unwanted)"
        )
    return RuleCatalog(version, tuple(specs))


def load_rule_catalog(path: Path | None = None) -> RuleCatalog:
    """Load and validate a catalog file; the default is rules/gatekeeper-rules.json (cached)."""
    if path is None:
        return _default_catalog()
    return _load(path)


def _load(path: Path) -> RuleCatalog:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleCatalogError(f"{path}: cannot read the catalog: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RuleCatalogError(f"{path}: not valid JSON: {exc}") from exc
    return parse_rule_catalog(data, str(path))


@lru_cache(maxsize=1)
def _default_catalog() -> RuleCatalog:
    return _load(DEFAULT_PATH)
