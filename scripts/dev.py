"""The README's two commands: `python3 scripts/dev.py serve` and `python3 scripts/dev.py test`.

Creates .venv (once, and again when pyproject.toml changes), installs the project with its dev
extras, then either starts the service on embedded defaults or runs every quality gate and the
whole test suite. Before testing it also sets up the machine: installs the Debian packages of
scripts/debian-test-packages.txt that are missing (apt-get, as root or through sudo) and starts
MariaDB when it does not answer (on a fresh container, where /run is empty and /var/lib/mysql may be
too, it first makes /run/mysqld owned by mysql and runs mariadb-install-db). When everything is
present that costs one dpkg-query and one mysqladmin ping. Needs only Python 3.11+ and the package registries.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
PY = BIN / "python"
PACKAGE_LIST = ROOT / "scripts" / "debian-test-packages.txt"
MARIADB = "/usr/sbin/mariadbd"
MARIADB_WAIT_S = 60.0
MARIADB_RUN_DIR = Path("/run/mysqld")  # the socket and pid file; /run is empty in a fresh container
MARIADB_DATADIR = Path("/var/lib/mysql")


@dataclass(frozen=True)
class Requirement:
    """One line of debian-test-packages.txt: a package, skipped when `command` is already on PATH."""

    package: str
    command: str | None = None


def read_requirements(path: Path | None = None) -> list[Requirement]:
    requirements = []
    for line in (path or PACKAGE_LIST).read_text(encoding="utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            requirements.append(Requirement(words[0], words[1] if len(words) > 1 else None))
    return requirements


def installed_packages(names: Iterable[str]) -> set[str]:
    """The named packages dpkg knows as installed (unknown names are simply absent)."""
    names = list(names)
    if not names or shutil.which("dpkg-query") is None:
        return set()
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Status}\n", *names],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = (line.split("\t", 1) for line in result.stdout.splitlines() if "\t" in line)
    return {name.split(":", 1)[0] for name, status in rows if status.endswith("install ok installed")}


def missing_packages(
    requirements: Iterable[Requirement],
    installed: set[str],
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    return [
        r.package
        for r in requirements
        if r.package not in installed and (r.command is None or which(r.command) is None)
    ]


def ensure_debian_packages() -> None:
    requirements = read_requirements()
    if shutil.which("dpkg-query") is None or shutil.which("apt-get") is None:
        print(f"dev.py: not a Debian system; install by hand: {PACKAGE_LIST}", file=sys.stderr)
        return
    missing = missing_packages(requirements, installed_packages(r.package for r in requirements))
    if not missing:
        return
    sudo: list[str] = []
    if os.geteuid() != 0:
        if shutil.which("sudo") is None:
            sys.exit(f"dev.py: missing Debian packages, install them as root: {' '.join(missing)}")
        sudo = ["sudo", "env", "DEBIAN_FRONTEND=noninteractive"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        [*sudo, "apt-get", "update", "-qq"],
        [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
    ):
        print("+", " ".join(command), flush=True)
        subprocess.run(command, check=True, env=env)


def mariadb_answers() -> bool:
    ping = ["mysqladmin", "-h", "127.0.0.1", "-u", "root", "ping"]
    return shutil.which("mysqladmin") is not None and (
        subprocess.run(ping, capture_output=True, check=False).returncode == 0
    )


def mariadb_preparation(run_dir: Path, datadir: Path) -> list[list[str]]:
    """What Debian's init does before it starts MariaDB, where it is missing: the socket directory,
    owned by mysql (systemd's RuntimeDirectory=mysqld, mode 0755), and the system tables of an empty
    datadir, root reachable over TCP without a password (what the storage tests log in as)."""
    commands = []
    if not run_dir.is_dir():
        commands.append(["install", "-d", "-o", "mysql", "-g", "mysql", "-m", "0755", str(run_dir)])
    if not (datadir / "mysql").is_dir():
        commands.append(
            [
                "mariadb-install-db",
                "--user=mysql",
                f"--datadir={datadir}",
                "--skip-test-db",
                "--auth-root-authentication-method=normal",
            ]
        )
    return commands


def ensure_mariadb() -> None:
    """Starts the local MariaDB the storage tests use when it does not answer (not when the tests are
    pointed at another server with EVIGATE_TEST_MYSQL), preparing it first on a fresh machine."""
    if os.environ.get("EVIGATE_TEST_MYSQL") or mariadb_answers():
        return
    sudo = [] if os.geteuid() == 0 or shutil.which("sudo") is None else ["sudo"]
    start = ["start-stop-daemon", "--start", "--oknodo", "--background", "--exec", MARIADB]
    for step in [*mariadb_preparation(MARIADB_RUN_DIR, MARIADB_DATADIR), start]:
        command = [*sudo, *step]
        print("+", " ".join(command), flush=True)
        subprocess.run(command, check=True)
    deadline = time.monotonic() + MARIADB_WAIT_S
    while not mariadb_answers():  # bounded poll on the server's own ping
        if time.monotonic() > deadline:
            sys.exit(f"dev.py: MariaDB ({MARIADB}) did not answer a ping within {MARIADB_WAIT_S:g} s")
        time.sleep(0.25)


def _has_pip() -> bool:
    if not PY.exists():
        return False
    probe = [str(PY), "-m", "pip", "--version"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def ensure_venv() -> None:
    stamp = VENV / ".installed"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    if not _has_pip():  # none yet, or one left half made by an interrupted run
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[dev]"], check=True)
    stamp.write_text(digest)


# The import tree: evigate/{server,storage,rules} and the generated evigate/{v1,bp}, linked to the
# repository's folders, so tests and mypy import the package as it is installed (evigate.*).
PKG = VENV / "pkg" / "evigate"
LINKS = {
    "server": ROOT / "server",
    "storage": ROOT / "storage",
    "rules": ROOT / "rules",
    "v1": ROOT / "generated" / "evigate" / "v1",
    "bp": ROOT / "generated" / "evigate" / "bp",
}


def link_tree() -> None:
    PKG.mkdir(parents=True, exist_ok=True)
    for name, target in LINKS.items():
        link = PKG / name
        if not (link.is_symlink() and link.resolve() == target.resolve()):
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(target, target_is_directory=True)


def run(*cmd: str) -> None:
    print("+", " ".join(cmd), flush=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(cmd, check=False, cwd=ROOT, env=env)
    if result.returncode != 0:
        sys.exit(result.returncode)


def test(extra: list[str]) -> None:
    ensure_debian_packages()
    ensure_mariadb()
    run("ruff", "check", ".")
    run("ruff", "format", "--check", ".")
    run("mypy", "-p", "evigate.server", "-p", "evigate.storage", "-p", "evigate.rules")
    run("mypy", "tests", "bench", "scripts")
    run("buf", "lint")
    run("buf", "breaking", "--against", "proto/released/evigate-v1.binpb")
    run(str(PY), "scripts/generate.py", "--check")
    run(str(PY), "-m", "pytest", *extra)


DEV_WEB = "127.0.0.1:8080"


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in {"serve", "test"}:
        sys.exit("usage: python3 scripts/dev.py serve [evigate serve flags] | test [pytest args]")
    ensure_venv()
    link_tree()
    if sys.argv[1] == "serve":
        flags = sys.argv[2:]
        # The trace viewer is on for development (loopback only) unless the flags choose otherwise;
        # `evigate serve` prints its URL after the gRPC address.
        if not any(f == "--web" or f.startswith("--web=") for f in flags) and not os.environ.get(
            "EVIGATE_WEB"
        ):
            flags = [*flags, "--web", DEV_WEB]
        os.execv(str(BIN / "evigate"), [str(BIN / "evigate"), "serve", *flags])
    test(sys.argv[2:])


if __name__ == "__main__":
    main()
