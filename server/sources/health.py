"""`evigate sources`: every configured source with its state, checked concurrently."""

from __future__ import annotations

import asyncio

from .alertmanager import Alertmanager
from .config import SourcesConfig
from .http import SourceHealth
from .prometheus import Prometheus


async def check_sources(config: SourcesConfig) -> list[SourceHealth]:
    """One SourceHealth per configured source, in a fixed order (prometheus, alertmanager)."""
    clients: list[Prometheus | Alertmanager] = []
    if config.prometheus is not None:
        clients.append(Prometheus(config.prometheus))
    if config.alertmanager is not None:
        clients.append(Alertmanager(config.alertmanager))
    try:
        return list(await asyncio.gather(*(c.health() for c in clients)))
    finally:
        for c in clients:
            await c.aclose()
