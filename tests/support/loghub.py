"""Where the loghub-2k samples are: read in place, never copied into the project.

They lie in `shared/loghub` beside the checkout. A clone made elsewhere (a temporary folder for a
clean CI run) finds them beside the repository it was cloned from. `EVIGATE_LOGHUB` names another
folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _origin_checkout() -> Path | None:
    """The local repository this checkout was cloned from, when it was cloned from a folder."""
    try:
        url = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    if not url or "://" in url or ":" in url.split("/", 1)[0]:
        return None
    path = Path(url.removeprefix("file://"))
    return path if path.is_dir() else None


def loghub_folder() -> Path:
    """The loghub folder to read, or the first place looked when there is none."""
    if named := os.environ.get("EVIGATE_LOGHUB"):
        return Path(named)
    candidates = [ROOT / ".." / "shared" / "loghub"]
    if (origin := _origin_checkout()) is not None:
        candidates.append(origin / ".." / "shared" / "loghub")
    return next((c.resolve() for c in candidates if c.is_dir()), candidates[0].resolve())
