"""The answer guard: catches over-statements of negative evidence in user-facing text (docs/design.md §5.3).

`$.no_evidence` only means "this query found nothing", never "the problem does not exist", "it is
ruled out" or "the system is healthy". `scan` finds such sentences in Chinese and English, whichever
backend wrote them, and names the negative_observation claim each concerns; `rewrite` replaces
them with the safe phrasing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.text import critical_tokens, tokenize
from evigate.rules.types import GuardFinding

_NOT_END = r"[^。！？!?；;\n]"
_ZH_OVERSTATEMENTS = [
    r"问题(?:并|根本|确实|已经?)?不存在",
    rf"(?<![是否])不存在(?:任何|该|此|这个|相关)?{_NOT_END}{{0,30}}?(?:问题|故障|异常|错误|日志|告警|隐患)",
    r"(?<![未不没无法能够])(?:已经?|可以|可|能够|基本|完全|彻底)(?:被)?排除",
    r"(?<![未不没无法能够])排除了",
    r"(?<![未不没无法能够以])排除(?:该|此|这个|这一)(?:问题|根因|故障|可能)",
    r"(?:日志|指标|监控|告警)(?:层面|方面|上)(?:已经?|可以)?排除",
    r"根因(?:已经?)?(?:被)?排除",
    r"(?<![未不没无法])确认(?:了)?(?:系统|服务)?(?:没有|无|不存在|未发生|未出现)",
    r"(?:确定|肯定|绝对|完全|根本)(?:没有|不存在|无此)",
    r"(?:系统|服务|集群|数据库|连接池)(?:运行)?(?:已经?|目前|一切|完全|是)?(?:健康|正常)",
    r"一切正常|没有任何问题|不会有问题",
    rf"没有(?:发生|出现)过?{_NOT_END}{{0,30}}?(?:问题|故障|异常|耗尽|错误|告警)",
]
_EN_OVERSTATEMENTS = [
    r"\b(?:does|do|did)\s*(?:not|n't)\s+exist\b",
    r"\bno\s+longer\s+exists?\b|\bnon-?existent\b",
    r"\brul(?:e|es|ed|ing)\s+(?:it\s+|this\s+|that\s+|them\s+)?out\b",
    r"\bconfirm(?:s|ed|ing)?\s+(?:that\s+)?(?:there\s+(?:is|are|was|were)\s+)?(?:no|none|nothing)\b",
    r"\bconfirm(?:s|ed|ing)?\s+(?:the\s+)?absence\b",
    r"\b(?:the\s+)?(?:system|service|cluster|database|pool|everything|all\s+services)\s+(?:is|are|looks|seems)\s+"
    r"(?:completely\s+|fully\s+|perfectly\s+|totally\s+|now\s+)?(?:healthy|fine|normal|ok|okay)\b",
    r"\bthere\s+(?:is|are|was|were)\s+(?:definitely\s+|certainly\s+)?no\s+(?:such\s+)?"
    r"(?:problem|issue|fault|outage|incident)s?\b",
    r"\b(?:problem|issue|fault|cause)s?\s+(?:has|have)\s+been\s+(?:excluded|eliminated)\b",
    r"\b(?:definitely|certainly)\s+(?:no|not|none)\b",
    r"\bno\s+(?:problem|issue)s?\s+(?:exists?|at\s+all)\b",
]
_ZH = re.compile("|".join(f"(?:{p})" for p in _ZH_OVERSTATEMENTS))
_EN = re.compile("|".join(f"(?:{p})" for p in _EN_OVERSTATEMENTS), re.IGNORECASE)
# "cannot be ruled out", "we could not confirm that there is no ..." are honest, not over-statements.
_EN_NEGATED = re.compile(
    r"(?:\bnot|n't|\bcannot|\bunable\s+to|\bnever|\bwithout)\s+(?:\w+\s+){0,2}$", re.IGNORECASE
)
# "未检索到不代表问题不存在" / "no hit does not mean the issue does not exist" state the limit honestly.
_HEDGE = re.compile(
    r"不代表|不意味着|不等于|不能说明|并不说明|不说明|不能证明|无法证明|不足以证明|不能断定|无法断定|并非"
    r"|\b(?:does\s+not|doesn't|do\s+not|don't)\s+(?:mean|imply|prove|show|indicate)\b"
    r"|\bnot\s+necessarily\b|\bcannot\s+conclude\b|\bcan't\s+conclude\b|\bis\s+not\s+proof\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[。！？!?；;\n]|\.(?=\s|$)")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# the first of `a|b|c` alternatives: what the sentence check reads as the query's subject
_QUERY = re.compile(r"\bquery=([^;|\n]+)")
_SAFE_PREFIX = re.compile(
    r"^\s*(?:当前查询未检索到|本次检索未发现|(?:this query found )?no matching evidence for)\s*",
    re.IGNORECASE,
)


def _language(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def _norm_language(language: str) -> str:
    return "zh" if language.lower().startswith("zh") else "en"


# Where a negative claim's query looked, by the tool that ran it: (English, Chinese) words the
# sentence check reads as that scope, so the safe phrasing is about that data alone ("no runbook
# matched RedisEvictionsHigh", not "nothing matched RedisEvictionsHigh" while its alert fires).
SCOPES: dict[str, tuple[str, str]] = {
    "query_logs": ("in the logs", "在日志中"),
    "summarize_logs": ("in the logs", "在日志中"),
    "query_metrics": ("in the alerts", "在告警数据中"),  # "告警中" reads as firing
    "query_promql": ("in the metrics", "在指标中"),
    "lookup_knowledge": ("in the knowledge base", "在知识库中"),
}


def safe_phrasing(subject: str, language: str, scope: str = "") -> str:
    """The allowed no-hit wording: "当前查询未检索到…" / "This query found no matching evidence for …",
    with where the query looked when `scope` (a tool of SCOPES) is known."""
    en, zh = SCOPES.get(scope, ("", ""))
    if _norm_language(language) == "zh":
        return (
            f"当前查询{zh}未检索到与 {subject} 匹配的证据。" if subject else f"当前查询{zh}未检索到匹配证据。"
        )
    where = f" {en}" if en else ""
    return (
        f"This query found no matching evidence{where} for {subject}."
        if subject
        else f"This query found no matching evidence{where}."
    )


def _claim_scope(claim: Mapping[str, Any]) -> str:
    """The tool of SCOPES the claim's bindings name, when they all name the same one."""
    bindings = claim.get("evidence_bindings")
    tools = {
        b.get("tool_name") for b in (bindings if isinstance(bindings, list) else []) if isinstance(b, Mapping)
    }
    tool = next(iter(tools)) if len(tools) == 1 else None
    return tool if isinstance(tool, str) and tool in SCOPES else ""


def _sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.end()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    trimmed = []
    for first, last in spans:
        s, e = first, last
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            trimmed.append((s, e))
    return trimmed


def _overstatement(sentence: str) -> str | None:
    for m in _ZH.finditer(sentence):
        if not _HEDGE.search(sentence, 0, m.start()):
            return m.group()
    for m in _EN.finditer(sentence):
        before = sentence[max(0, m.start() - 40) : m.start()]
        if not _EN_NEGATED.search(before) and not _HEDGE.search(sentence, 0, m.start()):
            return m.group()
    return None


def _claim_subject(claim: Mapping[str, Any], language: str) -> str:
    bindings = claim.get("evidence_bindings")
    for b in bindings if isinstance(bindings, list) else []:
        excerpt = b.get("evidence_excerpt") if isinstance(b, Mapping) else None
        m = _QUERY.search(excerpt) if isinstance(excerpt, str) else None
        if m:
            return m.group(1).strip()
    text = claim.get("claim_text")
    if not isinstance(text, str):
        return ""
    if _language(text) == language:
        return _SAFE_PREFIX.sub("", text).strip().rstrip("。.!！;；")
    return " ".join(dict.fromkeys(critical_tokens(text)))


def _claim_words(claim: Mapping[str, Any]) -> set[str]:
    parts = [claim.get("claim_text")]
    bindings = claim.get("evidence_bindings")
    for b in bindings if isinstance(bindings, list) else []:
        if isinstance(b, Mapping):
            parts.append(b.get("evidence_excerpt"))
    return {t for p in parts if isinstance(p, str) for t in tokenize(p)}


def _concerned(sentence: str, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    words = set(tokenize(sentence))
    best, best_score = None, 0
    for claim in claims:
        score = len(words & _claim_words(claim))
        if score > best_score:
            best, best_score = claim, score
    if best is None and len(claims) == 1:
        return claims[0]
    return best


def scan(text: str, negative_claims: Sequence[Mapping[str, Any]]) -> list[GuardFinding]:
    """Every sentence of `text` that over-states negative evidence, with the claim it concerns."""
    claims = [c for c in negative_claims if isinstance(c, Mapping)]
    findings: list[GuardFinding] = []
    for start, end in _sentences(text):
        sentence = text[start:end]
        phrase = _overstatement(sentence)
        if phrase is None:
            continue
        language = _language(sentence)
        claim = _concerned(sentence, claims)
        claim_id = claim.get("claim_id") if claim is not None else None
        subject = _claim_subject(claim, language) if claim is not None else ""
        scope = _claim_scope(claim) if claim is not None else ""
        findings.append(
            GuardFinding(
                sentence=sentence,
                start=start,
                end=end,
                phrase=phrase,
                language=language,
                claim_id=claim_id if isinstance(claim_id, str) else None,
                subject=subject,
                safe_phrasing=safe_phrasing(subject, language, scope),
                scope=scope,
            )
        )
    return findings


def rewrite(text: str, findings: Sequence[GuardFinding], language: str | None = None) -> str:
    """Replace each offending sentence by the safe phrasing (in `language`, else the sentence's own)."""
    out = text
    for f in sorted(findings, key=lambda f: f.start, reverse=True):
        safe = safe_phrasing(f.subject, language, f.scope) if language else f.safe_phrasing
        if out[f.start : f.end] == f.sentence:
            tail = out[f.end :]
            if safe.endswith(".") and tail[:1] and not tail[:1].isspace():
                safe += " "
            out = out[: f.start] + safe + tail
        else:
            out = out.replace(f.sentence, safe, 1)
    return out
