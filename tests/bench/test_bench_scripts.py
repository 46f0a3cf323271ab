"""The bench scripts fail with a sentence, not a traceback, when a tool they need is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_grpc_without_h2load_says_what_to_install(tmp_path: Path) -> None:
    """Issue 19, item 12."""
    empty = tmp_path / "bin"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_grpc.py"), "--rounds", "1", "--duration", "1"],
        cwd=ROOT,
        env={**os.environ, "PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "h2load" in result.stderr and "nghttp2-client" in result.stderr
