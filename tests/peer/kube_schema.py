"""Kubernetes objects checked against the API's OpenAPI (v2) definitions: required fields, types,
formats and no field the API does not have. The definitions are a subset of the Kubernetes
swagger.json (tests/peer/kubernetes-openapi.json says which release and where it came from)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parent / "kubernetes-openapi.json"
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_DEF = "io.k8s"


class Schema:
    def __init__(self, path: Path = SPEC) -> None:
        self.definitions: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["definitions"]
        self.by_kind: dict[tuple[str, str], str] = {}
        for name, definition in self.definitions.items():
            for gvk in definition.get("x-kubernetes-group-version-kind", []):
                api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                self.by_kind[(api, gvk["kind"])] = name

    def definition_of(self, api_version: str, kind: str) -> str:
        return self.by_kind[(api_version, kind)]

    def errors(self, value: Any, definition: str, where: str = "$") -> list[str]:
        """What in `value` does not fit `definition` (empty: it fits)."""
        return self._check(value, {"$ref": f"#/definitions/{definition}"}, where)

    def _check(self, value: Any, schema: dict[str, Any], where: str) -> list[str]:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            schema = self.definitions[name]
            if name.endswith("resource.Quantity"):
                return (
                    []
                    if isinstance(value, str) and _QUANTITY.match(value)
                    else [f"{where}: not a quantity: {value!r}"]
                )
        if value is None:  # the API prints unset times and pointers as null
            return []
        kind = schema.get("type")
        fmt = schema.get("format")
        if fmt == "int-or-string":
            ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
            return [] if ok else [f"{where}: not an int or a string: {value!r}"]
        if kind == "string":
            if not isinstance(value, str):
                return [f"{where}: not a string: {value!r}"]
            if fmt == "date-time" and not _DATE_TIME.match(value):
                return [f"{where}: not an RFC 3339 time: {value!r}"]
            if "enum" in schema and value not in schema["enum"]:
                return [f"{where}: {value!r} not one of {schema['enum']}"]
            return []
        if kind == "integer":
            ok = isinstance(value, int) and not isinstance(value, bool)
            return [] if ok else [f"{where}: not an integer: {value!r}"]
        if kind == "number":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            return [] if ok else [f"{where}: not a number: {value!r}"]
        if kind == "boolean":
            return [] if isinstance(value, bool) else [f"{where}: not a boolean: {value!r}"]
        if kind == "array":
            if not isinstance(value, list):
                return [f"{where}: not an array"]
            return [
                e for i, item in enumerate(value) for e in self._check(item, schema["items"], f"{where}[{i}]")
            ]
        if kind == "object" or "properties" in schema:
            return self._object(value, schema, where)
        return []  # an untyped definition (RawExtension, JSON): anything

    def _object(self, value: Any, schema: dict[str, Any], where: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        errors = [f"{where}: missing required {r!r}" for r in schema.get("required", []) if r not in value]
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if properties is not None and key in properties:
                errors += self._check(item, properties[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                errors += self._check(item, extra, f"{where}.{key}")
            elif properties is not None:
                errors.append(f"{where}: no field {key!r} in the API")
        return errors
