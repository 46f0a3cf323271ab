"""The bundled demo world's service catalog, as the App builds it from the fixture backend's data
(its alerts, logs, knowledge and service-aliases.json), for tests of the offline agents."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evigate.server.queries.types import CaseLike
from evigate.server.sources.files.backend import files_source_set
from evigate.server.sources.services import CatalogView, ServiceCatalog, Sighting, Sightings
from evigate.server.tools import FilesSource, SourceSet, demo_data_dir


class _NoCases:
    async def list_cases(self, limit: int = 1000) -> Sequence[CaseLike]:
        return []


def demo_sources() -> SourceSet:
    return files_source_set(FilesSource(demo_data_dir(), _NoCases()))


def demo_catalog() -> ServiceCatalog:
    return demo_sources().services


DEMO_CATALOG = demo_catalog()
DEMO_VIEW: CatalogView = asyncio.run(DEMO_CATALOG.refresh())

# Services the offline agents' table tests name beside the demo world's (the fake tool box's world).
EXTRA_SERVICES = ("api-gateway", "checkout-service")


def _with_extra() -> ServiceCatalog:
    catalog = demo_catalog()

    async def sightings() -> Sightings:
        return Sightings(tuple(Sighting(name, "log") for name in EXTRA_SERVICES))

    catalog.add_reader(sightings)
    return catalog


TEST_CATALOG = _with_extra()
TEST_VIEW: CatalogView = asyncio.run(TEST_CATALOG.refresh())
