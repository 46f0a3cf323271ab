"""The last lines a pod's containers wrote, for a pod with problems: what its crash said."""

from __future__ import annotations

from evigate.server.sources.ports import ClusterSource

TAIL_LINES = 3
LINE_CHARS = 240


def last_lines(text: str, count: int = TAIL_LINES) -> list[str]:
    """The last non-empty lines, without kubectl's START / END markers, each on one line."""
    lines = [
        " ".join(line.split())[:LINE_CHARS]
        for line in text.replace("\r", "\n").splitlines()
        if line.strip() and not line.startswith("==== ")
    ]
    return lines[-count:]


async def tail(cluster: ClusterSource, namespace: str, pod: str, restarted: bool) -> list[str]:
    """The pod's last lines (the previous container's after a restart); none when unreadable."""
    try:
        text = await cluster.pod_log(namespace, pod, None, previous=restarted)
    except Exception:
        return []
    return last_lines(text)
