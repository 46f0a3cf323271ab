from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.kubernetes.scenarios import write_cluster


@pytest.fixture(scope="session")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cluster of clusters.py's table, written once."""
    return write_cluster(tmp_path_factory.mktemp("cluster") / "dump")
