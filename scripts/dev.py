"""The README's two commands: `python3 scripts/dev.py serve` and `python3 scripts/dev.py test`.

Creates .venv (once, and again when pyproject.toml changes), installs the project with its dev
extras, then either starts the service on embedded defaults or runs every quality gate and the
whole test suite. Needs only Python 3.11+ and the package registries.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
PY = BIN / "python"


def ensure_venv() -> None:
    stamp = VENV / ".installed"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    if not PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[dev]"], check=True)
    stamp.write_text(digest)


def run(*cmd: str) -> None:
    print("+", " ".join(cmd), flush=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(cmd, check=False, cwd=ROOT, env=env)
    if result.returncode != 0:
        sys.exit(result.returncode)


def test(extra: list[str]) -> None:
    run("ruff", "check", ".")
    run("ruff", "format", "--check", ".")
    run("mypy", "server", "storage", "rules", "tests", "bench", "scripts")
    run("buf", "lint")
    run("buf", "breaking", "--against", "proto/released/evigate-v1.binpb")
    run(str(PY), "scripts/generate.py", "--check")
    run(str(PY), "-m", "pytest", *extra)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in {"serve", "test"}:
        sys.exit("usage: python3 scripts/dev.py serve [evigate serve flags] | test [pytest args]")
    ensure_venv()
    if sys.argv[1] == "serve":
        os.execv(str(BIN / "evigate"), [str(BIN / "evigate"), "serve", *sys.argv[2:]])
    test(sys.argv[2:])


if __name__ == "__main__":
    main()
