"""Typed declarative models: the head schema (V008 plus the trace, round and job revisions).

Kept in step with storage/migrations (tests compare a migrated MariaDB with schema_mysql.sql and
the SQLite schema with these models).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, MetaData, String, Text, UniqueConstraint, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from evigate.storage.types import BigIntPk, Float64, Json, LongText, UtcDateTime

MYSQL_TABLE_ARGS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_unicode_ci",
}

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class DiagnosisSession(Base):
    __tablename__ = "diagnosis_session"
    __table_args__ = (
        Index("ix_diagnosis_session_status_created", "status", "created_at", "id"),
        Index("ix_diagnosis_session_feedback_created", "feedback", "created_at", "id"),
        Index("ix_diagnosis_session_created", "created_at", "id"),
        Index("ix_diagnosis_session_owner_status", "owner", "status"),
        MYSQL_TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(BigIntPk, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(64), unique=True)
    query: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    self_evaluation: Mapped[Any | None] = mapped_column(Json)
    feedback: Mapped[str | None] = mapped_column(String(16))
    answer: Mapped[str | None] = mapped_column(LongText, comment="Agent 返回给用户的完整答案")
    language: Mapped[str] = mapped_column(String(16), server_default=text("'zh'"))
    owner: Mapped[str] = mapped_column(String(128), server_default=text("''"))
    failure_reason: Mapped[str | None] = mapped_column(Text)
    planner_plan: Mapped[Any | None] = mapped_column(Json)
    meta: Mapped[Any | None] = mapped_column(Json)
    composer_output: Mapped[Any | None] = mapped_column(Json)
    extras: Mapped[Any | None] = mapped_column(Json)


class ToolInvocation(Base):
    __tablename__ = "tool_invocation"
    __table_args__ = (
        Index("ix_tool_invocation_session_id", "session_id", "id"),
        MYSQL_TABLE_ARGS,
    )

    # The id claims cite as source_invocation_id.
    id: Mapped[int] = mapped_column(BigIntPk, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(64), ForeignKey("diagnosis_session.session_id"))
    tool_name: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[Any] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text)
    raw_result: Mapped[Any | None] = mapped_column(Json)
    latency_ms: Mapped[float] = mapped_column(Float64, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # Nullable: rows written before V003 have no evidence refs (the Gatekeeper's low_confid case).
    retrieval_details: Mapped[Any | None] = mapped_column(Json)


class CaseLibrary(Base):
    __tablename__ = "case_library"
    __table_args__ = (
        Index("ix_case_library_created", "created_at", "id"),
        Index("ix_case_library_fault_category", "fault_category", "created_at"),
        Index("ix_case_library_error_code", "error_code"),
        MYSQL_TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(BigIntPk, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(64), unique=True)
    # UNIQUE: the key that makes `useful` feedback idempotent across processes.
    diagnosis_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("diagnosis_session.session_id"), unique=True
    )
    source_type: Mapped[str] = mapped_column(String(16))
    fault_category: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(String(255))
    root_cause: Mapped[str] = mapped_column(LongText)
    solution: Mapped[str] = mapped_column(LongText)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # Set while the session is marked not_useful: lookup_knowledge skips the case, the row stays for
    # audit; useful feedback again clears it.
    retired_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # V014: extracted from the session's verified evidence (rules.case_facts); NULL until then.
    error_code: Mapped[str | None] = mapped_column(String(191), nullable=True)
    services: Mapped[Any | None] = mapped_column(Json, nullable=True)
    alert_names: Mapped[Any | None] = mapped_column(Json, nullable=True)


class DiagnosisRound(Base):
    __tablename__ = "diagnosis_round"
    __table_args__ = (MYSQL_TABLE_ARGS,)

    session_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("diagnosis_session.session_id"), primary_key=True
    )
    round: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    executor_raw_text: Mapped[str] = mapped_column(LongText)
    executor_output: Mapped[Any | None] = mapped_column(Json)
    parse_status: Mapped[Any] = mapped_column(Json)
    gatekeeper_result: Mapped[Any | None] = mapped_column(Json)
    verdict: Mapped[Any | None] = mapped_column(Json)
    proposed_verdict: Mapped[str | None] = mapped_column(String(16))
    verdict_override_reason: Mapped[str] = mapped_column(Text)
    retry_context: Mapped[Any | None] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Job(Base):
    """Durable work queue. A job is claimable when pending/running and `available_at` has passed:
    for pending jobs that is the retry time, for running jobs the end of the worker's lease."""

    __tablename__ = "job"
    __table_args__ = (
        Index("ix_job_claim", "kind", "status", "available_at"),
        Index("ix_job_status_created", "status", "created_at"),
        Index("ix_job_session_id", "session_id"),
        MYSQL_TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(BigIntPk, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(32))
    session_id: Mapped[str | None] = mapped_column(String(64))
    payload: Mapped[Any] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    available_at: Mapped[datetime] = mapped_column(UtcDateTime)
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class CaseVector(Base):
    """Embedding vectors of case-library entries, keyed by the vector space and the exact text
    embedded (SHA-256): every replica finds a case's vector here instead of embedding it again, and
    an edited case simply gets a row for its new text."""

    __tablename__ = "case_vector"
    __table_args__ = (
        UniqueConstraint("model_id", "content_hash", name="uq_case_vector_model_id_content_hash"),
        MYSQL_TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(BigIntPk, primary_key=True, autoincrement=True)
    model_id: Mapped[str] = mapped_column(String(128))
    content_hash: Mapped[str] = mapped_column(String(64))
    dimension: Mapped[int] = mapped_column(Integer)
    # Base64 text, not a BLOB: aiomysql cannot bind bytes parameters with PyMySQL 1.1.
    vector: Mapped[str] = mapped_column(Text, comment="base64 of little-endian float32, dimension values")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
