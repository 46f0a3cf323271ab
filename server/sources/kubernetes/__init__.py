"""The cluster source: Kubernetes objects, events, rollouts and pod logs, read from a
`kubectl cluster-info dump` tree or `kubectl get -o json` files (dump.py) or from a live API server
with get / list / log verbs only (live.py). Both fill one ClusterState (state.py); what the tools
read of it is in summary.py, events.py and rollouts.py (README.md)."""
