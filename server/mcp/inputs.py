"""What an agent sends, checked before any work starts: the same rules and limits as the gRPC
front end (session ids, query length, languages, list filters, the Check request's sizes). A
problem becomes a tool error naming every bad field at once, which the agent reads and corrects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

SESSION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
MAX_CASE_FILTER_CHARS = 191
MAX_NOTE_CHARS = 2000
MAX_PAGE_TOKEN = 1024


@dataclass(frozen=True)
class Limits:
    max_query_chars: int
    max_claims: int
    max_bindings: int
    max_excerpt_chars: int


class Binding(BaseModel):
    """One citation: a tool invocation of the session and a path into its result."""

    model_config = ConfigDict(extra="forbid")
    source_type: str = Field("tool_trace", description='"tool_trace": a call recorded in the session')
    source_id: str = Field("", description="free text; the invocation id is what is checked")
    tool_name: str = Field(description="the tool that was called, e.g. query_logs")
    source_invocation_id: int | None = Field(description="the invocation id a query tool returned")
    raw_path: str = Field(description="the evidence ref's path in the result, e.g. $.logs[0]")
    evidence_excerpt: str = Field(description="the words quoted from that item, verbatim")


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claim_id: str
    claim_type: Literal["observation", "negative_observation", "symptom", "root_cause"]
    claim_text: str
    support_level: Literal["direct", "indirect"] | None = None
    evidence_bindings: list[Binding] = Field(default_factory=list)


class Hypothesis(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hypothesis_text: str
    reason: str = ""


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action_text: str
    reason: str = ""


class Evidence(BaseModel):
    """executor_evidence_v2: claims, each bound to the evidence it rests on."""

    model_config = ConfigDict(extra="forbid")
    answer_version: str = "executor_evidence_v2"
    claims: list[Claim]
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    recommended_actions: list[Action] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)


def require(problems: list[str]) -> None:
    if problems:
        raise ToolError("invalid arguments: " + "; ".join(problems))


def session_id(value: str | None, field: str = "session_id", *, required: bool = True) -> list[str]:
    if not value:
        return [f"{field}: required"] if required else []
    if not SESSION_ID.match(value):
        return [f"{field}: must be 1–64 characters of letters, digits, '-', '_', '.', ':'"]
    return []


def question(value: str, limits: Limits) -> list[str]:
    if not value.strip():
        return ["question: required"]
    if len(value) > limits.max_query_chars:
        return [f"question: at most {limits.max_query_chars} characters, got {len(value)}"]
    return []


def page_size(value: int) -> tuple[int, list[str]]:
    """AIP-158: 0 means the default, larger than the maximum is coerced to it, negative is bad."""
    if value < 0:
        return 0, ["limit: must not be negative"]
    return (DEFAULT_PAGE_SIZE if value == 0 else min(value, MAX_PAGE_SIZE)), []


def page_token(value: str | None) -> list[str]:
    if value is not None and len(value) > MAX_PAGE_TOKEN:
        return ["page_token: not a token issued by this service"]
    return []


def case_filters(**filters: str | None) -> list[str]:
    return [
        f"{name}: at most {MAX_CASE_FILTER_CHARS} characters"
        for name, value in filters.items()
        if value is not None and len(value) > MAX_CASE_FILTER_CHARS
    ]


def evidence(value: Evidence, limits: Limits) -> list[str]:
    """The Check request's sizes: claims, bindings in all, excerpt characters in all."""
    problems = []
    if len(value.claims) > limits.max_claims:
        problems.append(f"evidence.claims: at most {limits.max_claims} claims")
    bindings = [b for claim in value.claims for b in claim.evidence_bindings]
    if len(bindings) > limits.max_bindings:
        problems.append(f"evidence.claims: at most {limits.max_bindings} evidence bindings in all")
    if sum(len(b.evidence_excerpt) for b in bindings) > limits.max_excerpt_chars:
        problems.append(f"evidence: at most {limits.max_excerpt_chars} excerpt characters in all bindings")
    return problems
