"""The service catalog the service runs with (docs/design.md §6.9): the one its sources fill (the
files' alerts, logs and knowledge, the data's service-aliases.json, and the live sources' alerts and
label values when they are configured) with the configured aliases; built once at start and
refreshed in the background."""

from __future__ import annotations

from pathlib import Path

from evigate.server.settings import ConfigError
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.services import ServiceCatalog, load_aliases
from evigate.server.sources.source_set import SourceSet
from evigate.server.understanding.semantic_names import NameVectors


async def open_service_catalog(
    sources: SourceSet, aliases_file: Path | None, refresh_s: float, embedder: Embedder | None = None
) -> ServiceCatalog:
    """The running catalog of `sources`; stop it with `stop()`. `embedder`: what resolves a service
    named in plain words by meaning when no name matched (None: names alone)."""
    services = sources.services
    if embedder is not None:
        services.by_meaning = NameVectors(embedder)
    try:
        services.add_aliases(load_aliases(aliases_file))
    except ValueError as error:
        raise ConfigError(f"service_aliases_file: {error}") from None
    await services.refresh()
    services.start(refresh_s)
    return services
