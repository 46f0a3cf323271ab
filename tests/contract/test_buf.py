"""Buf guards the contract: lint is clean, nothing breaks the released baseline, and the breaking
check really catches the changes that break Java and Python clients."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUF = Path(sys.executable).parent / "buf"
BASELINE = ROOT / "proto" / "released" / "evigate-v1.binpb"
EVIDENCE = Path("proto") / "evigate" / "v1" / "evidence.proto"


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_buf_binary_is_installed() -> None:
    assert BUF.exists(), f"{BUF} missing: install the dev extras (buf-bin)"


def test_lint_is_clean() -> None:
    result = buf("lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_breaking_change_against_released_baseline() -> None:
    assert BASELINE.exists()
    result = buf("breaking", "--against", str(BASELINE))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        # renumbering EvidenceBinding.raw_path (5 → 15): field 5 disappears
        ("  string raw_path = 5;", "  string raw_path = 15;", "FIELD_NO_DELETE"),
        # retyping EvidenceBinding.raw_path (string → int64)
        ("  string raw_path = 5;", "  int64 raw_path = 5;", "FIELD_SAME_TYPE"),
    ],
    ids=["renumber", "retype"],
)
def test_breaking_edit_is_reported(tmp_path: Path, old: str, new: str, rule: str) -> None:
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    shutil.copy2(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    proto = tmp_path / EVIDENCE
    text = proto.read_text(encoding="utf-8")
    assert text.count(old) == 1
    proto.write_text(text.replace(old, new), encoding="utf-8")

    result = buf("breaking", "--against", str(BASELINE), "--error-format", "json", cwd=tmp_path)

    assert result.returncode != 0
    findings = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    hits = [f for f in findings if f["type"] == rule]
    assert hits, f"expected {rule}, buf said: {result.stdout}{result.stderr}"
    assert all(f["path"] == EVIDENCE.as_posix() for f in hits)
    assert any('"raw_path"' in f["message"] or '"5"' in f["message"] for f in hits)
