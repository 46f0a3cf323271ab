"""Seed-shaped JSON ⇄ evigate.v1 protobuf messages, driven by the message descriptors.

The database, the rules and the pipeline exchange plain JSON dicts in the shape of the source
documents ("seed shape"); the proto messages are the typed wire view of the same data. This module
is the one mapping between the two. It has no per-message code: every message of the contract,
present or future, goes through the same walk over its descriptor.

Enum words
    The value name minus the enum's prefix (the name of its zero value without ``UNSPECIFIED``),
    lowercased: ``CLAIM_TYPE_NEGATIVE_OBSERVATION`` → ``"negative_observation"``. Exceptions, as
    the documents spell them: VerdictLabel and SessionStatus are uppercase (``"PASS"``,
    ``"LOW_CONFID"``, ``"RUNNING"``), MatchLevel is ``"L0"``, ``"L1"``, ``"none"``. Words are
    case-sensitive; the ``_UNSPECIFIED`` value has no word (it reads and writes as JSON null).

Parsing (``from_seed``) is strict
    Unknown keys, wrong JSON types (a bool is not a number, a float is not an int), out-of-range
    integers, unknown enum words, two members of one oneof and malformed timestamps raise
    ``CodecError`` naming the field path, e.g. ``claims[0].evidence_bindings[1].raw_path``.
    JSON null is accepted for every field and means "unset": proto3 ``optional`` fields stay
    unset, message fields stay unset, other fields keep their proto default.

Emission policy (``to_seed``)
    - singular scalar fields: always emitted, defaults included (``""``, ``0``, ``false``);
    - enum fields: the word, or null for the zero (``_UNSPECIFIED``) value;
    - proto3 ``optional`` scalars: the value, or null when unset;
    - repeated fields and maps: always emitted (``[]`` / ``{}`` when empty);
    - message fields: emitted when set (an empty but set message emits all its fields), omitted
      when unset — except ``google.protobuf.Value`` fields, which emit null when unset;
    - oneof members: only the member that is set;
    - int64 as JSON numbers (never strings); Timestamp as an RFC 3339 string; Duration as
      ``"1.5s"``; Struct / Value / ListValue as plain JSON (integral numbers as ints).
    So ``from_seed(to_seed(m)) == m`` except that an explicit null Value reads back as unset.

Key style
    ``"snake"`` (default): the proto field names, as the documents use them. ``"camel"``: emits
    the proto JSON names (``sessionId``) and accepts both spellings — the feedback REST API of the
    source uses camelCase.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

__all__ = ["CodecError", "KeyStyle", "enum_word", "from_seed", "to_seed"]

KeyStyle = Literal["snake", "camel"]
M = TypeVar("M", bound=Message)

_UPPERCASE_ENUMS = frozenset({"evigate.v1.VerdictLabel", "evigate.v1.SessionStatus"})
_WORD_OVERRIDES: dict[str, dict[str, str]] = {"evigate.v1.MatchLevel": {"L0": "L0", "L1": "L1"}}

_INT_RANGES: dict[int, tuple[int, int]] = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_FLOATS = frozenset({FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT})
_TIME_TYPES = frozenset({"google.protobuf.Timestamp", "google.protobuf.Duration"})
_JSON_TYPES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})


class CodecError(ValueError):
    """Seed JSON that does not fit the message; ``path`` names the offending field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '<root>'}: {reason}")
        self.path = path
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# enum words


def _enum_prefix(enum: EnumDescriptor) -> str:
    zero = enum.values_by_number[0].name if 0 in enum.values_by_number else ""
    return zero.removesuffix("UNSPECIFIED") if zero.endswith("_UNSPECIFIED") else ""


def enum_word(enum: EnumDescriptor, number: int) -> str | None:
    """The seed word of an enum value; None for the zero value (or a number with no name)."""
    if number == 0 or number not in enum.values_by_number:
        return None
    short = enum.values_by_number[number].name.removeprefix(_enum_prefix(enum))
    override = _WORD_OVERRIDES.get(enum.full_name, {}).get(short)
    if override is not None:
        return override
    return short if enum.full_name in _UPPERCASE_ENUMS else short.lower()


@functools.cache
def _enum_numbers(enum: EnumDescriptor) -> dict[str, int]:
    words: dict[str, int] = {}
    for value in enum.values:
        word = enum_word(enum, value.number)
        if word is not None:
            words.setdefault(word, value.number)
    return words


def _enum_number(enum: EnumDescriptor, word: Any, path: str) -> int:
    if not isinstance(word, str):
        raise CodecError(path, f"expected an enum word (string) of {enum.name}, got {_kind(word)}")
    number = _enum_numbers(enum).get(word)
    if number is not None:
        return number
    allowed = ", ".join(repr(enum_word(enum, v.number)) for v in enum.values if v.number != 0)
    raise CodecError(path, f"unknown {enum.name} word {word!r}; expected one of {allowed}")


# ---------------------------------------------------------------------------------------------
# proto → seed


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


def from_seed(message_class: type[M], data: Any, *, key_style: KeyStyle = "snake") -> M:
    """Parse seed-shaped JSON into ``message_class``; raises CodecError naming the field path."""
    message = message_class()
    _fill(message, data, "", key_style == "camel")
    return message


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


# How _fill_field treats a field: decided once per field, not per value.
_MAP, _REPEATED_MESSAGE, _REPEATED_SCALAR, _MESSAGE, _SCALAR = range(5)


@dataclass(frozen=True, slots=True)
class _FieldPlan:
    field: FieldDescriptor
    name: str
    shape: int
    oneof: str | None  # the declared oneof it belongs to (not proto3 `optional`'s synthetic one)


@functools.cache
def _fields_by_key(desc: Descriptor, camel: bool) -> dict[str, _FieldPlan]:
    plans = {f.name: _FieldPlan(f, f.name, _shape(f), _real_oneof(f)) for f in _fields(desc)}
    if camel:
        plans.update({f.json_name: plans[f.name] for f in _fields(desc)})
    return plans


def _shape(field: FieldDescriptor) -> int:
    if _is_map(field):
        return _MAP
    if field.is_repeated:
        return _REPEATED_MESSAGE if field.type == FieldDescriptor.TYPE_MESSAGE else _REPEATED_SCALAR
    return _MESSAGE if field.type == FieldDescriptor.TYPE_MESSAGE else _SCALAR


def _real_oneof(field: FieldDescriptor) -> str | None:
    if not _in_real_oneof(field):
        return None
    return field.containing_oneof.name if field.containing_oneof else ""


@functools.cache
def _special(desc: Descriptor) -> int:
    """0: an ordinary message; 1: Timestamp / Duration; 2: Struct / Value / ListValue."""
    if desc.full_name in _TIME_TYPES:
        return 1
    return 2 if desc.full_name in _JSON_TYPES else 0


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


def _descriptor(message: Message) -> Descriptor:
    return cast(Descriptor, message.DESCRIPTOR)


def _fields(desc: Descriptor) -> list[FieldDescriptor]:
    return cast(list[FieldDescriptor], list(desc.fields))


def _message_type(field: FieldDescriptor) -> Descriptor:
    if field.message_type is None:  # pragma: no cover - guarded by field.type
        raise TypeError(f"{field.full_name} is not a message field")
    return field.message_type


def _enum_type(field: FieldDescriptor) -> EnumDescriptor:
    if field.enum_type is None:  # pragma: no cover - guarded by field.type
        raise TypeError(f"{field.full_name} is not an enum field")
    return field.enum_type


def _map_fields(field: FieldDescriptor) -> tuple[FieldDescriptor, FieldDescriptor]:
    entry = _message_type(field)
    return entry.fields_by_name["key"], entry.fields_by_name["value"]


def _is_map(field: FieldDescriptor) -> bool:
    return (
        field.is_repeated
        and field.type == FieldDescriptor.TYPE_MESSAGE
        and bool(_message_type(field).GetOptions().map_entry)
    )


def _in_real_oneof(field: FieldDescriptor) -> bool:
    """True for members of a declared oneof; proto3 `optional` uses a synthetic one-field oneof."""
    oneof = field.containing_oneof
    if oneof is None:
        return False
    return not (len(oneof.fields) == 1 and oneof.name == f"_{field.name}")
