"""Proto message → seed-shaped JSON (the emission policy of the package docstring)."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from .descriptors import (
    _JSON_TYPES,
    _TIME_TYPES,
    CodecError,
    KeyStyle,
    _descriptor,
    _enum_type,
    _fields,
    _in_real_oneof,
    _is_map,
    _join,
    _map_fields,
    _message_type,
    enum_word,
)


def to_seed(message: Message, *, key_style: KeyStyle = "snake") -> dict[str, Any]:
    """The seed-shaped JSON dict of ``message`` (see the emission policy above)."""
    result = _emit_message(message, key_style == "camel", "")
    if not isinstance(result, dict):
        raise TypeError(f"{_descriptor(message).full_name} does not map to a JSON object")
    return result


def _emit_message(message: Message, camel: bool, path: str) -> Any:
    desc = _descriptor(message)
    if desc.full_name in _TIME_TYPES:
        return message.ToJsonString()  # type: ignore[attr-defined]
    if desc.full_name in _JSON_TYPES:
        return _emit_json_value(message)
    out: dict[str, Any] = {}
    for field in _fields(desc):
        key = field.json_name if camel else field.name
        field_path = _join(path, key)
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = _map_fields(field)[1]
            out[key] = {
                _map_key_text(k): _emit_single(value_field, v, camel, f"{field_path}[{json.dumps(k)}]")
                for k, v in value.items()
            }
        elif field.is_repeated:
            out[key] = [_emit_single(field, v, camel, f"{field_path}[{i}]") for i, v in enumerate(value)]
        elif field.has_presence and not message.HasField(field.name):
            # Unset: oneof members and messages are omitted, optional scalars and Value are null.
            if not _in_real_oneof(field) and (
                field.type != FieldDescriptor.TYPE_MESSAGE
                or _message_type(field).full_name == "google.protobuf.Value"
            ):
                out[key] = None
        else:
            out[key] = _emit_single(field, value, camel, field_path)
    return out


def _map_key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _emit_single(field: FieldDescriptor, value: Any, camel: bool, path: str) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _emit_message(value, camel, path)
    if field.type == FieldDescriptor.TYPE_ENUM:
        word = enum_word(_enum_type(field), value)
        if word is None and value != 0:
            raise CodecError(path, f"{_enum_type(field).name} value {value} has no name")
        return word
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode("ascii")
    return value


def _whole(value: float) -> bool:
    """Whole numbers read as ints (ids, counts), except -0.0, which an int would turn into 0."""
    finite = math.isfinite(value) and value.is_integer() and abs(value) < 2**53
    return finite and not (value == 0 and math.copysign(1.0, value) < 0)


def _emit_json_value(message: Message) -> Any:
    name = _descriptor(message).full_name
    if name == "google.protobuf.Struct":
        return {k: _emit_json_value(v) for k, v in message.fields.items()}  # type: ignore[attr-defined]
    if name == "google.protobuf.ListValue":
        return [_emit_json_value(v) for v in message.values]  # type: ignore[attr-defined]
    kind = message.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind in ("struct_value", "list_value"):
        return _emit_json_value(getattr(message, kind))
    value = getattr(message, kind)
    if kind == "number_value" and _whole(value):
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------
# seed → proto


def check_enums(message: Message) -> None:
    """Raises the CodecError ``to_seed`` would raise for an enum number with no name, without
    building the dict: only the fields whose type holds an enum are walked (an EvidenceBinding,
    which holds none, is never visited), so a large request is checked at no cost in memory."""
    _check_enums(message, "")


def _check_enums(message: Message, path: str) -> None:
    for field in _enum_fields(_descriptor(message)):
        field_path = _join(path, field.name)
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = _map_fields(field)[1]
            for k, v in value.items():
                _check_single(value_field, v, f"{field_path}[{json.dumps(k)}]")
        elif field.is_repeated:
            for i, v in enumerate(value):
                _check_single(field, v, f"{field_path}[{i}]")
        elif field.type != FieldDescriptor.TYPE_MESSAGE or message.HasField(field.name):
            _check_single(field, value, field_path)


def _check_single(field: FieldDescriptor, value: Any, path: str) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        _check_enums(value, path)
    elif enum_word(_enum_type(field), value) is None and value != 0:
        raise CodecError(path, f"{_enum_type(field).name} value {value} has no name")


_ENUM_FIELDS: dict[str, tuple[FieldDescriptor, ...]] = {}


def _enum_fields(desc: Descriptor) -> tuple[FieldDescriptor, ...]:
    """The fields of `desc` that are enums or messages holding an enum somewhere below (maps by
    their value). Time and JSON types never fail in to_seed: they hold none."""
    known = _ENUM_FIELDS.get(desc.full_name)
    if known is not None:
        return known
    _ENUM_FIELDS[desc.full_name] = ()  # a recursive type is taken as holding none while it is walked
    found: list[FieldDescriptor] = []
    if desc.full_name not in _TIME_TYPES and desc.full_name not in _JSON_TYPES:
        for field in _fields(desc):
            target = _map_fields(field)[1] if _is_map(field) else field
            if target.type == FieldDescriptor.TYPE_ENUM or (
                target.type == FieldDescriptor.TYPE_MESSAGE and _enum_fields(_message_type(target))
            ):
                found.append(field)
    _ENUM_FIELDS[desc.full_name] = result = tuple(found)
    return result
