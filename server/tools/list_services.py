"""list_services: the service catalog (docs/design.md §6.9): every service the sources know, or the
service a name means (exact, alias or partial match); a name no source knows is no evidence that
lists the known services, closest first (at most KNOWN_LISTED)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import MatchLevel, ToolName
from evigate.server.queries.types import JSON, ToolError
from evigate.server.sources.services import KNOWN_LISTED, CatalogView, ServiceCatalog
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 50, 500


def service_text(item: Mapping[str, Any]) -> str:
    """payment-service, sources=[alert, log], aliases=[支付服务], matched=alias"""
    return ", ".join([refs.text(item.get("service", "")), *refs.other_pairs(item, ("service",))])


def catalog_of(backend: ToolBackend) -> ServiceCatalog:
    """The catalog the backend's sources fill (server.sources.source_set.SourceSet.services)."""
    catalog = getattr(backend, "services", None)
    if not isinstance(catalog, ServiceCatalog):
        raise ToolError("this tool backend keeps no service catalog")
    return catalog


def _item(view: CatalogView, name: str, how: str | None = None) -> JSON:
    item: JSON = {"service": name, "sources": list(view.services.get(name, ("config",)))}
    aliases = [alias for alias, known in view.aliases.items() if known == name]
    if aliases:
        item["aliases"] = aliases
    if how is not None:
        item["matched"] = how
    return item


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    view = await catalog_of(backend).ensure()
    name = args.get("name")
    if name:
        match = view.match(name)
        if match is None:
            closest = view.closest(name, KNOWN_LISTED)
            return Answer(
                [], 0, notes={"known_services": str(len(view.names)), "closest": ", ".join(closest)}
            )
        return Answer([_item(view, match.name, match.how)], 1, MatchLevel.L0)
    limit = args.get("limit", DEFAULT_LIMIT)
    items = [_item(view, known) for known in view.names]
    return Answer(items[:limit], len(items), MatchLevel.L0)


TOOL = Tool(
    name=ToolName.LIST_SERVICES,
    description=(
        "The services the sources know (alert labels, log services, knowledge front matter, "
        "Prometheus labels), with their aliases. With `name`: the service that name means (case, "
        "separators and partial names tolerated), or no evidence naming the closest known services. "
        "Use it before querying a service you are not sure of; never guess a name."
    ),
    properties={
        "name": {**tool_args.STRING, "description": "a service name or alias as the user wrote it"},
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="services",
    item_text=service_text,
    no_evidence_message="没有任何数据源知道这个服务",
    query_keys=("name",),
)
