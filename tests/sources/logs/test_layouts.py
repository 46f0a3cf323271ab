"""Where logs live: Kubernetes pod names, rotated files, container symlinks, plain trees."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from evigate.server.sources.logs import LogConfig
from evigate.server.sources.logs.layouts import discover, service_of_pod
from tests.sources.logs.readerkit import SAMPLES


@pytest.mark.parametrize(
    ("pod", "service"),
    [
        ("payment-service-7d9f8b6c5d-x2kqz", "payment-service"),  # Deployment: ReplicaSet hash + suffix
        ("checkout-5b7c9d8f4-q6vw2", "checkout"),
        ("fluent-bit-x7k2p", "fluent-bit"),  # DaemonSet: suffix only
        ("kafka-0", "kafka"),  # StatefulSet: ordinal
        ("report-29123456-bx9zq", "report"),  # CronJob: schedule time + suffix
        ("api-server", "api-server"),  # no hash: vowels never appear in Kubernetes' suffixes
        ("order-backend", "order-backend"),
    ],
)
def test_service_from_pod_name(pod: str, service: str) -> None:
    assert service_of_pod(pod) == service


def test_kubernetes_tree_is_read_once_through_the_pod_files() -> None:
    sources = {s.service: s for s in discover(LogConfig(root=SAMPLES / "k8s"))}
    assert set(sources) == {"checkout", "kafka"}
    checkout = sources["checkout"]
    assert [m.rel.rsplit("/", 1)[1] for m in checkout.members] == ["0.log.20260708-230000.gz", "0.log"]
    assert all(m.rel.startswith("var/log/pods/") for m in checkout.members)  # not the containers symlink
    assert checkout.fields == {
        "namespace": "shop",
        "pod": "checkout-7d9f8b6c5d-x2kqz",
        "container": "checkout",
    }


def test_containers_symlink_alone_names_the_pod(tmp_path: Path) -> None:
    """Without /var/log/pods under the root (root=/var/log/containers), the link's name says it all."""
    target = tmp_path / "elsewhere" / "0.log"
    target.parent.mkdir()
    target.write_text("2026-07-08T23:05:28Z stdout F hello\n")
    links = tmp_path / "containers"
    links.mkdir()
    (links / f"web-6c8f9d7b5-x7k2p_prod_nginx-{'f' * 64}.log").symlink_to(target)
    (links / f"gone-6c8f9d7b5-x7k2p_prod_x-{'e' * 64}.log").symlink_to(tmp_path / "deleted.log")
    sources = discover(LogConfig(root=links))
    assert [(s.service, dict(s.fields)) for s in sources] == [
        ("web", {"namespace": "prod", "pod": "web-6c8f9d7b5-x7k2p", "container": "nginx"})
    ]


def test_rotations_group_oldest_first(tmp_path: Path) -> None:
    names = ["api.log", "api.log.1", "api.log.2.gz", "api.log.10.gz", "db.log-20260707.gz", "db.log-20260708"]
    for name in [*names, "db.log", "notes.md", "core.dump"]:
        path = tmp_path / name
        path.write_bytes(gzip.compress(b"x\n") if name.endswith(".gz") else b"x\n")
    got = {s.service: [m.rel for m in s.members] for s in discover(LogConfig(root=tmp_path))}
    assert got == {
        "api": ["api.log.10.gz", "api.log.2.gz", "api.log.1", "api.log"],
        "db": ["db.log-20260707.gz", "db.log-20260708", "db.log"],
    }


@pytest.mark.parametrize(
    ("rel", "service"),
    [
        ("order-service.log", "order-service"),  # file stem
        ("order-service/app.log", "order-service"),  # generic stem: the parent directory
        ("nginx/access.log", "nginx"),
        ("cart/cart-api.json", "cart-api"),
        ("0.log", "0"),  # nothing better at the root
    ],
)
def test_plain_tree_service_from_path(tmp_path: Path, rel: str, service: str) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    assert [s.service for s in discover(LogConfig(root=tmp_path))] == [service]
