"""Fixtures of the pipeline tests: the real storage (SQLite and MariaDB through tests/conftest.py's
`db`), the real fixture tool backend on the bundled demo world (or a copy of it), and a helper that
builds a Pipeline around any agent backend."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evigate.server.agents.base import AgentBackend
from evigate.server.agents.offline import build_offline_backend
from evigate.server.pipeline import Pipeline
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.skills import load_skills
from evigate.server.tools import build_backend
from evigate.server.tools.registry import default_registry
from evigate.storage import Database

DEMO_DIR = Path(__file__).resolve().parents[2] / "server" / "demo"
BuildPipeline = Callable[..., Pipeline]


@pytest.fixture
def build_pipeline(db: Database) -> BuildPipeline:
    """`build_pipeline(agents=None, data_dir=None, max_rounds=2)`: offline agents and the bundled demo
    world by default."""

    def build(
        agents: AgentBackend | None = None, data_dir: Path | None = None, max_rounds: int = 2
    ) -> Pipeline:
        tools = build_backend(data_dir, db.repo)
        return Pipeline(
            db.repo,
            tools,
            agents or build_offline_backend(catalog=tools.services),
            load_skills(),
            default_registry().catalog(),
            PipelineSettings(max_rounds=max_rounds, owner="tests"),
        )

    return build


@pytest.fixture
def pipeline(build_pipeline: BuildPipeline) -> Pipeline:
    return build_pipeline()


@pytest.fixture
def corrupt_world(tmp_path: Path) -> Path:
    """A copy of the demo world whose inventory-service log file holds nothing readable (binary
    garbage): its queries fail. One bad line among good ones is only skipped (tests/tools)."""
    world = tmp_path / "world"
    shutil.copytree(DEMO_DIR, world, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    (world / "logs" / "inventory-service.ndjson").write_bytes(b"\x00\x01\x02\xff garbage\n" * 3)
    return world
