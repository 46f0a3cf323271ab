"""The service catalog: names from the sources, matching (exact with any case or separators, alias,
partial, unknown with the closest known names), the list_services tool, refreshes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evigate.server.sources.services import (
    KNOWN_LISTED,
    CatalogView,
    ServiceCatalog,
    Sighting,
    Sightings,
    load_aliases,
)
from evigate.server.tools import build_backend
from tests.agents.offline.demo_catalog import _NoCases
from tests.worlds.judge import WORLDS

VIEW = CatalogView(
    {
        name: ("log",)
        for name in ("orders-consumer", "session-redis", "billing-worker", "catalog-api", "gateway")
    },
    {"订单消费者": "orders-consumer", "billing team": "billing-worker"},
)


@pytest.mark.parametrize(
    "name,canonical,how",
    [
        ("orders-consumer", "orders-consumer", "exact"),
        ("Orders_Consumer", "orders-consumer", "exact"),
        ("orders consumer", "orders-consumer", "exact"),
        ("订单消费者", "orders-consumer", "alias"),
        ("Billing Team", "billing-worker", "alias"),
        ("redis", "session-redis", "partial"),
        ("catalog", "catalog-api", "partial"),
    ],
)
def test_a_name_matches_its_service(name: str, canonical: str, how: str) -> None:
    match = VIEW.match(name)
    assert match is not None and (match.name, match.how) == (canonical, how)


@pytest.mark.parametrize("name", ["billing-service", "mail-relay", "api", "worker"])
def test_a_name_no_source_knows_matches_nothing(name: str) -> None:
    assert VIEW.match(name) is None


def test_an_unknown_name_lists_the_closest_known_names() -> None:
    assert VIEW.closest("billing-service")[0] == "billing-worker"
    assert VIEW.closest("order-consumer")[0] == "orders-consumer"


def test_an_unknown_name_lists_every_known_service_closest_first_up_to_ten() -> None:
    # "auth" is like none of them: still every known service is listed, so the user sees what exists
    assert sorted(VIEW.closest("auth", KNOWN_LISTED)) == sorted(VIEW.services)
    many = CatalogView({f"svc-{i:02d}": ("log",) for i in range(30)} | {"auth-gateway": ("log",)})
    listed = many.closest("auth", KNOWN_LISTED)
    assert len(listed) == KNOWN_LISTED == 10 and listed[0] == "auth-gateway"


def test_services_are_found_in_a_question_in_order() -> None:
    found = VIEW.find_in("订单消费者 and the Catalog API: any redis alerts?")
    assert [(m.name, m.how) for m in found] == [
        ("orders-consumer", "alias"),
        ("catalog-api", "exact"),
        ("session-redis", "partial"),
    ]
    # A hyphenated name is taken whole: billing-service is not a partial billing-worker.
    assert VIEW.find_in("does billing-service log errors?") == []


async def test_the_catalog_is_built_from_the_world_and_its_aliases() -> None:
    backend = build_backend(WORLDS / "tidewater", _NoCases())
    view = await backend.services.refresh()
    assert {"invoice-consumer", "mail-relay", "session-redis", "search-indexer"} <= set(view.services)
    assert set(view.services["pricing-engine"]) == {"alert", "log", "knowledge"}
    assert view.aliases["定价引擎"] == "pricing-engine"
    assert "RabbitMQQueueBacklogHigh" in view.alert_names
    assert "EMFILE" in view.knowledge_keys


async def test_a_refresh_sees_a_new_service_and_a_failing_source_keeps_the_others(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(WORLDS / "tidewater", world, ignore=shutil.ignore_patterns("questions.json"))
    backend = build_backend(world, _NoCases())
    catalog: ServiceCatalog = backend.services

    async def broken() -> Sightings:
        raise RuntimeError("source down")

    catalog.add_reader(broken)
    first = await catalog.refresh()
    assert "ledger-sync" not in first.services and catalog.failures == ("source down",)
    line = {"timestamp": "2026-11-03T09:59:00Z", "level": "INFO", "service": "ledger-sync", "message": "ok"}
    (world / "logs" / "ledger-sync.ndjson").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert "ledger-sync" in (await catalog.refresh()).services
    assert "invoice-consumer" in catalog.view().services


def test_aliases_file_shape(tmp_path: Path) -> None:
    path = tmp_path / "aliases.json"
    path.write_text(json.dumps({"billing-worker": ["计费服务", "billing team"], "gateway": "网关"}), "utf-8")
    assert load_aliases(path) == {
        "计费服务": "billing-worker",
        "billing team": "billing-worker",
        "网关": "gateway",
    }
    path.write_text(json.dumps({"billing-worker": [1]}), "utf-8")
    with pytest.raises(ValueError, match="list of strings"):
        load_aliases(path)
    assert load_aliases(tmp_path / "missing.json") == {}


async def test_list_services_resolves_a_name_or_names_the_closest() -> None:
    from evigate.server.deadline import Deadline
    from evigate.server.tools import SessionToolBox
    from tests.agents.offline.test_offline_demo_world import MemoryRecorder

    backend = build_backend(WORLDS / "tidewater", _NoCases())
    tools = SessionToolBox(backend, MemoryRecorder(), "s")
    found = await tools.call("list_services", {"name": "定价引擎"}, Deadline.none())
    (ref,) = found.retrieval_details["evidence_refs"]
    assert ref["raw_path"] == "$.services[0]" and ref["text"].startswith("pricing-engine, ")
    missing = await tools.call("list_services", {"name": "pricing-service"}, Deadline.none())
    (ref,) = missing.retrieval_details["evidence_refs"]
    assert ref["raw_path"] == "$.no_evidence"
    assert "name=pricing-service" in ref["text"] and "closest=pricing-engine" in ref["text"]
    listed = await tools.call("list_services", {}, Deadline.none())
    assert len(listed.retrieval_details["evidence_refs"]) == len(set(_known_names(backend)))


def _known_names(backend: object) -> list[str]:
    return list(backend.services.view().services)  # type: ignore[attr-defined]


async def test_config_sightings_join_the_sources() -> None:
    async def extra() -> Sightings:
        return Sightings((Sighting("ledger-sync", "prometheus"),), ("LedgerLagHigh",))

    catalog = ServiceCatalog([extra], {"账本同步": "ledger-sync", "团队": "team-only"})
    view = await catalog.refresh()
    assert view.services == {"ledger-sync": ("prometheus",), "team-only": ("config",)}
    assert view.alert_names == ("LedgerLagHigh",)


FUZZY_VIEW = CatalogView(
    {name: ("log",) for name in ("ledger-sync", "order-router", "payments-db", "gateway")}
)


@pytest.mark.parametrize(
    ("question", "service", "how"),
    [
        ("Any problems with sync ledger?", "ledger-sync", "partial"),
        ("is ledgr-sync healthy", "ledger-sync", "fuzzy"),
        ("OrderRoutr errors today", "order-router", "fuzzy"),
        ("What is wrong with the order router?", "order-router", "exact"),
        ("OrderRouter errors", "order-router", "exact"),
        ("payment-db refuses connections", "payments-db", "fuzzy"),
    ],
)
def test_a_service_is_found_in_other_case_word_order_or_one_letter_off(
    question: str, service: str, how: str
) -> None:
    found = FUZZY_VIEW.find_in(question)
    assert [(m.name, m.how) for m in found] == [(service, how)]


def test_a_distant_name_is_not_taken_for_a_service() -> None:
    assert FUZZY_VIEW.find_in("is the gtwy up") == []  # three letters off
    assert FUZZY_VIEW.find_in("is payments-api down?") == []  # a whole word apart


async def test_a_team_prefixed_job_is_the_same_service_and_its_alias() -> None:
    async def logs() -> Sightings:
        return Sightings((Sighting("fare-search", "log"),))

    async def alerts() -> Sightings:
        return Sightings((Sighting("pricing/fare-search", "alert"),))

    view = await ServiceCatalog([logs, alerts]).refresh()
    assert view.names == ("fare-search",) and view.services["fare-search"] == ("log", "alert")
    assert [(m.name, m.mention) for m in view.find_in("pricing/fare-search 的延迟怎么样？")] == [
        ("fare-search", "pricing/fare-search")
    ]
    assert [m.name for m in view.find_in("What is the fare cache hit ratio right now?")] == ["fare-search"]


async def test_namespaces_come_from_the_pod_log_layout_and_the_alerts_labels() -> None:
    backend = build_backend(WORLDS / "osprey", _NoCases())
    view = await backend.services.refresh()
    assert view.namespaces["media"] == ("thumbnailer", "transcoder")
    assert view.namespaces["accounts"] == ("auth-broker", "profile-store")
    assert set(view.namespaces) == {"media", "accounts", "billing", "frontdoor"}


async def test_a_namespace_from_an_alert_label_alone() -> None:
    async def alerts() -> Sightings:
        return Sightings((Sighting("risk-scorer", "alert", "payments"), Sighting("ledger", "log")))

    view = await ServiceCatalog([alerts]).refresh()
    assert view.namespaces == {"payments": ("risk-scorer",)}
