"""The built wheel installs one import package, `evigate`, with every module and data file the
service needs, and nothing under a generic top-level name (server, storage, rules, generated)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_only_the_evigate_package(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("evigate-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"evigate", next(t for t in tops if t.endswith(".dist-info"))}, tops
    for needed in (
        "evigate/server/app.py",
        "evigate/server/agents/llm/prompts/composer.md",
        "evigate/server/demo/world.json",
        "evigate/server/web/templates/session.html",
        "evigate/server/web/static/viewer.css",
        "evigate/server/web/static/viewer.js",
        "evigate/storage/migrations/versions/v001_diagnosis_session.py",
        "evigate/rules/gatekeeper-rules.json",
        "evigate/v1/chat_service_pb2.py",
        "evigate/bp/evigate/v1/__init__.py",
    ):
        assert needed in names, needed
    assert not any("/__pycache__/" in name for name in names)
    assert not any(name.startswith("evigate/server/demo/generate") for name in names)  # a dev tool
