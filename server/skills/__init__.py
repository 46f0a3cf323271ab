"""The diagnosis skill catalog: one JSON file per skill in this folder (adding a skill = adding a file).

{"name": "diagnose-high-cpu", "description": "...",
 "when_to_use": {"keywords": ["CPU", "使用率"], "alert_names": ["HighCPUUsage"]},
 "steps": [{"text": "query_metrics: ...", "tools": ["query_metrics"]}, ...]}
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evigate.rules.errors import EvigateError
from evigate.server.agents.base import Skill
from evigate.server.tools.registry import default_registry

SKILLS_DIR = Path(__file__).resolve().parent
KNOWN_TOOLS = default_registry().names()  # a step may name only registered tools
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class SkillCatalogError(EvigateError, ValueError):
    """A skill file does not fit the catalog format; the message names the file."""


def _strings(value: Any, where: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SkillCatalogError(f"{where} must be a list of non-empty strings")
    if not value and not allow_empty:
        raise SkillCatalogError(f"{where} must not be empty")
    return tuple(v.strip() for v in value)


def parse_skill(data: Any, source: str) -> Skill:
    if not isinstance(data, dict):
        raise SkillCatalogError(f"{source}: expected a JSON object")
    unknown = set(data) - {"name", "description", "when_to_use", "steps"}
    if unknown:
        raise SkillCatalogError(f"{source}: unknown field(s) {', '.join(sorted(unknown))}")
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        raise SkillCatalogError(f"{source}: name must be lowercase words joined by '-'")
    if not isinstance(description, str) or not description.strip():
        raise SkillCatalogError(f"{source}: description must be a non-empty string")
    when = data.get("when_to_use")
    if not isinstance(when, dict):
        raise SkillCatalogError(f"{source}: when_to_use must be an object with keywords and alert_names")
    keywords = _strings(when.get("keywords"), f"{source}: when_to_use.keywords")
    alert_names = _strings(
        when.get("alert_names", []), f"{source}: when_to_use.alert_names", allow_empty=True
    )
    steps_data = data.get("steps")
    if not isinstance(steps_data, list) or not steps_data:
        raise SkillCatalogError(f"{source}: steps must be a non-empty list")
    steps: list[str] = []
    tools: list[str] = []
    for number, step in enumerate(steps_data, start=1):
        where = f"{source}: steps[{number - 1}]"
        if not isinstance(step, dict) or not isinstance(step.get("text"), str) or not step["text"].strip():
            raise SkillCatalogError(f"{where} must be an object with a non-empty text")
        step_tools = _strings(step.get("tools", []), f"{where}.tools", allow_empty=True)
        bad = [t for t in step_tools if t not in KNOWN_TOOLS]
        if bad:
            raise SkillCatalogError(f"{where}: unknown tool(s) {', '.join(bad)}")
        steps.append(step["text"].strip())
        tools.extend(t for t in step_tools if t not in tools)
    return Skill(name, description.strip(), keywords, alert_names, tuple(steps), tuple(tools))


def load_skills(directory: Path | None = None) -> list[Skill]:
    """Every *.json skill in directory (default: the bundled catalog), sorted by name."""
    folder = directory if directory is not None else SKILLS_DIR
    skills: dict[str, Skill] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SkillCatalogError(f"{path.name}: cannot read skill: {exc}") from exc
        skill = parse_skill(data, path.name)
        if skill.name in skills:
            raise SkillCatalogError(f"{path.name}: duplicate skill name {skill.name!r}")
        skills[skill.name] = skill
    return [skills[name] for name in sorted(skills)]


__all__ = ["KNOWN_TOOLS", "SKILLS_DIR", "SkillCatalogError", "load_skills", "parse_skill"]
