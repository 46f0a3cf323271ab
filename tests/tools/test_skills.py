from __future__ import annotations

import json
from pathlib import Path

import pytest

from evigate.server.skills import SKILLS_DIR, SkillCatalogError, load_skills

GOOD = {
    "name": "diagnose-disk",
    "description": "Disk full",
    "when_to_use": {"keywords": ["磁盘", "disk"], "alert_names": ["DiskSpaceLow"]},
    "steps": [{"text": "query_metrics: DiskSpaceLow", "tools": ["query_metrics"]}, {"text": "read runbook"}],
}


def test_bundled_catalog() -> None:
    skills = {s.name: s for s in load_skills()}
    assert {"diagnose-high-cpu", "diagnose-mysql-connection-pool", "diagnose-error-rate"} <= set(skills)
    cpu = skills["diagnose-high-cpu"]
    assert cpu.alert_names == ("HighCPUUsage",)
    assert cpu.tools == ("query_metrics", "query_logs", "lookup_knowledge")
    assert len(cpu.steps) == 3 and all(isinstance(step, str) for step in cpu.steps)
    pool = skills["diagnose-mysql-connection-pool"]
    assert "HikariCP" in pool.keywords and pool.tools[0] == "query_logs"
    assert len(list(SKILLS_DIR.glob("*.json"))) == len(skills)


def test_adding_a_skill_is_adding_a_file(tmp_path: Path) -> None:
    (tmp_path / "disk.json").write_text(json.dumps(GOOD), encoding="utf-8")
    [skill] = load_skills(tmp_path)
    assert skill.name == "diagnose-disk" and skill.tools == ("query_metrics",)
    assert skill.steps == ("query_metrics: DiskSpaceLow", "read runbook")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Bad Name"}, "name must be"),
        ({"extra": 1}, "unknown field(s) extra"),
        ({"when_to_use": {"keywords": []}}, "keywords must not be empty"),
        ({"steps": []}, "steps must be a non-empty list"),
        ({"steps": [{"text": "x", "tools": ["rm_rf"]}]}, "unknown tool(s) rm_rf"),
    ],
)
def test_invalid_skill_files_name_the_file(tmp_path: Path, change: dict[str, object], message: str) -> None:
    (tmp_path / "broken.json").write_text(json.dumps({**GOOD, **change}), encoding="utf-8")
    with pytest.raises(SkillCatalogError, match=r"broken\.json") as caught:
        load_skills(tmp_path)
    assert message in str(caught.value)


def test_duplicate_and_unreadable_skills(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(GOOD), encoding="utf-8")
    with pytest.raises(SkillCatalogError, match="duplicate"):
        load_skills(tmp_path)
    (tmp_path / "b.json").write_text("{", encoding="utf-8")
    with pytest.raises(SkillCatalogError, match=r"b\.json"):
        load_skills(tmp_path)
