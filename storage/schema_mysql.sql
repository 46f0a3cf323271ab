-- evigate reference DDL for MySQL 8 / MariaDB 10.6+: the head schema (alembic revision v014).
-- V001–V008 mirror the original Java schema (V008 added diagnosis_session.answer); v009–v014 add
-- what the trace replay, the durable job queue, case retirement,
-- semantic retrieval and structured cases need. Column names and types are a contract:
-- the Java side and existing reports read these tables.
-- tests/storage/test_schema.py checks that a database migrated from empty matches this file in
-- information_schema (columns, types, nullability, defaults, keys, indexes, foreign keys).
-- Loading this file yields a database alembic considers at head (see alembic_version below).

CREATE TABLE diagnosis_session (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  session_id      VARCHAR(64)  NOT NULL,
  query           TEXT         NOT NULL,
  status          VARCHAR(16)  NOT NULL COMMENT 'RUNNING / SUCCESS / FAILED; never changed by feedback',
  created_at      DATETIME(6)  NOT NULL COMMENT 'UTC',
  updated_at      DATETIME(6)  NOT NULL COMMENT 'UTC',
  self_evaluation JSON         NULL COMMENT 'evidence score + verifier_evaluation(_rounds)',
  feedback        VARCHAR(16)  NULL COMMENT 'useful / not_useful / NULL',
  answer          LONGTEXT     NULL COMMENT 'Agent 返回给用户的完整答案',
  language        VARCHAR(16)  NOT NULL DEFAULT 'zh',
  owner           VARCHAR(128) NOT NULL DEFAULT '' COMMENT 'replica that runs the session',
  failure_reason  TEXT         NULL,
  planner_plan    JSON         NULL,
  meta            JSON         NULL COMMENT 'agent_backend, prompt_versions',
  composer_output JSON         NULL,
  extras          JSON         NULL COMMENT 'guard findings, stage latencies',
  PRIMARY KEY (id),
  UNIQUE KEY uq_diagnosis_session_session_id (session_id),
  KEY ix_diagnosis_session_status_created (status, created_at, id),
  KEY ix_diagnosis_session_feedback_created (feedback, created_at, id),
  KEY ix_diagnosis_session_created (created_at, id),
  KEY ix_diagnosis_session_owner_status (owner, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tool_invocation (
  id                BIGINT      NOT NULL AUTO_INCREMENT COMMENT 'the source_invocation_id claims cite',
  session_id        VARCHAR(64) NOT NULL,
  tool_name         VARCHAR(64) NOT NULL,
  arguments         JSON        NOT NULL,
  status            VARCHAR(16) NOT NULL COMMENT 'success / failed',
  error             TEXT        NULL,
  raw_result        JSON        NULL,
  latency_ms        DOUBLE      NOT NULL DEFAULT 0,
  created_at        DATETIME(6) NOT NULL,
  retrieval_details JSON        NULL COMMENT 'evidence_status, match_level, evidence_refs',
  PRIMARY KEY (id),
  KEY ix_tool_invocation_session_id (session_id, id),
  CONSTRAINT fk_tool_invocation_session_id FOREIGN KEY (session_id) REFERENCES diagnosis_session (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE case_library (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  case_id        VARCHAR(64)  NOT NULL,
  diagnosis_id   VARCHAR(64)  NOT NULL COMMENT 'diagnosis_session.session_id; UNIQUE makes useful feedback idempotent',
  source_type    VARCHAR(16)  NOT NULL,
  fault_category VARCHAR(32)  NOT NULL,
  title          VARCHAR(255) NOT NULL,
  root_cause     LONGTEXT     NOT NULL,
  solution       LONGTEXT     NOT NULL,
  created_by     VARCHAR(64)  NOT NULL,
  created_at     DATETIME(6)  NOT NULL,
  retired_at     DATETIME(6)  NULL COMMENT 'set while the session is marked not_useful: no longer retrieved, kept for audit',
  error_code     VARCHAR(191) NULL,
  services       JSON         NULL,
  alert_names    JSON         NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_case_library_case_id (case_id),
  UNIQUE KEY uq_case_library_diagnosis_id (diagnosis_id),
  KEY ix_case_library_created (created_at, id),
  KEY ix_case_library_fault_category (fault_category, created_at),
  KEY ix_case_library_error_code (error_code),
  CONSTRAINT fk_case_library_diagnosis_id FOREIGN KEY (diagnosis_id) REFERENCES diagnosis_session (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE diagnosis_round (
  session_id              VARCHAR(64) NOT NULL,
  `round`                 INT         NOT NULL,
  executor_raw_text       LONGTEXT    NOT NULL,
  executor_output         JSON        NULL,
  parse_status            JSON        NOT NULL,
  gatekeeper_result       JSON        NULL,
  verdict                 JSON        NULL,
  proposed_verdict        VARCHAR(16) NULL,
  verdict_override_reason TEXT        NOT NULL,
  retry_context           JSON        NULL,
  created_at              DATETIME(6) NOT NULL,
  updated_at              DATETIME(6) NOT NULL,
  PRIMARY KEY (session_id, `round`),
  CONSTRAINT fk_diagnosis_round_session_id FOREIGN KEY (session_id) REFERENCES diagnosis_session (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE job (
  id           BIGINT       NOT NULL AUTO_INCREMENT,
  kind         VARCHAR(32)  NOT NULL COMMENT 'evidence_score, ...',
  session_id   VARCHAR(64)  NULL,
  payload      JSON         NOT NULL,
  status       VARCHAR(16)  NOT NULL COMMENT 'pending / running / done / failed',
  attempts     INT          NOT NULL DEFAULT 0,
  available_at DATETIME(6)  NOT NULL COMMENT 'pending: retry time; running: lease end',
  lease_owner  VARCHAR(128) NULL,
  last_error   TEXT         NULL,
  created_at   DATETIME(6)  NOT NULL,
  updated_at   DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  KEY ix_job_claim (kind, status, available_at),
  KEY ix_job_status_created (status, created_at),
  KEY ix_job_session_id (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE case_vector (
  id           BIGINT       NOT NULL AUTO_INCREMENT,
  model_id     VARCHAR(128) NOT NULL,
  content_hash VARCHAR(64)  NOT NULL,
  dimension    INT          NOT NULL,
  vector       TEXT         NOT NULL COMMENT 'base64 of little-endian float32, dimension values',
  created_at   DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_case_vector_model_id_content_hash (model_id, content_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE alembic_version (
  version_num VARCHAR(32) NOT NULL,
  PRIMARY KEY (version_num)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT INTO alembic_version (version_num) VALUES ('v014');
