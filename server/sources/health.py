"""`evigate sources`: every configured source with its state, checked concurrently."""

from __future__ import annotations

import asyncio

from .http import SourceHealth
from .kinds import build_sources
from .sources_config import SourcesConfig


async def check_sources(config: SourcesConfig) -> list[SourceHealth]:
    """One SourceHealth per configured source, in the configuration's order."""
    sources = list(build_sources(config).values())
    try:
        return list(await asyncio.gather(*(s.health() for s in sources)))
    finally:
        for s in sources:
            await s.aclose()
