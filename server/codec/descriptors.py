"""The shared vocabulary of the codec: its error, enum words and the per-field plans read off the
message descriptors."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from evigate.rules.errors import EvigateError

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


class CodecError(EvigateError, ValueError):
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
