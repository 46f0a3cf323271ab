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

from .descriptors import CodecError, KeyStyle, enum_word
from .emit import check_enums, to_seed
from .parse import from_seed

__all__ = ["CodecError", "KeyStyle", "check_enums", "enum_word", "from_seed", "to_seed"]
