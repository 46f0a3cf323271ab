"""The cluster from the settings: a dump, a kubeconfig's context, or none; settings that cannot
name one cluster are refused with the setting's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.server.cluster_setup import build_cluster
from evigate.server.settings import ConfigError, Settings
from evigate.server.sources.kubernetes.source import ApiCluster, DumpCluster
from tests.sources.kubernetes.apiserver import FakeApiServer


def test_a_dump_a_kubeconfig_context_or_none(dump: Path, tmp_path: Path) -> None:
    assert build_cluster(Settings()) is None
    assert isinstance(build_cluster(Settings.of(kube_dump=dump)), DumpCluster)
    fake = FakeApiServer("https://127.0.0.1:6443", tmp_path / "ca.pem", {})
    (tmp_path / "ca.pem").write_text("", encoding="utf-8")
    config = fake.kubeconfig(tmp_path / "kubeconfig")
    live = build_cluster(Settings.of(kubeconfig=config, kube_context="test", kube_namespaces=("payments",)))
    assert isinstance(live, ApiCluster) and live.where == "https://127.0.0.1:6443"
    assert live.settings.namespaces == ("payments",)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"kube_dump": Path("/nonexistent/dump")}, "kube_dump: /nonexistent/dump is not a directory"),
        ({"kube_context": "prod"}, "kube_context: names a context of --kubeconfig, which is not set"),
        ({"kube_in_cluster": True, "kube_dump": Path(".")}, "kube_dump: a cluster is read from a dump"),
    ],
)
def test_settings_that_name_no_one_cluster_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_cluster(Settings.of(**settings))
