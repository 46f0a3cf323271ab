"""The bundled demo world's service catalog, as the App builds it from the fixture backend's data
(its alerts, logs, knowledge and service-aliases.json), for tests of the offline agents."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evigate.server.queries.types import CaseLike
from evigate.server.sources.services import CatalogView, ServiceCatalog, Sighting, Sightings
from evigate.server.tools import FixtureBackend, demo_data_dir


class _NoCases:
    async def list_cases(self, limit: int = 1000) -> Sequence[CaseLike]:
        return []


def demo_catalog() -> ServiceCatalog:
    return FixtureBackend(demo_data_dir(), _NoCases(), 0.5, 0.2).services


DEMO_CATALOG = demo_catalog()
DEMO_VIEW: CatalogView = asyncio.run(DEMO_CATALOG.refresh())

# Services the offline agents' table tests name beside the demo world's (the fake tool box's world).
EXTRA_SERVICES = ("api-gateway", "checkout-service")


def _with_extra() -> ServiceCatalog:
    demo = demo_catalog()

    async def sightings() -> Sightings:
        seen = await demo_backend().sightings()
        extra = tuple(Sighting(name, "log") for name in EXTRA_SERVICES)
        return Sightings(seen.services + extra, seen.alert_names, seen.knowledge_keys)

    return ServiceCatalog([sightings], demo.view().aliases)


def demo_backend() -> FixtureBackend:
    return FixtureBackend(demo_data_dir(), _NoCases(), 0.5, 0.2)


TEST_CATALOG = _with_extra()
TEST_VIEW: CatalogView = asyncio.run(TEST_CATALOG.refresh())
