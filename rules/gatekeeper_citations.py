"""The Gatekeeper's citation checks (docs/design.md §5.1): a binding names a real invocation of
the session, with the invocation's tool, a raw_path its tool's grammar allows and its refs hold,
an excerpt that quotes the ref word for word (no changed number, no left-out negation), bound at
most once per claim; a missing id or path is back-filled only from a unique match."""

from __future__ import annotations

import re
from collections.abc import Mapping

from evigate.rules import text as txt
from evigate.rules.enums import Severity
from evigate.rules.gatekeeper_state import RunState, Site, describe
from evigate.rules.types import GatekeeperIssue

NO_EVIDENCE = "$.no_evidence"
_PATH = re.compile(r"\$\.([a-z_]+)\[(0|[1-9][0-9]{0,8})\]")


class CitationChecks(RunState):
    def check_citation(self, site: Site, inv_id: int | None, path: str | None) -> None:
        failed = False
        path_ok = True
        inv = self.by_id.get(inv_id) if inv_id is not None else None
        if path is not None:
            # Judge the path by the cited invocation's real tool: a wrong tool_name is its own failure.
            path_ok, failed = self.check_path(site, path, inv.tool_name if inv is not None else site.tool)
        if inv_id is not None:
            if inv is None:
                msg = f"source_invocation_id {inv_id} is no tool invocation of this session (forged citation)"
                failed = self.fail("citation.invocation_exists", site, msg) or failed
                self.record(site, inv_id, path or "", "", failed=failed)
                return
            if inv.tool_name != site.tool:
                msg = f"tool_name {site.tool!r} differs from invocation {inv_id}'s tool {inv.tool_name!r}"
                failed = self.fail("citation.tool_name", site, msg) or failed
            refs = self.refs[inv_id]
            if refs is None:
                msg = (
                    f"invocation {inv_id} was stored without evidence_refs; the citation cannot be confirmed"
                )
                failed = self.fail("backfill.refs_missing", site, msg) or failed
                self.record(site, inv_id, path or "", "", failed=failed)
                return
            if path is not None:
                self.check_ref(site, inv_id, path, refs, failed=failed, path_ok=path_ok)
                return
        if not path_ok:
            self.record(site, inv_id, path or "", "", failed=failed)
            return
        filled, backfill_failed = self.backfill(site, inv_id, path)
        if filled is None:
            self.record(site, inv_id, path or "", "", failed=failed or backfill_failed)
            return
        new_id, new_path, text = filled
        if path is None:
            failed = self.check_path(site, new_path, site.tool)[1] or failed
        failed = self.check_bound_once(site, new_id, new_path) or failed
        self.record(site, new_id, new_path, text, failed=failed, backfilled=True)

    def check_ref(
        self, site: Site, inv_id: int, path: str, refs: Mapping[str, str], *, failed: bool, path_ok: bool
    ) -> None:
        failed = self.check_bound_once(site, inv_id, path) or failed
        text = refs.get(path) if path_ok else None
        if text is None:
            if path_ok:
                msg = f"raw_path {path!r} is not among the evidence_refs of invocation {inv_id}"
                failed = self.fail("citation.raw_path_exists", site, msg) or failed
            self.record(site, inv_id, path, "", failed=failed)
            return
        found = self.supports(site.excerpt, text)
        where = f"{path} of invocation {inv_id}"
        if found.unsupported:
            # A changed number or identifier is the sharper finding; the verbatim rule still
            # rejects the excerpt when the critical-token rule is off or only warns.
            missing = txt.compare(site.excerpt, txt.Source(text))[1]
            pinned = False
            if missing:
                shown = ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")
                msg = f"excerpt states {shown}, absent from {where} (beyond the source)"
                pinned = self.fail("excerpt.critical_tokens", site, msg)
            if not pinned:
                msg = (
                    f"excerpt is not {where}'s own words: {describe(found.unsupported)} is not in it "
                    "(an excerpt quotes its ref text word for word; an ellipsis may join spans in order)"
                )
                pinned = self.fail("excerpt.verbatim", site, msg)
            failed = pinned or failed
        elif found.negation:
            msg = f"excerpt leaves out the negation {found.negation!r} of {where} (it would say the opposite)"
            failed = self.fail("excerpt.negation_elided", site, msg) or failed
        self.record(site, inv_id, path, text, failed=failed)

    def check_path(self, site: Site, path: str, tool: str) -> tuple[bool, bool]:
        """Grammar and negative-observation checks; returns (path usable for lookup, a rule failed)."""
        failed = False
        allowed = self.claim_types.get(tool)
        if allowed is not None and site.claim_type not in allowed:
            msg = (
                f"{tool} may not be cited by a {describe(site.claim_type)} claim (only {', '.join(allowed)})"
            )
            failed = self.fail("citation.raw_path_grammar", site, msg)
        if path == NO_EVIDENCE:
            return True, failed
        usable = True
        m = _PATH.fullmatch(path)
        expected = self.arrays.get(tool)
        if m is None or m.group(1) != expected:
            want = f"$.{expected}[i] or {NO_EVIDENCE}" if expected else NO_EVIDENCE
            msg = f"raw_path {path!r} is not valid for {tool}: expected {want} (no field sub-paths)"
            failed = self.fail("citation.raw_path_grammar", site, msg) or failed
            # With the grammar rule disabled the path is still looked up as given.
            usable = not failed
        if site.negative:
            msg = f"negative_observation binds {path!r}; it may bind only {NO_EVIDENCE}"
            failed = self.fail("negative.no_evidence_only", site, msg) or failed
        return usable, failed

    def check_bound_once(self, site: Site, inv_id: int, path: str) -> bool:
        key = (inv_id, path)
        if key in site.bound:
            msg = (
                f"{path} of invocation {inv_id} is bound twice by this claim; merge its fields in one excerpt"
            )
            return self.fail("citation.item_bound_once", site, msg)
        site.bound.add(key)
        return False

    def backfill(
        self, site: Site, inv_id: int | None, path: str | None
    ) -> tuple[tuple[int, str, str] | None, bool]:
        """Fill a missing invocation id and/or raw_path when exactly one invocation ref matches
        tool_name + raw_path + excerpt: a warning when filled, low_confid otherwise.
        Returns ((id, raw_path, text) or None, whether a rule failed)."""
        missing = " and ".join(
            n for n, v in (("source_invocation_id", inv_id), ("raw_path", path)) if v is None
        )
        candidates: list[tuple[int, str, str]] = []
        without_refs = 0
        exhausted = False
        pool = [self.by_id[inv_id]] if inv_id is not None else self.tool_index().get(site.tool, [])
        for inv in pool:
            refs = self.refs[inv.id]
            if refs is None:
                without_refs += 1
                continue
            if path is None:
                items = list(refs.items())
            else:
                found_text = refs.get(path)
                items = [] if found_text is None else [(path, found_text)]
            if len(items) > self.backfill_budget:
                exhausted = True
                break
            self.backfill_budget -= len(items)
            for ref_path, text in items:
                if self.supports(site.excerpt, text).ok:
                    candidates.append((inv.id, ref_path, text))
            if len(candidates) > 1:
                break
        if len(candidates) == 1 and not exhausted:
            found = candidates[0]
            if "backfill.unique_match" in self.severity:
                msg = f"{missing} missing; back-filled from the only match, invocation {found[0]} {found[1]}"
                self.warnings.append(
                    GatekeeperIssue(site.claim_id, site.index, "backfill.unique_match", Severity.NONE, msg)
                )
            return found, False
        if exhausted:
            why = "(the back-fill comparison budget being spent) no unique invocation ref"
        else:
            why = "no invocation ref" if not candidates else "several invocation refs"
        extra = f" ({without_refs} {site.tool} invocation(s) have no evidence_refs)" if without_refs else ""
        where = f", raw_path {path!r}" if path else ""
        msg = (
            f"{missing} missing and {why} of this session match tool_name {site.tool!r}{where} "
            f"and the excerpt{extra}; cannot back-fill"
        )
        return None, self.fail("backfill.unique_match", site, msg)
