"""docs/tools.md, written from the tool registry so the documented tools are the registered ones.

python scripts/tool_docs.py            # rewrite docs/tools.md
python scripts/tool_docs.py --check    # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

from evigate.server.tools.registry import ToolRegistry, default_registry  # noqa: E402
from evigate.server.tools.tool import Tool  # noqa: E402

DOC_PATH = ROOT / "docs" / "tools.md"
_HEADER = """# Tools

Generated from the tool registry (`server/tools/registry.py`) by `python scripts/tool_docs.py`; do not
edit by hand. Each tool is one module under `server/tools/`. A call that found items returns
`{<array>: [...], "total": n}` and one evidence ref per item (`$.<array>[i]`, a single line holding every
field of the item); a call that found nothing returns one `$.no_evidence` ref; a call that could not
check is `failed` with no refs.
"""


def _argument(name: str, spec: dict[str, Any], required: bool) -> str:
    facts = []
    if "enum" in spec:
        facts.append("/".join(f"`{v}`" for v in spec["enum"]))
    if spec.get("type") == "integer":
        facts.append(f"{spec['minimum']}–{spec['maximum']}")
    if spec.get("description"):
        facts.append(str(spec["description"]))
    if required:
        facts.append("required")
    return f"`{name}` ({'; '.join(facts)})" if facts else f"`{name}`"


def _section(tool: Tool) -> str:
    arguments = "; ".join(
        _argument(name, dict(spec), name in tool.required) for name, spec in tool.properties.items()
    )
    citable = ", ".join(f"`{t}`" for t in sorted(tool.claim_types)) if tool.claim_types else "any claim type"
    return "\n".join(
        [
            f"## `{tool.name}`",
            "",
            tool.description,
            "",
            f"- arguments: {arguments or 'none'}",
            f"- cited as: `$.{tool.item_array}[i]` or `$.no_evidence`",
            f"- citable by: {citable}",
            f"- no evidence: `{tool.no_evidence_message}`",
            "",
        ]
    )


def render(registry: ToolRegistry) -> str:
    return "\n".join([_HEADER, *(_section(tool) for tool in registry)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail when docs/tools.md is out of date")
    options = parser.parse_args(argv)
    text = render(default_registry())
    if options.check:
        current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
        if current != text:
            sys.stderr.write(f"{DOC_PATH} is out of date: run python scripts/tool_docs.py\n")
            return 1
        return 0
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
