"""The repository's top-level folders as one import package, `evigate` (docs/design.md §9).

server/, storage/ and rules/ stay where the layout puts them; the wheel installs them as
evigate.server, evigate.storage and evigate.rules beside the generated contract (evigate.v1,
evigate.bp), so nothing is installed under a generic top-level name. Everything else about the
package is in pyproject.toml; only this mapping needs code, to list the subpackages."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
FOLDERS = {"evigate.server": "server", "evigate.storage": "storage", "evigate.rules": "rules"}


def _packages() -> list[str]:
    names = [
        "evigate",
        *(f"evigate.{p}" for p in find_namespace_packages(str(ROOT / "generated" / "evigate"))),
    ]
    for package, folder in FOLDERS.items():
        names.append(package)
        found = find_namespace_packages(str(ROOT / folder), exclude=["*__pycache__*"])
        names.extend(f"{package}.{sub}" for sub in found)
    return names


setup(
    packages=_packages(),
    package_dir={"evigate": "generated/evigate", **FOLDERS},
)
