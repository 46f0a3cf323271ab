"""generated/ is exactly what `python scripts/generate.py` makes from proto/, and the freshness
check catches a .proto edited without regenerating. The real generated/ is never written: the
check regenerates into a temporary folder, and the stale-edit case runs on a copied tree."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "generate.py"), "--check"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def test_generated_is_fresh() -> None:
    result = check(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout


def test_unregenerated_proto_edit_is_caught(tmp_path: Path) -> None:
    real_generated = _digest(ROOT / "generated")
    for folder in ("proto", "scripts", "generated"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # The ruff configuration shapes betterproto2's formatting, so the copy carries it too.
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")

    before = check(tmp_path)
    assert "evidence_pb2.py" not in before.stdout, before.stdout

    proto = tmp_path / "proto" / "evigate" / "v1" / "evidence.proto"
    proto.write_text(
        proto.read_text(encoding="utf-8")
        + "\n// Added without regenerating.\nmessage StaleProbe {\n  // A probe.\n  string probe = 1;\n}\n",
        encoding="utf-8",
    )
    after = check(tmp_path)

    assert after.returncode == 1, after.stdout + after.stderr
    assert "stale" in after.stdout
    stale = tmp_path / "generated" / "evigate" / "v1" / "evidence_pb2.py"
    assert f"differs: {stale}" in after.stdout
    assert _digest(ROOT / "generated") == real_generated  # the real tree was not touched
