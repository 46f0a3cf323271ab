"""Wire compatibility of the two Python runtimes for every message of the evigate.v1 package.

For each message type (enumerated from the descriptors, not listed by hand), hypothesis builds a
populated instance with the google protobuf runtime — every field kind: enums (any value, the zero
one included), proto3 optional scalars set to their default (presence must survive), oneofs,
repeated messages, maps, Timestamps, Struct / Value — serialises it, parses the bytes with the
betterproto2 class (``Message.parse(bytes)``), serialises that back (``bytes(msg)``), and requires
the google runtime to parse a message equal to the original.

The same instances also go through the seed-JSON codec (``to_seed`` → JSON text → ``from_seed``)
in both key styles, which must give the message back: the codec loses nothing but the difference
between an unset and an explicitly null ``google.protobuf.Value`` field (both are JSON null).

Known limits of betterproto2, each pinned by a test below that asserts the limit (so a fix shows up
as a failing test and the generators can be widened):
- it turns a Timestamp into a ``datetime``, which has microsecond resolution: nanoseconds below a
  microsecond are lost. Generated timestamps therefore carry whole microseconds;
- it treats a double of -0.0 as the default and does not write it, so -0.0 comes back as 0.0.
  Generated doubles therefore never are -0.0 (NaN is left out too: NaN != NaN).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evigate.bp.evigate.v1 as bp
import evigate.v1
from evigate.server.codec import KeyStyle, from_seed, to_seed

MAX_DEPTH = 3
MAX_ITEMS = 2
TS_MIN, TS_MAX = -62135596800, 253402300799  # 0001-01-01 .. 9999-12-31 (Timestamp's valid range)


def _package_messages() -> dict[str, Descriptor]:
    found: dict[str, Descriptor] = {}

    def walk(desc: Descriptor, prefix: str) -> None:
        if desc.GetOptions().map_entry:
            return
        found[prefix + desc.name] = desc
        for nested in desc.nested_types:
            walk(nested, prefix + desc.name)

    for info in pkgutil.iter_modules(evigate.v1.__path__):
        if not info.name.endswith("_pb2"):
            continue
        module = importlib.import_module(f"evigate.v1.{info.name}")
        file = module.DESCRIPTOR
        assert file.package == "evigate.v1"
        for desc in file.message_types_by_name.values():
            walk(desc, "")
    return found


MESSAGES = _package_messages()


def google_class(desc: Descriptor) -> Any:
    """The message class (typed Any: types-protobuf's stubs do not know a factory class's fields)."""
    return message_factory.GetMessageClass(desc)


def bp_class(name: str) -> Any:
    return getattr(bp, name)


# ---------------------------------------------------------------------------------------------
# strategies built from descriptors

_INTS: dict[int, tuple[int, int]] = {
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

json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _no_negative_zero(value: float) -> float:
    return 0.0 if value == 0 else value


def _enum_values(enum: EnumDescriptor) -> st.SearchStrategy[int]:
    return st.sampled_from([v.number for v in enum.values])


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        return _enum_values(field.enum_type)
    if kind in _INTS:
        low, high = _INTS[kind]
        # Boundaries and defaults matter most on the wire; mix them in.
        return st.sampled_from([0, low, high, -1 if low < 0 else 1]) | st.integers(low, high)
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return st.floats(allow_nan=False).map(_no_negative_zero)
    if kind == FieldDescriptor.TYPE_FLOAT:
        return st.floats(allow_nan=False, width=32).map(_no_negative_zero)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == FieldDescriptor.TYPE_STRING:
        return st.text(max_size=12)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=12)
    raise AssertionError(f"unsupported field type {kind} of {field.full_name}")


def _fill_well_known(draw: Callable[..., Any], message: Message) -> bool:
    """Fill Timestamp / Struct / Value; False for other messages."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Timestamp":
        message.seconds = draw(st.integers(TS_MIN, TS_MAX))  # type: ignore[attr-defined]
        message.nanos = draw(st.integers(0, 999_999)) * 1000  # type: ignore[attr-defined]
    elif name == "google.protobuf.Duration":
        message.seconds = draw(st.integers(-(10**9), 10**9))  # type: ignore[attr-defined]
    elif name == "google.protobuf.Struct":
        message.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=3)))  # type: ignore[attr-defined]
        message.SetInParent()
    elif name == "google.protobuf.ListValue":
        message.extend(draw(st.lists(json_values, max_size=3)))  # type: ignore[attr-defined]
        message.SetInParent()
    elif name == "google.protobuf.Value":
        value = draw(json_values)
        if isinstance(value, dict):
            message.struct_value.update(value)  # type: ignore[attr-defined]
            message.struct_value.SetInParent()  # type: ignore[attr-defined]
        elif isinstance(value, list):
            message.list_value.extend(value)  # type: ignore[attr-defined]
            message.list_value.SetInParent()  # type: ignore[attr-defined]
        elif value is None:
            message.null_value = 0  # type: ignore[attr-defined]
        elif isinstance(value, bool):
            message.bool_value = value  # type: ignore[attr-defined]
        elif isinstance(value, float):
            message.number_value = value  # type: ignore[attr-defined]
        else:
            message.string_value = value  # type: ignore[attr-defined]
    else:
        return False
    return True


def _populate(draw: Callable[..., Any], message: Message, depth: int) -> None:
    if _fill_well_known(draw, message):
        return
    message.SetInParent()
    desc = cast(Descriptor, message.DESCRIPTOR)
    chosen_oneof = {
        oneof.name: draw(st.sampled_from([None, *[f.name for f in oneof.fields]]))
        for oneof in desc.oneofs
        if not (len(oneof.fields) == 1 and oneof.name == f"_{oneof.fields[0].name}")
    }
    for field in desc.fields:
        oneof = field.containing_oneof
        if oneof is not None and oneof.name in chosen_oneof:
            if chosen_oneof[oneof.name] != field.name:
                continue
        elif field.has_presence and not draw(st.booleans()):
            continue  # leave optional scalars and messages unset sometimes
        _set_field(draw, message, field, depth)


def _set_field(draw: Callable[..., Any], message: Message, field: FieldDescriptor, depth: int) -> None:
    target = getattr(message, field.name)
    sub = field.message_type
    if sub is not None and sub.GetOptions().map_entry:
        key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
        for key in draw(st.lists(_scalar(key_field), max_size=MAX_ITEMS, unique=True)):
            if value_field.message_type is not None:
                _populate(draw, target[key], depth + 1)
            else:
                target[key] = draw(_scalar(value_field))
    elif field.is_repeated:
        if sub is not None:
            count = draw(st.integers(0, MAX_ITEMS if depth < MAX_DEPTH else 0))
            for _ in range(count):
                _populate(draw, target.add(), depth + 1)
        else:
            target.extend(draw(st.lists(_scalar(field), max_size=MAX_ITEMS + 1)))
    elif sub is not None:
        if depth < MAX_DEPTH or sub.full_name.startswith("google.protobuf."):
            _populate(draw, target, depth + 1)
        else:
            target.SetInParent()
    else:
        setattr(message, field.name, draw(_scalar(field)))


def messages(desc: Descriptor) -> st.SearchStrategy[Message]:
    @st.composite
    def build(draw: Callable[..., Any]) -> Message:
        message: Message = google_class(desc)()
        _populate(draw, message, 0)
        return message

    return build()


def round_trip(message: Message) -> Message:
    bp_message = bp_class(message.DESCRIPTOR.name).parse(message.SerializeToString())
    return type(message).FromString(bytes(bp_message))


# ---------------------------------------------------------------------------------------------
# tests


def test_package_is_enumerated_and_mirrored() -> None:
    assert len(MESSAGES) >= 40  # sanity: the contract has ~50 messages
    for name in ("Trace", "StreamChatResponse", "ExecutorEvidence", "SubmitFeedbackRequest"):
        assert name in MESSAGES
    missing = [name for name in MESSAGES if not hasattr(bp, name)]
    assert missing == [], f"no betterproto2 class for {missing}"


@pytest.mark.parametrize("name", sorted(MESSAGES))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_google_betterproto2_google(name: str, data: st.DataObject) -> None:
    original = data.draw(messages(MESSAGES[name]), label=name)
    assert round_trip(original) == original


def _without_null_values(message: Message) -> Message:
    """A copy with explicitly null (or empty) google.protobuf.Value fields cleared, at any depth."""
    copy = type(message)()
    copy.CopyFrom(message)
    _clear_null_values(copy)
    return copy


def _clear_null_values(message: Message) -> None:
    desc = cast(Descriptor, message.DESCRIPTOR)
    if desc.full_name.startswith("google.protobuf."):
        return
    for field in desc.fields:
        sub = field.message_type
        if sub is None:
            continue
        value = getattr(message, field.name)
        if sub.GetOptions().map_entry:
            if sub.fields_by_name["value"].message_type is not None:
                for item in value.values():
                    _clear_null_values(item)
        elif field.is_repeated:
            for item in value:
                _clear_null_values(item)
        elif message.HasField(field.name):
            if sub.full_name == "google.protobuf.Value" and value.WhichOneof("kind") in (None, "null_value"):
                message.ClearField(field.name)
            else:
                _clear_null_values(value)


@pytest.mark.parametrize("name", sorted(MESSAGES))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), camel=st.booleans())
def test_seed_codec_is_lossless(name: str, data: st.DataObject, camel: bool) -> None:
    original = data.draw(messages(MESSAGES[name]), label=name)
    style: KeyStyle = "camel" if camel else "snake"
    text = json.dumps(to_seed(original, key_style=style), ensure_ascii=False)
    back = from_seed(type(original), json.loads(text), key_style=style)
    assert back == _without_null_values(original)


def _enum_fields() -> Iterator[tuple[str, str, int]]:
    for name, desc in sorted(MESSAGES.items()):
        for field in desc.fields:
            if field.type == FieldDescriptor.TYPE_ENUM and field.enum_type is not None:
                for value in field.enum_type.values:
                    yield name, field.name, value.number


ENUM_CASES = list(_enum_fields())


@pytest.mark.parametrize(("name", "field", "number"), ENUM_CASES)
def test_every_enum_value_of_every_enum_field(name: str, field: str, number: int) -> None:
    message = google_class(MESSAGES[name])()
    if message.DESCRIPTOR.fields_by_name[field].is_repeated:
        getattr(message, field).append(number)
    else:
        setattr(message, field, number)
    assert round_trip(message) == message


def test_oneof_each_member_survives() -> None:
    desc = MESSAGES["StreamChatResponse"]
    for member in desc.oneofs_by_name["event"].fields:
        message = google_class(desc)(session_id="s", round=1)
        getattr(message, member.name).SetInParent()
        back = round_trip(message)
        assert back.WhichOneof("event") == member.name
        assert back == message


def test_optional_zero_keeps_presence() -> None:
    desc = MESSAGES["EvidenceBinding"]
    message = google_class(desc)(source_invocation_id=0)
    back = round_trip(message)
    assert back.HasField("source_invocation_id")


def test_timestamp_sub_microsecond_nanos_are_truncated() -> None:
    """betterproto2 maps Timestamp to datetime: nanoseconds below a microsecond are lost."""
    message = google_class(MESSAGES["DiagnosisSession"])()
    message.create_time.seconds = 1_720_000_000
    message.create_time.nanos = 1_001
    back = round_trip(message)
    assert back.create_time.seconds == 1_720_000_000  # type: ignore[attr-defined]
    assert back.create_time.nanos == 1_000  # type: ignore[attr-defined]


def test_negative_zero_double_comes_back_as_zero() -> None:
    """betterproto2 treats -0.0 as the default and does not write it."""
    message = google_class(MESSAGES["StageLatency"])(latency_ms=-0.0)
    back = round_trip(message)
    assert back.latency_ms == 0.0  # type: ignore[attr-defined]
    assert str(back.latency_ms) == "0.0"  # type: ignore[attr-defined]


def test_seed_codec_keeps_negative_zero_and_whole_numbers_in_struct() -> None:
    """Whole numbers in a Struct are written as JSON ints, but -0.0 stays a float (an int has no sign)."""
    from evigate.server.codec import from_seed, to_seed

    message = google_class(MESSAGES["ToolInvocation"])()
    message.arguments.update({"neg_zero": -0.0, "zero": 0.0, "count": 3.0, "neg": -3.0, "half": 0.5})
    seed = to_seed(message)
    assert seed["arguments"] == {"neg_zero": -0.0, "zero": 0, "count": 3, "neg": -3, "half": 0.5}
    assert str(seed["arguments"]["neg_zero"]) == "-0.0"
    assert from_seed(type(message), seed) == message
