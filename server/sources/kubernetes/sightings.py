"""What the cluster tells the service catalog: its workloads, as services seen by "kubernetes"."""

from __future__ import annotations

from typing import Protocol

from evigate.server.sources.kubernetes.state import ClusterState
from evigate.server.sources.services import Sighting, Sightings

SOURCE = "kubernetes"


class _Stated(Protocol):
    async def state(self) -> ClusterState: ...


async def workload_sightings(cluster: _Stated) -> Sightings:
    """The cluster's workloads by name."""
    state = await cluster.state()
    names = sorted({name for _kind, _namespace, name in state.workloads()})
    return Sightings(services=tuple(Sighting(name, SOURCE) for name in names))
