"""The tool registry: a tool written here, in the test, and registered with one line is offered to
the LLM, validated, run, recorded, and its evidence refs are citable and checked by the Gatekeeper,
with no other file touched. Adding a tool is its module, one registry line (and a ToolName member,
since the contract enumerates tools) and docs/tools.md regenerated: nothing else holds a tool's
item array."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evigate.rules import gatekeeper
from evigate.rules.enums import ClaimType, ToolName
from evigate.rules.rule_catalog import DEFAULT_PATH, load_rule_catalog
from evigate.rules.types import GatekeeperOutcome, InvocationFacts
from evigate.server.agents.llm.prompt_loader import render_tools
from evigate.server.deadline import Deadline
from evigate.server.queries.types import JSON
from evigate.server.skills import KNOWN_TOOLS
from evigate.server.tools import SessionToolBox, ToolBackend, build_backend, refs
from evigate.server.tools import args as tool_args
from evigate.server.tools.registry import BUILTIN_TOOLS, ToolRegistry, default_registry
from evigate.server.tools.tool import Answer, Tool
from tests.rules.session import binding, claim, output
from tests.tools.conftest import MemoryCases, MemoryRecorder

ROOT = Path(__file__).resolve().parents[2]

# --- the throwaway tool: its whole definition --------------------------------------------------
DEPLOYMENTS = [
    {"service": "payment-service", "version": "v2.14.1", "at": "2026-07-08 21:20:00", "by": "ci-bot"},
    {"service": "order-service", "version": "v7.0.3", "at": "2026-07-08 19:02:11", "by": "alice"},
]


def deployment_text(item: Mapping[str, Any]) -> str:
    return ", ".join([refs.text(item["service"]), *refs.other_pairs(item, ("service",))])


async def answer_deployments(args: JSON, backend: ToolBackend) -> Answer:
    found = [d for d in DEPLOYMENTS if args.get("service") in (None, d["service"])]
    return Answer(found[: args.get("limit", 10)], len(found))


LIST_DEPLOYMENTS = Tool(
    name="list_deployments",
    description="Recent deployments (service, version, time, author), newest first.",
    properties={
        "service": {**tool_args.STRING, "description": "exact service name"},
        "limit": tool_args.limit(10, 50),
    },
    answer=answer_deployments,
    item_array="deployments",
    item_text=deployment_text,
    no_evidence_message="no matching deployment",
    query_keys=("service",),
    # A deployment list shows what was deployed; it cannot name a root cause by itself.
    claim_types=frozenset({ClaimType.OBSERVATION, ClaimType.NEGATIVE_OBSERVATION}),
)
REGISTRY = ToolRegistry([*BUILTIN_TOOLS, LIST_DEPLOYMENTS])  # the one registering line
# -------------------------------------------------------------------------------------------------


@pytest.fixture
def toolbox() -> tuple[SessionToolBox, MemoryRecorder]:
    recorder = MemoryRecorder()
    backend = build_backend(None, MemoryCases())
    return SessionToolBox(backend, recorder, "session-1", registry=REGISTRY), recorder


def _facts(recorder: MemoryRecorder) -> list[InvocationFacts]:
    return [
        InvocationFacts.from_seed(i, row["tool_name"], row["retrieval_details"])
        for i, row in enumerate(recorder.rows, start=1)
    ]


def test_the_new_tool_is_offered_with_its_schema_and_in_the_prompts(
    toolbox: tuple[SessionToolBox, MemoryRecorder],
) -> None:
    schemas = toolbox[0].schemas()
    assert [s["function"]["name"] for s in schemas] == [*ToolName, "list_deployments"]
    offered = schemas[-1]["function"]
    assert offered["description"] == LIST_DEPLOYMENTS.description
    assert set(offered["parameters"]["properties"]) == {"service", "limit"}
    assert offered["parameters"]["additionalProperties"] is False
    rendered = render_tools("tools: {{tool_names}}; paths: {{raw_path_grammar}}", REGISTRY)
    assert "`list_deployments`" in rendered and "`$.deployments[i]`" in rendered


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"servce": "payment-service"}, "unknown argument(s) servce"),
        ({"limit": 51}, "limit must be between 1 and 50"),
        ({"service": 7}, "service must be a string"),
    ],
)
async def test_the_new_tool_validates_its_arguments(
    toolbox: tuple[SessionToolBox, MemoryRecorder], arguments: dict[str, Any], message: str
) -> None:
    box, recorder = toolbox
    result = await box.call("list_deployments", arguments, Deadline.none())
    assert result.status == "failed" and result.error is not None and message in result.error
    assert recorder.rows[-1]["tool_name"] == "list_deployments"
    assert recorder.rows[-1]["retrieval_details"]["evidence_status"] == "failed"


async def test_the_new_tool_is_recorded_with_refs_and_no_evidence(
    toolbox: tuple[SessionToolBox, MemoryRecorder],
) -> None:
    box, recorder = toolbox
    hit = await box.call("list_deployments", {"service": " payment-service "}, Deadline.none())
    assert hit.status == "success"
    assert hit.raw_result == {"deployments": [DEPLOYMENTS[0]], "total": 1}
    row = recorder.rows[-1]
    assert row["arguments"] == {"service": " payment-service "}
    assert row["retrieval_details"] == {
        "evidence_status": "supported",
        "match_level": "L0",
        "evidence_refs": [
            {
                "raw_path": "$.deployments[0]",
                "text": "payment-service, version=v2.14.1, at=2026-07-08 21:20:00, by=ci-bot",
            }
        ],
    }
    miss = await box.call("list_deployments", {"service": "inventory-service"}, Deadline.none())
    (ref,) = miss.retrieval_details["evidence_refs"]
    assert miss.retrieval_details["evidence_status"] == "no_evidence"
    assert ref["raw_path"] == "$.no_evidence"
    assert ref["text"].startswith("list_deployments returned no evidence; evidence_status=no_evidence")
    assert "query=inventory-service" in ref["text"] and "message=no matching deployment" in ref["text"]
    again = await box.call("list_deployments", {"service": "payment-service"}, Deadline.none())
    assert again.retrieval_details["deduped_from"] == hit.invocation_id


async def test_the_new_tools_refs_are_citable_and_checked_by_the_gatekeeper(
    toolbox: tuple[SessionToolBox, MemoryRecorder],
) -> None:
    box, recorder = toolbox
    await box.call("list_deployments", {"service": "payment-service"}, Deadline.none())
    await box.call("list_deployments", {"service": "inventory-service"}, Deadline.none())
    facts = _facts(recorder)
    catalog = REGISTRY.catalog()
    excerpt = "payment-service, version=v2.14.1, at=2026-07-08 21:20:00"
    cited = binding("list_deployments", 1, "$.deployments[0]", excerpt)

    def run(claim_type: str, *bindings: dict[str, Any]) -> GatekeeperOutcome:
        return gatekeeper.check(output(claim("claim-1", claim_type, *bindings)), facts, catalog)

    passed = run("observation", cited)
    assert (passed.status, passed.severity) == ("pass", "none")
    assert passed.checked_bindings[0].matched_text.startswith(excerpt)
    negative = binding("list_deployments", 2, "$.no_evidence", "list_deployments returned no evidence")
    assert run("negative_observation", negative).severity == "none"

    forged = run("observation", {**cited, "evidence_excerpt": excerpt.replace("v2.14.1", "v2.15.0")})
    assert "excerpt.critical_tokens" in forged.failed_rules
    wrong_array = run("observation", {**cited, "raw_path": "$.alerts[0]"})
    assert wrong_array.failed_rules == ("citation.raw_path_grammar",)
    assert "$.deployments[i]" in wrong_array.errors[0].message
    # Which claim types may cite a tool is the tool's own declaration.
    root_cause = run("root_cause", cited)
    assert root_cause.failed_rules == ("citation.raw_path_grammar",)
    assert "list_deployments may not be cited by a 'root_cause' claim" in root_cause.errors[0].message
    # Without the registry's table the rules know only the built-in tools.
    unknown = gatekeeper.check(output(claim("claim-1", "observation", cited)), facts, load_rule_catalog())
    assert unknown.failed_rules == ("citation.raw_path_grammar",)


def test_registry_refuses_a_second_tool_of_the_same_name() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        ToolRegistry([LIST_DEPLOYMENTS, LIST_DEPLOYMENTS])


def test_adding_a_tool_is_its_module_one_registry_line_and_the_docs() -> None:
    """The registry is the one place that holds a tool's item array and citable claim types: the
    Gatekeeper's table is taken from it, the rule catalog names no tool, the skills' tool names are
    the registry's, and ToolName (the contract's enumeration) lists the same tools. docs/tools.md is
    regenerated from the registry (test_docs_are_written_from_the_registry)."""
    registry = default_registry()
    grammar = "citation.raw_path_grammar"
    table = registry.catalog()
    assert table.param(grammar, "arrays") == {tool.name: tool.item_array for tool in BUILTIN_TOOLS}
    assert load_rule_catalog().param(grammar, "arrays") == {}
    shipped = DEFAULT_PATH.read_text(encoding="utf-8")
    assert not [tool.name for tool in BUILTIN_TOOLS if tool.name in shipped]
    assert KNOWN_TOOLS == registry.names() == tuple(ToolName)


def _tool_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tool_docs", ROOT / "scripts" / "tool_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a fresh interpreter per run
def test_docs_are_written_from_the_registry() -> None:
    fresh = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tool_docs.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert fresh.returncode == 0, fresh.stderr
    rendered = _tool_docs().render(REGISTRY)
    assert "## `list_deployments`" in rendered and "`$.deployments[i]`" in rendered
    assert "citable by: `negative_observation`, `observation`" in rendered
