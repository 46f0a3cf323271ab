"""The cluster from the settings, as any source: one registry line and its configuration (flags or
the sources file's `kubernetes` section); settings that cannot name one cluster are refused with the
setting's name; the built set holds the cluster in its cluster and log capabilities."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evigate.server.live_sources import build_sources, build_tools
from evigate.server.settings import ConfigError, Settings
from evigate.server.sources.kinds import build_sources as build_each
from evigate.server.sources.kubernetes.source import ApiCluster, DumpCluster
from evigate.server.sources.source_set import SourceSet
from evigate.server.sources.sources_config import SourceConfigError, sources_config
from tests.sources.kubernetes.apiserver import FakeApiServer

MOMENT = datetime(2026, 7, 8, 21, 0, tzinfo=UTC)


def _kubeconfig(tmp_path: Path) -> Path:
    fake = FakeApiServer("https://127.0.0.1:6443", tmp_path / "ca.pem", {})
    (tmp_path / "ca.pem").write_text("", encoding="utf-8")
    return fake.kubeconfig(tmp_path / "kubeconfig")


def test_a_dump_a_kubeconfig_context_or_none(dump: Path, tmp_path: Path) -> None:
    assert build_sources(Settings()).kubernetes is None
    built = build_each(build_sources(Settings.of(kube_dump=dump)))
    assert isinstance(built["kubernetes"], DumpCluster)
    config = _kubeconfig(tmp_path)
    settings = Settings.of(kubeconfig=config, kube_context="test", kube_namespaces=("payments",))
    live = build_each(build_sources(settings))["kubernetes"]
    assert isinstance(live, ApiCluster) and live.where == "https://127.0.0.1:6443"
    assert live.settings.namespaces == ("payments",)


def test_the_sources_file_names_the_cluster_and_flags_win(dump: Path, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path)
    section = {"kubeconfig": str(config), "context": "test", "namespaces": ["payments"], "timeout_s": 3}
    sources = sources_config(env={}, file_sections={"kubernetes": section})
    assert sources.kubernetes is not None and sources.kubernetes.namespaces == ("payments",)
    assert sources.kubernetes.timeout_s == 3 and sources.live()
    flagged = sources_config(env={}, file_sections={"kubernetes": section}, cluster_flags={"dump": dump})
    assert flagged.kubernetes is not None and flagged.kubernetes.dump == dump and not flagged.live()
    assert flagged.kubernetes.describe()["mode"] == "dump"


async def test_the_set_holds_the_cluster_in_its_capabilities_and_a_dump_keeps_the_clock(dump: Path) -> None:
    base = SourceSet(sources=(), clock=lambda: MOMENT)
    tools = build_tools(Settings.of(kube_dump=dump), base, build_sources(Settings.of(kube_dump=dump)))
    try:
        (cluster,) = tools.cluster
        assert (
            tools.sources == (cluster,)
            and [id(s) for s in tools.logs] == [id(cluster)]
            and tools.watched() == [cluster]
        )
        assert tools.now() == MOMENT  # a dump is no live server: "now" stays the world's
    finally:
        await tools.aclose()


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
        build_sources(Settings.of(**settings))


def test_a_kubeconfig_the_client_cannot_load_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "kubeconfig"
    broken.write_text("apiVersion: v1\nkind: Config\ncontexts: []\n", encoding="utf-8")
    with pytest.raises(SourceConfigError, match="kubeconfig: "):
        build_each(build_sources(Settings.of(kubeconfig=broken)))


async def test_a_dump_is_read_in_the_configured_namespaces_only(dump: Path) -> None:
    sources = build_sources(Settings.of(kube_dump=dump, kube_namespaces=("payments",)))
    cluster = build_each(sources)["kubernetes"]
    assert isinstance(cluster, DumpCluster)
    try:
        state = await cluster.state()
        assert state.namespaces() == ["payments"] and state.of("Node")  # nodes are cluster-scoped
        assert set(state.pod_logs) == {key for key in state.pod_logs if key[0] == "payments"}
    finally:
        await cluster.aclose()
