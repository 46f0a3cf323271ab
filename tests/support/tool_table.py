"""The Gatekeeper's rules as the service runs them: a rule catalog with the tool registry's table.

The registry is the one place that holds a tool's item array and the claim types that may cite it;
the rule catalog alone (rules/gatekeeper-rules.json) knows no tool, so a test of the Gatekeeper over
tool results takes its catalog from here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evigate.rules import gatekeeper
from evigate.rules.rule_catalog import RuleCatalog, load_rule_catalog
from evigate.rules.types import GatekeeperOutcome, InvocationFacts
from evigate.server.tools.registry import default_registry


def rule_catalog(path: Path | None = None) -> RuleCatalog:
    """The rule catalog at `path` (default: the shipped one) with the built-in tools' table."""
    return default_registry().catalog(load_rule_catalog(path))


def check(
    evidence: Mapping[str, Any], invocations: Sequence[InvocationFacts], catalog: RuleCatalog | None = None
) -> GatekeeperOutcome:
    """gatekeeper.check with the registry's tool table unless a catalog is given."""
    return gatekeeper.check(evidence, invocations, catalog if catalog is not None else rule_catalog())
