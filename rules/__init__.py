"""evigate rules: pure, deterministic rule engines over plain data (docs/design.md §5).

No I/O besides reading the JSON rule catalog, no asyncio, no database, no LLM; nothing here
imports server, storage or the generated contract.

- `rules.gatekeeper.check(evidence, invocations, catalog=None) -> GatekeeperOutcome`
- `rules.rule_catalog.load_rule_catalog(path=None) -> RuleCatalog` (rules/gatekeeper-rules.json,
  gatekeeper-rules-v2; the tools' item arrays come from the tool registry, `RuleCatalog.with_tools`)
- `rules.score.evaluate(session_status, invocations) -> EvidenceScoreResult`
- `rules.verdict.constrain(proposed, severity) -> VerdictDecision`
- `rules.guard.scan(text, negative_claims) -> list[GuardFinding]`
- `rules.guard.rewrite(text, findings, language=None) -> str`
- `rules.text.tokenize(text)`, `rules.text.critical_tokens(text)`
- `rules.case_facts.extract(evidence, catalog=None) -> CaseFacts` (rules/fault-categories.json)
- `rules.opinion.parse_items(data)`, `code_marks(...)`, `disagreements(items, marks)`, `factors(...)`
Inputs and results are the frozen dataclasses of `rules.types`; every result has `to_seed()`.
"""
