"""`python3 scripts/dev.py test` sets the machine up itself (issue 19, item 13): it installs the
missing Debian packages of scripts/debian-test-packages.txt and starts MariaDB when it does not
answer (on a fresh container making /run/mysqld and the system tables first); `.ci/run` only calls
it. apt-get, mysqladmin, start-stop-daemon, install and mariadb-install-db are replaced by small
scripts on PATH that record their arguments (the real ones would change the machine)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evigate_dev_script", ROOT / "scripts" / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


dev = _dev()


def _script(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


def test_every_listed_package_has_a_reason() -> None:
    lines = (ROOT / "scripts" / "debian-test-packages.txt").read_text(encoding="utf-8").splitlines()
    entries = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    assert entries
    for line in entries:
        package, _, why = line.partition("#")
        assert why.strip(), f"no `# why` comment: {line!r}"
        assert 1 <= len(package.split()) <= 2, line
    names = {r.package for r in dev.read_requirements()}
    assert {"mariadb-server", "libgrpc-java", "protobuf-compiler", "nghttp2-client"} <= names
    assert dev.Requirement("default-jdk-headless", "javac") in dev.read_requirements()


def test_a_package_is_missing_unless_installed_or_its_command_exists() -> None:
    requirements = [dev.Requirement("a"), dev.Requirement("b"), dev.Requirement("jdk", "javac")]
    assert dev.missing_packages(requirements, {"a"}, lambda _: None) == ["b", "jdk"]
    assert dev.missing_packages(requirements, {"a"}, lambda c: f"/usr/bin/{c}") == ["b"]


def test_the_machine_has_every_listed_package() -> None:
    """What the README's test command installed before running pytest is all there."""
    requirements = dev.read_requirements()
    installed = dev.installed_packages(r.package for r in requirements)
    assert dev.missing_packages(requirements, installed) == []


def test_setup_is_a_no_op_when_everything_is_installed(fake_bin: Path, tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls"
    _script(fake_bin, "apt-get", f'echo "$@" >> {calls}; exit 1')
    dev.ensure_debian_packages()
    assert not calls.exists()


def test_setup_installs_only_the_missing_packages(
    fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = tmp_path / "packages.txt"
    listing.write_text("# header\nlibc6  # installed everywhere\nevigate-no-such-package  # missing\n")
    monkeypatch.setattr(dev, "PACKAGE_LIST", listing)
    calls = tmp_path / "apt-calls"
    _script(fake_bin, "apt-get", f'echo "$@" >> {calls}')
    dev.ensure_debian_packages()
    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends evigate-no-such-package",
    ]


@pytest.fixture
def prepared_mariadb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A socket directory and an initialised datadir, as on a machine that ran MariaDB before."""
    (tmp_path / "run").mkdir()
    (tmp_path / "datadir" / "mysql").mkdir(parents=True)
    monkeypatch.setattr(dev, "MARIADB_RUN_DIR", tmp_path / "run")
    monkeypatch.setattr(dev, "MARIADB_DATADIR", tmp_path / "datadir")


@pytest.mark.usefixtures("prepared_mariadb")
def test_mariadb_is_started_when_it_does_not_answer(
    fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVIGATE_TEST_MYSQL", raising=False)
    started, pings = tmp_path / "started", tmp_path / "pings"
    # The fake server answers its third ping after the start, like one still initialising.
    _script(
        fake_bin,
        "mysqladmin",
        f'echo ping >> {pings}; [ -f {started} ] && [ "$(wc -l < {pings})" -ge 3 ]',
    )
    _script(fake_bin, "start-stop-daemon", f'echo "$@" > {started}')
    dev.ensure_mariadb()
    assert started.read_text().split() == ["--start", "--oknodo", "--background", "--exec", dev.MARIADB]
    assert len(pings.read_text().splitlines()) >= 3


def test_a_fresh_container_gets_the_socket_directory_and_system_tables_before_the_start(
    fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty /run and an empty /var/lib/mysql: the directory is made owned by mysql, as Debian's
    init makes it, the datadir initialised, then the server started, in that order."""
    monkeypatch.delenv("EVIGATE_TEST_MYSQL", raising=False)
    run_dir, datadir = tmp_path / "run" / "mysqld", tmp_path / "lib" / "mysql"
    datadir.mkdir(parents=True)  # the package made it; nothing in it yet
    monkeypatch.setattr(dev, "MARIADB_RUN_DIR", run_dir)
    monkeypatch.setattr(dev, "MARIADB_DATADIR", datadir)
    monkeypatch.setattr(dev.os, "geteuid", lambda: 0)  # as root: no sudo (whose PATH has no fakes)
    calls = tmp_path / "calls"
    for name in ("install", "mariadb-install-db", "start-stop-daemon"):
        _script(fake_bin, name, f'echo "{name} $*" >> {calls}')
    _script(fake_bin, "mysqladmin", f"grep -q start-stop-daemon {calls} 2>/dev/null")
    assert dev.mariadb_preparation(run_dir, datadir) == [
        ["install", "-d", "-o", "mysql", "-g", "mysql", "-m", "0755", str(run_dir)],
        [
            "mariadb-install-db",
            "--user=mysql",
            f"--datadir={datadir}",
            "--skip-test-db",
            "--auth-root-authentication-method=normal",
        ],
    ]
    dev.ensure_mariadb()
    assert [line.split()[0] for line in calls.read_text().splitlines()] == [
        "install",
        "mariadb-install-db",
        "start-stop-daemon",
    ]


def test_a_prepared_machine_needs_no_preparation(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "datadir" / "mysql").mkdir(parents=True)
    assert dev.mariadb_preparation(tmp_path / "run", tmp_path / "datadir") == []


def test_mariadb_is_left_alone_when_it_answers(
    fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVIGATE_TEST_MYSQL", raising=False)
    started = tmp_path / "started"
    _script(fake_bin, "mysqladmin", "exit 0")
    _script(fake_bin, "start-stop-daemon", f"touch {started}")
    dev.ensure_mariadb()
    assert not started.exists()


def test_ci_run_only_calls_the_readme_test_command() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line for line in lines if line.strip() and not line.startswith("#")]
    assert commands[-1] == "exec python3 scripts/dev.py test"
    assert not any("apt-get" in line or "mariadbd" in line for line in commands)
    assert shutil.which("python3")
