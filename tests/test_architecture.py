"""Who may import whom (docs/design.md §9): an AST check of every import in server/, storage/, rules/.

Every `import` and `from … import` counts, wherever it sits (module level, inside a function, under
TYPE_CHECKING), and relative imports are resolved against the file's package. Module names come
from file paths (server/tools/args.py is server.tools.args); an import spelled `evigate.server.…`,
`evigate.storage.…` or `evigate.rules.…` (the packaging rename) reads as `server.…` and so on, so
the table below serves both spellings. A change of layering is a change of RULES and of the table
in docs/design.md §9, together (test_every_rule_is_in_the_design_doc keeps them in step).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("server", "storage", "rules")
# The protoc output (generated/evigate/v1, generated/evigate/bp): the wire contract's code.
GENERATED = ("evigate.v1", "evigate.bp")
# What talks to the outside world: processes, transports, frameworks. The rules engines use none.
FRAMEWORKS: tuple[str, ...] = (
    *("grpc", "grpc_health", "grpc_reflection", "google", "sqlalchemy", "alembic", "openai"),
    *("pymysql", "aiomysql", "prometheus_client", "yaml"),
)
# Entry points: the gRPC and web front ends, the CLI, the composition root (server.app and the
# opinion worker's builder) and the background worker.
ENTRY_POINTS: tuple[str, ...] = (
    *("server.grpc", "server.web", "server.mcp", "server.cli", "server.app", "server.__main__"),
    *("server.worker", "server.opinion_worker", "server.mcp_setup"),
)
SHARED_HELPERS = (
    *("server.codec", "server.settings", "server.config_document", "server.deadline", "server.jsontext"),
    "server.tasks",
)


@dataclass(frozen=True)
class Rule:
    """Modules under `importers` (minus `exempt`) import nothing under `forbidden` except `allowed`.
    Prefixes match whole dotted components: "server.cli" covers server.cli.client, not server.clients."""

    id: str
    importers: tuple[str, ...]
    forbidden: tuple[str, ...]
    allowed: tuple[str, ...] = ()
    exempt: tuple[str, ...] = ()


RULES: tuple[Rule, ...] = (
    Rule("rules-pure", ("rules",), ("server", "storage", *GENERATED, *FRAMEWORKS)),
    # The error root and the shared words (statuses, verdicts) are leaves every layer may use.
    Rule(
        "storage-alone",
        ("storage",),
        ("server", "rules", *GENERATED, "grpc", "google", "openai"),
        allowed=("rules.errors", "rules.enums"),
    ),
    Rule("entry-points-on-top", ROOTS, ENTRY_POINTS, exempt=ENTRY_POINTS),
    Rule(
        "grpc-not-cli",
        ("server.grpc",),
        ("server.cli", "server.app", "server.__main__"),
    ),
    Rule(
        "worker-needs-no-pipeline",
        ("server.worker",),
        ("server.pipeline", "server.agents", "server.tools", "server.usecases"),
    ),
    Rule(
        "web-through-use-cases",
        ("server.web",),
        (
            *("storage", "rules", "server.grpc", "server.cli", "server.app", "server.__main__"),
            *("server.worker", "server.pipeline", "server.agents", "server.tools", "server.skills"),
            *("server.codec", *GENERATED, "grpc", "google"),
        ),
    ),
    # The MCP front end stands only on the use cases, like the viewer; the error root tells it
    # what a use case's error means.
    Rule(
        "mcp-through-use-cases",
        ("server.mcp",),
        (
            *("storage", "rules", "server.grpc", "server.web", "server.cli", "server.app"),
            *("server.__main__", "server.mcp_setup", "server.worker", "server.opinion_worker"),
            *("server.pipeline", "server.agents", "server.tools", "server.skills", "server.sources"),
            *("server.codec", "server.settings", *GENERATED, "grpc", "google"),
        ),
        allowed=("rules.errors",),
    ),
    Rule(
        "opinion-worker-needs-no-pipeline",
        ("server.opinion_worker",),
        ("server.pipeline", "server.tools", "server.grpc", "server.cli", "server.app"),
    ),
    # The front ends stand on the use cases alone: records, errors and health checks come from there.
    Rule("transport-never-storage", ("server.grpc", "server.cli", "server.web", "server.mcp"), ("storage",)),
    Rule("use-cases-know-no-wire", ("server.usecases",), ("server.codec", *GENERATED, "grpc", "google")),
    Rule("pipeline-below-use-cases", ("server.pipeline",), ("server.usecases",)),
    # The pipeline runs whatever backend it is handed: it knows the stages by their ports
    # (server.agents.base), and the Composer that writes by code comes with the backend.
    Rule(
        "pipeline-knows-agents-by-ports",
        ("server.pipeline",),
        ("server.agents",),
        allowed=("server.agents.base",),
    ),
    Rule(
        "agents-below-pipeline",
        ("server.agents", "server.skills"),
        ("server.pipeline", "server.usecases", "storage", *GENERATED),
    ),
    # Reading a question (its services, alerts, log terms, symptoms) serves every agent backend;
    # it knows the service catalog below it and no agent, tool or stage above it.
    Rule(
        "understanding-below-agents",
        ("server.understanding",),
        (
            *("server.agents", "server.skills", "server.pipeline", "server.usecases", "server.tools"),
            *("storage", *GENERATED),
        ),
    ),
    Rule(
        "tools-below-agents",
        ("server.tools",),
        ("server.pipeline", "server.usecases", "server.agents", "server.skills", "storage", *GENERATED),
    ),
    # Dependencies run one way, tools → sources: a source never imports a tool, and the words both
    # use (queries, answers, ToolError, tokens, a case's structure) sit below both in server.queries.
    Rule(
        "sources-below-tools",
        ("server.sources",),
        ("server", "storage", *GENERATED),
        allowed=("server.sources", "server.queries", "server.config_document"),
    ),
    Rule(
        "queries-are-neutral",
        ("server.queries",),
        ("server", "storage", *GENERATED),
        allowed=("server.queries",),
    ),
    # A helper that is a package (server.codec, server.settings) imports its own modules.
    Rule(
        "helpers-are-leaves",
        SHARED_HELPERS,
        ("server", "storage", "rules"),
        allowed=("server.codec", "server.settings", "server.config_document", "rules.errors"),
    ),
)


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def canonical(name: str) -> str:
    """`evigate.server.x` → `server.x` (likewise storage, rules); anything else unchanged."""
    parts = name.split(".")
    if len(parts) > 1 and parts[0] == "evigate" and parts[1] in ROOTS:
        return ".".join(parts[1:])
    return name


def module_name(path: Path, base: Path) -> tuple[str, bool]:
    """The dotted name of a source file, and whether it is a package's __init__."""
    parts = list(path.relative_to(base).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


@dataclass(frozen=True)
class Import:
    line: int
    target: str  # canonical dotted name of what is imported (module, or module.attribute)


def imports_of(source: str, module: str, is_package: bool) -> Iterator[Import]:
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, canonical(alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = canonical(node.module or "")
            for alias in node.names:
                yield Import(node.lineno, base if alias.name == "*" else f"{base}.{alias.name}")


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    target: str
    rule: Rule

    def __str__(self) -> str:
        rule = self.rule
        what = ", ".join(rule.forbidden) + (f" (except {', '.join(rule.allowed)})" if rule.allowed else "")
        return (
            f"{self.path}:{self.line}: imports {self.target}, breaking rule {rule.id!r}: "
            f"{', '.join(rule.importers)} must not import {what} (docs/design.md §9)"
        )


def violations(base: Path, rules: tuple[Rule, ...] = RULES) -> list[Violation]:
    found = []
    for root in ROOTS:
        for path in sorted((base / root).rglob("*.py")):
            module, is_package = module_name(path, base)
            applicable = [r for r in rules if under(module, r.importers) and not under(module, r.exempt)]
            if not applicable:
                continue
            for imp in imports_of(path.read_text(encoding="utf-8"), module, is_package):
                for rule in applicable:
                    if under(imp.target, rule.forbidden) and not under(imp.target, rule.allowed):
                        found.append(Violation(str(path.relative_to(base)), imp.line, imp.target, rule))
    return found


def test_the_tree_keeps_the_import_rules() -> None:
    found = violations(REPO)
    assert not found, "import rules broken:\n" + "\n".join(map(str, found))


MAX_MODULE_LINES = 400


def test_no_module_is_over_the_line_limit() -> None:
    """Small modules with one job (docs/design.md §9): a longer one is split by job, not trimmed."""
    too_long = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                too_long.append(f"{path.relative_to(REPO)}: {lines} lines")
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(too_long)


def test_every_rule_is_in_the_design_doc() -> None:
    doc = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    missing = [rule.id for rule in RULES if f"`{rule.id}`" not in doc]
    assert not missing, f"rules missing from the table in docs/design.md §9: {', '.join(missing)}"


def _write(base: Path, relative: str, text: str) -> None:
    path = base / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_checker_catches_each_spelling_of_a_forbidden_import(tmp_path: Path) -> None:
    """A small tree with one breach per import form: absolute, evigate-prefixed, relative, lazy."""
    _write(tmp_path, "rules/bad.py", "from server.app import App\n")
    _write(tmp_path, "storage/bad.py", "import evigate.server.codec\n")
    _write(tmp_path, "server/tools/bad.py", "def f():\n    from ..pipeline import material\n")
    _write(tmp_path, "server/sources/__init__.py", "from ..tools import toolbox\n")
    _write(tmp_path, "server/sources/ok.py", "from server.queries.types import ToolError\nfrom . import ok\n")
    _write(tmp_path, "server/sources/lazy.py", "def f():\n    from server.tools.backend import ToolError\n")
    _write(tmp_path, "server/tools/ok.py", "from server.sources.http import SourceHealth\n")
    found = {(v.path, v.line, v.target, v.rule.id) for v in violations(tmp_path)}
    assert found == {
        ("rules/bad.py", 1, "server.app.App", "rules-pure"),
        ("rules/bad.py", 1, "server.app.App", "entry-points-on-top"),
        ("storage/bad.py", 1, "server.codec", "storage-alone"),
        ("server/tools/bad.py", 2, "server.pipeline.material", "tools-below-agents"),
        ("server/sources/__init__.py", 1, "server.tools.toolbox", "sources-below-tools"),
        ("server/sources/lazy.py", 2, "server.tools.backend.ToolError", "sources-below-tools"),
    }


def test_a_violation_names_file_line_and_rule(tmp_path: Path) -> None:
    _write(tmp_path, "rules/bad.py", "\n\nimport sqlalchemy\n")
    (message,) = map(str, violations(tmp_path))
    assert message.startswith("rules/bad.py:3: imports sqlalchemy, breaking rule 'rules-pure': rules must")


def _module_graph(base: Path, root: str) -> dict[str, set[str]]:
    """Module → the modules of the same tree it imports (an imported attribute counts as its module)."""
    files = {module_name(p, base): p for p in sorted((base / root).rglob("*.py"))}
    names = {name for name, _ in files}
    graph: dict[str, set[str]] = {}
    for (name, is_package), path in files.items():
        targets = set()
        for imp in imports_of(path.read_text(encoding="utf-8"), name, is_package):
            target = imp.target if imp.target in names else imp.target.rpartition(".")[0]
            if target in names and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def function_imports(source: str) -> Iterator[tuple[int, str]]:
    """Imports of the project's own modules placed inside a function: the way a cycle hides."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (
                    inner.level or canonical(inner.module or "") != (inner.module or "")
                ):
                    yield inner.lineno, inner.module or "."
                elif isinstance(inner, ast.Import):
                    yield from ((inner.lineno, a.name) for a in inner.names if canonical(a.name) != a.name)


LOWER_FLOORS = ("server/tools", "server/sources", "server/queries")


def test_the_lower_floors_import_at_module_level() -> None:
    """tools, sources and queries import the project's modules at the top of the file, where the
    import rules and the cycle check see them in order; a function-level import dodges both."""
    found = [
        f"{path.relative_to(REPO)}:{line}: imports {target} inside a function"
        for floor in LOWER_FLOORS
        for path in sorted((REPO / floor).rglob("*.py"))
        for line, target in function_imports(path.read_text(encoding="utf-8"))
    ]
    assert not found, "\n".join(found)


def test_the_function_import_check_sees_each_spelling() -> None:
    source = (
        "def f():\n    from evigate.server.sources import http\n\n"
        "async def g():\n    from . import x\n    import json\n"
    )
    assert list(function_imports(source)) == [(2, "evigate.server.sources"), (5, ".")]


@pytest.mark.parametrize(
    "root",
    [
        "storage",
        "rules",
        "server/pipeline",
        "server/tools",
        "server/usecases",
        "server/queries",
        "server/sources/files",
        "server/sources/retrieval",
        "server/understanding",
    ],
)
def test_no_import_cycles(root: str) -> None:
    """Modules of one package never import each other in a circle (TYPE_CHECKING imports too)."""
    cycle = _cycle(_module_graph(REPO, root))
    assert cycle is None, " → ".join(cycle or [])


def test_no_code_names_an_issue_number() -> None:
    """Code explains itself; a tracker's numbering is outside the repository and goes stale."""
    issue = re.compile(r"\bissue #?\d+", re.IGNORECASE)
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for root in ROOTS
        for path in sorted((REPO / root).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if issue.search(line)
    ]
    assert not found, "issue numbers in code:\n" + "\n".join(found)
