"""The service catalog the service runs with (docs/design.md §6.9): the file backend's own (alerts,
logs, knowledge, the data's service-aliases.json), with the live sources' names when they are
configured (their alerts, Prometheus's service / job / app label values) and the configured aliases;
built once at start and refreshed in the background."""

from __future__ import annotations

from pathlib import Path

from evigate.server.config import ConfigError
from evigate.server.sources.live_backend import LiveAlertsBackend
from evigate.server.sources.services import (
    ServiceCatalog,
    alert_sightings,
    load_aliases,
    prometheus_sightings,
)
from evigate.server.tools.backend import ToolBackend


async def open_service_catalog(
    tools: ToolBackend, aliases_file: Path | None, refresh_s: float
) -> ServiceCatalog | None:
    """The running catalog of `tools` (None when its backend keeps none); stop it with `stop()`."""
    files = tools.files if isinstance(tools, LiveAlertsBackend) else tools
    services = getattr(files, "services", None)
    if not isinstance(services, ServiceCatalog):
        return None
    if isinstance(tools, LiveAlertsBackend):
        services.add_reader(lambda: alert_sightings(tools))
        if tools.prometheus is not None:
            prometheus = tools.prometheus
            labels = [m.label for m in tools.catalog.service_matches if m.op == "="]
            services.add_reader(lambda: prometheus_sightings(prometheus.label_values, labels))
    try:
        services.add_aliases(load_aliases(aliases_file))
    except ValueError as error:
        raise ConfigError(f"service_aliases_file: {error}") from None
    await services.refresh()
    services.start(refresh_s)
    return services
