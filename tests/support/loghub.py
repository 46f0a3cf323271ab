"""Where the loghub-2k samples are: read in place, never copied into the project.

They lie in `shared/loghub` beside the checkout. A clone made elsewhere (a temporary folder for a
clean CI run) finds them beside the repository it was cloned from, a worktree beside its main
checkout. `EVIGATE_LOGHUB` names another
folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str:
    try:
        command = ["git", "-C", str(ROOT), *args]
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def _related_checkouts() -> list[Path]:
    """The main checkout of this worktree, and the local repository this one was cloned from."""
    found = []
    if common := _git("rev-parse", "--path-format=absolute", "--git-common-dir"):
        found.append(Path(common).parent)
    url = _git("config", "--get", "remote.origin.url").removeprefix("file://")
    if url and "://" not in url and ":" not in url.split("/", 1)[0]:
        found.append(Path(url))
    return [path for path in found if path.is_dir()]


def loghub_folder() -> Path:
    """The loghub folder to read, or the first place looked when there is none."""
    if named := os.environ.get("EVIGATE_LOGHUB"):
        return Path(named)
    candidates = [ROOT / ".." / "shared" / "loghub"]
    candidates += [checkout / ".." / "shared" / "loghub" for checkout in _related_checkouts()]
    return next((c.resolve() for c in candidates if c.is_dir()), candidates[0].resolve())
