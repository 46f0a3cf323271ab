"""The generated dump trees are what kubectl writes and what the API serves: typed Lists whose
objects fit the Kubernetes OpenAPI, and `kubectl get -o json` Lists of full objects."""

from __future__ import annotations

import json
from pathlib import Path

from tests.peer.kube_schema import Schema
from tests.sources.kubernetes.clusters import DUMP_FILES


def test_every_file_of_the_generated_dump_fits_the_kubernetes_api(dump: Path) -> None:
    schema = Schema()
    errors: list[str] = []
    for path in sorted(dump.rglob("*.json")):
        listed = json.loads(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(dump))
        if listed["kind"] == "List":
            for i, item in enumerate(listed["items"]):
                assert list(item) == sorted(item), where
                errors += schema.errors(
                    item, schema.definition_of(item["apiVersion"], item["kind"]), f"{where}[{i}]"
                )
        else:
            expected = "NodeList" if path.name == "nodes.json" else DUMP_FILES[path.stem][0]
            assert listed["kind"] == expected and "resourceVersion" in listed["metadata"], where
            assert all("kind" not in item for item in listed["items"]), where
            errors += schema.errors(listed, schema.definition_of(listed["apiVersion"], listed["kind"]), where)
    assert not errors, "\n".join(errors)


def test_every_pod_of_the_dump_has_its_logs_file(dump: Path) -> None:
    for pods in dump.glob("*/pods.json"):
        for pod in json.loads(pods.read_text(encoding="utf-8"))["items"]:
            logs = pods.parent / pod["metadata"]["name"] / "logs.txt"
            assert logs.read_text(encoding="utf-8").startswith("==== START logs for container"), logs
