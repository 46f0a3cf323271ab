"""What the cluster tells the service catalog: its workloads, as services seen by "kubernetes"."""

from __future__ import annotations

from evigate.server.sources.kubernetes.state import Cluster
from evigate.server.sources.services import Sighting, SightingReader, Sightings

SOURCE = "kubernetes"


def cluster_sightings(cluster: Cluster) -> SightingReader:
    """A sighting reader for ServiceCatalog.add_reader: the cluster's workloads by name."""

    async def read() -> Sightings:
        state = await cluster.state()
        names = sorted({name for _kind, _namespace, name in state.workloads()})
        return Sightings(services=tuple(Sighting(name, SOURCE) for name in names))

    return read
