"""Request validation: every field a client sends is checked here before any work starts.

Each check returns the violations it found; `require()` raises one InvalidArgumentError carrying all of
them, so a client learns every problem of its request at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evigate.rules.enums import SessionStatus
from evigate.server.codec import CodecError, check_enums, to_seed
from evigate.server.grpc.errors import FieldViolation, InvalidArgumentError
from evigate.v1 import evidence_pb2, session_pb2

SESSION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
LANGUAGES = ("", "zh", "en")
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
MAX_PAGE_TOKEN = 1024


@dataclass(frozen=True)
class Limits:
    max_query_chars: int
    max_claims: int
    max_bindings: int
    max_excerpt_chars: int


def require(reason: str, violations: list[FieldViolation]) -> None:
    if violations:
        raise InvalidArgumentError(reason, tuple(violations))


def session_id(value: str, field: str = "session_id", *, required: bool = True) -> list[FieldViolation]:
    if not value:
        return [FieldViolation(field, "required")] if required else []
    if not SESSION_ID.match(value):
        return [FieldViolation(field, "must be 1–64 characters of letters, digits, '-', '_', '.', ':'")]
    return []


def query(value: str, limits: Limits) -> list[FieldViolation]:
    if not value.strip():
        return [FieldViolation("query", "required")]
    if len(value) > limits.max_query_chars:
        return [FieldViolation("query", f"at most {limits.max_query_chars} characters, got {len(value)}")]
    return []


def language(value: str) -> list[FieldViolation]:
    if value not in LANGUAGES:
        return [FieldViolation("language", 'must be "", "zh" or "en"')]
    return []


def chat(query_text: str, sid: str, lang: str, limits: Limits) -> None:
    require(
        "INVALID_CHAT_REQUEST",
        query(query_text, limits) + session_id(sid, required=False) + language(lang),
    )


_FEEDBACK_WORDS: dict[int, str] = {
    session_pb2.FEEDBACK_USEFUL: "useful",
    session_pb2.FEEDBACK_NOT_USEFUL: "not_useful",
}
_STATUS_WORDS: dict[int, str] = {
    session_pb2.SESSION_STATUS_RUNNING: SessionStatus.RUNNING,
    session_pb2.SESSION_STATUS_SUCCESS: SessionStatus.SUCCESS,
    session_pb2.SESSION_STATUS_FAILED: SessionStatus.FAILED,
    session_pb2.SESSION_STATUS_AGENT: SessionStatus.AGENT,
}


def _enum_violations(
    field: str, value: int, words: dict[int, str], *, required: bool
) -> list[FieldViolation]:
    if value in words or (value == 0 and not required):
        return []
    detail = "required" if value == 0 else f"unknown value {value}"
    return [FieldViolation(field, f"{detail}; expected one of {', '.join(sorted(words.values()))}")]


def feedback_request(sid: str, value: int) -> str:
    """SubmitFeedback: the feedback word; UNSPECIFIED and unknown numbers are INVALID_ARGUMENT."""
    violations = session_id(sid) + _enum_violations("feedback", value, _FEEDBACK_WORDS, required=True)
    require("INVALID_FEEDBACK_REQUEST", violations)
    return _FEEDBACK_WORDS[value]


def list_request(
    feedback: int, status: int, page_size: int, page_token: str
) -> tuple[str | None, str | None, int, str | None]:
    """ListSessions: (feedback word, status word, page size, page token). AIP-158: page size 0
    means the default, larger than the maximum is coerced to it, negative is bad."""
    violations = _enum_violations("feedback", feedback, _FEEDBACK_WORDS, required=False)
    violations += _enum_violations("status", status, _STATUS_WORDS, required=False)
    if page_size < 0:
        violations.append(FieldViolation("page_size", "must not be negative"))
    if len(page_token) > MAX_PAGE_TOKEN:
        violations.append(FieldViolation("page_token", "not a token issued by this service"))
    require("INVALID_LIST_REQUEST", violations)
    size = DEFAULT_PAGE_SIZE if page_size == 0 else min(page_size, MAX_PAGE_SIZE)
    return _FEEDBACK_WORDS.get(feedback), _STATUS_WORDS.get(status), size, page_token or None


MAX_CASE_FILTER_CHARS = 191


def list_cases_request(
    fault_category: str, service: str, error_code: str, page_size: int
) -> tuple[str | None, str | None, str | None, int]:
    """ListCases: (category, service, error code, size); empty filters mean any."""
    violations = []
    for name, value in (("fault_category", fault_category), ("service", service), ("error_code", error_code)):
        if len(value) > MAX_CASE_FILTER_CHARS:
            violations.append(FieldViolation(name, f"at most {MAX_CASE_FILTER_CHARS} characters"))
    if page_size < 0:
        violations.append(FieldViolation("page_size", "must not be negative"))
    require("INVALID_LIST_REQUEST", violations)
    size = DEFAULT_PAGE_SIZE if page_size == 0 else min(page_size, 1000)
    return fault_category or None, service or None, error_code or None, size


def check_request(
    sid: str, message: evidence_pb2.ExecutorEvidence, present: bool, limits: Limits
) -> Callable[[], dict[str, Any]]:
    """Check: every problem of the request, found on the message itself; returns the conversion to
    the seed-shaped dict the Gatekeeper reads, for the use case to run once the session's rows are
    read (a converted Check is about twice its bytes again: none waits on the database)."""
    violations = session_id(sid)
    if not present:
        violations.append(FieldViolation("evidence", "required"))
    if len(message.claims) > limits.max_claims:
        violations.append(FieldViolation("evidence.claims", f"at most {limits.max_claims} claims"))
    bindings = sum(len(claim.evidence_bindings) for claim in message.claims)
    if bindings > limits.max_bindings:
        violations.append(
            FieldViolation("evidence.claims", f"at most {limits.max_bindings} evidence bindings in all")
        )
    violations += _excerpt_chars(message, limits.max_excerpt_chars)
    try:
        check_enums(message)  # what to_seed would refuse, without building the dict
    except CodecError as error:  # e.g. an enum number this contract does not define
        violations.append(FieldViolation(f"evidence.{error.path}".rstrip("."), error.reason))
    require("INVALID_CHECK_REQUEST", violations)
    return lambda: to_seed(message)


def _excerpt_chars(message: evidence_pb2.ExecutorEvidence, limit: int) -> list[FieldViolation]:
    """The excerpts' characters, all bindings together, within `limit`: the binding where the sum
    passes it is named."""
    total = 0
    for i, claim in enumerate(message.claims):
        for j, binding in enumerate(claim.evidence_bindings):
            total += len(binding.evidence_excerpt)
            if total > limit:
                field = f"evidence.claims[{i}].evidence_bindings[{j}].evidence_excerpt"
                return [FieldViolation(field, f"at most {limit} excerpt characters in all bindings")]
    return []
