"""Seed-shaped JSON → proto message, strictly (the parsing rules of the package docstring)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .descriptors import (
    _FLOATS,
    _INT_RANGES,
    _MESSAGE,
    _SCALAR,
    CodecError,
    KeyStyle,
    M,
    _descriptor,
    _enum_number,
    _enum_type,
    _fields_by_key,
    _is_map,
    _join,
    _kind,
    _map_fields,
    _special,
)


def from_seed(message_class: type[M], data: Any, *, key_style: KeyStyle = "snake") -> M:
    """Parse seed-shaped JSON into ``message_class``; raises CodecError naming the field path."""
    message = message_class()
    _fill(message, data, "", key_style == "camel")
    return message


def _fill(message: Message, data: Any, path: str, camel: bool) -> None:
    desc = _descriptor(message)
    special = _special(desc)
    if special == 1:
        if not isinstance(data, str):
            raise CodecError(path, f"expected an RFC 3339 string, got {_kind(data)}")
        try:
            message.FromJsonString(data)  # type: ignore[attr-defined]
        except ValueError as exc:
            raise CodecError(path, f"invalid {desc.name}: {exc}") from None
        return
    if special == 2:
        _fill_json_value(message, data, path)
        return
    if not isinstance(data, Mapping):
        raise CodecError(path, f"expected an object ({desc.name}), got {_kind(data)}")
    message.SetInParent()
    keys = _fields_by_key(desc, camel)
    seen: dict[str, str] = {}
    oneofs_set: dict[str, str] = {}
    for key, value in data.items():
        plan = keys.get(key) if isinstance(key, str) else None
        if plan is None:
            raise CodecError(_join(path, str(key)), f"unknown field of {desc.name}")
        if plan.name in seen:
            raise CodecError(_join(path, key), f"field given twice (also as {seen[plan.name]!r})")
        seen[plan.name] = key
        if value is None:
            continue
        field_path = f"{path}.{key}" if path else key
        oneof = plan.oneof
        if oneof is not None:
            if oneof in oneofs_set:
                raise CodecError(field_path, f"oneof {oneof!r} already set by {oneofs_set[oneof]!r}")
            oneofs_set[oneof] = key
        shape = plan.shape
        if shape == _SCALAR:
            setattr(message, plan.name, _scalar(plan.field, value, field_path))
        elif shape == _MESSAGE:
            _fill(getattr(message, plan.name), value, field_path, camel)
        else:
            _fill_field(message, plan.field, value, field_path, camel)


def _fill_field(message: Message, field: FieldDescriptor, value: Any, path: str, camel: bool) -> None:
    target = getattr(message, field.name)
    if _is_map(field):
        if not isinstance(value, Mapping):
            raise CodecError(path, f"expected an object (map), got {_kind(value)}")
        key_field, value_field = _map_fields(field)
        for k, v in value.items():
            item_path = f"{path}[{json.dumps(k, ensure_ascii=False)}]"
            map_key = _map_key(key_field, k, item_path)
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                _fill(target[map_key], v, item_path, camel)
            else:
                target[map_key] = _scalar(value_field, v, item_path)
    elif field.is_repeated:
        if not isinstance(value, list):
            raise CodecError(path, f"expected an array, got {_kind(value)}")
        for i, item in enumerate(value):
            item_path = f"{path}[{i}]"
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                _fill(target.add(), item, item_path, camel)
            else:
                target.append(_scalar(field, item, item_path))
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        _fill(target, value, path, camel)
    else:
        setattr(message, field.name, _scalar(field, value, path))


def _map_key(field: FieldDescriptor, key: Any, path: str) -> Any:
    if not isinstance(key, str):
        raise CodecError(path, "map keys must be strings")
    if field.type in _INT_RANGES:
        try:
            return _scalar(field, int(key), path)
        except ValueError:
            raise CodecError(path, f"map key {key!r} is not an integer") from None
    if field.type == FieldDescriptor.TYPE_BOOL:
        if key not in ("true", "false"):
            raise CodecError(path, f"map key {key!r} is not a boolean")
        return key == "true"
    return key


def _scalar(field: FieldDescriptor, value: Any, path: str) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        if not isinstance(value, str):
            raise CodecError(path, f"expected a string, got {_kind(value)}")
        return value
    if kind == FieldDescriptor.TYPE_ENUM:
        return _enum_number(_enum_type(field), value, path)
    if kind == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            raise CodecError(path, f"expected a boolean, got {_kind(value)}")
        return value
    if kind in _INT_RANGES:
        if not isinstance(value, int) or isinstance(value, bool):
            raise CodecError(path, f"expected an integer, got {_kind(value)}")
        low, high = _INT_RANGES[kind]
        if not low <= value <= high:
            raise CodecError(path, f"integer {value} out of range [{low}, {high}]")
        return value
    if kind in _FLOATS:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise CodecError(path, f"expected a number, got {_kind(value)}")
        return float(value)
    if kind == FieldDescriptor.TYPE_BYTES:
        if not isinstance(value, str):
            raise CodecError(path, f"expected a base64 string, got {_kind(value)}")
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise CodecError(path, "invalid base64") from None
    raise CodecError(path, f"unsupported field type {kind}")  # pragma: no cover - groups only


def _fill_json_value(message: Message, data: Any, path: str) -> None:
    name = _descriptor(message).full_name
    if name == "google.protobuf.Struct":
        if not isinstance(data, Mapping):
            raise CodecError(path, f"expected an object (Struct), got {_kind(data)}")
        message.SetInParent()
        for k, v in data.items():
            if not isinstance(k, str):
                raise CodecError(path, "Struct keys must be strings")
            _fill_json_value(message.fields[k], v, _join(path, k))  # type: ignore[attr-defined]
    elif name == "google.protobuf.ListValue":
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array (ListValue), got {_kind(data)}")
        message.SetInParent()
        for i, v in enumerate(data):
            _fill_json_value(message.values.add(), v, f"{path}[{i}]")  # type: ignore[attr-defined]
    elif data is None:
        message.null_value = 0  # type: ignore[attr-defined]
    elif isinstance(data, bool):
        message.bool_value = data  # type: ignore[attr-defined]
    elif isinstance(data, int | float):
        if not math.isfinite(data):
            raise CodecError(path, "numbers must be finite")
        message.number_value = float(data)  # type: ignore[attr-defined]
    elif isinstance(data, str):
        message.string_value = data  # type: ignore[attr-defined]
    elif isinstance(data, Mapping):
        _fill_json_value(message.struct_value, data, path)  # type: ignore[attr-defined]
    elif isinstance(data, list):
        _fill_json_value(message.list_value, data, path)  # type: ignore[attr-defined]
    else:
        raise CodecError(path, f"not a JSON value: {_kind(data)}")


# ---------------------------------------------------------------------------------------------
# descriptor helpers
