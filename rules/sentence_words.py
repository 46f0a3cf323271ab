"""The words the sentence check reads, in Chinese and English: states and their negations, absence,
could-not-check, scopes, causal and trend words, severity, and the yes / no of a headline
(quantities, actions, value roles and relative times are in rules.sentence_phrases).

Every pattern runs on text normalised by `rules.answer_facts.normalize` (NFKC, lowercase), with
spelled-out numbers as digits and quoted text taken out: a log line in quotes is data, and "not
available" inside it says nothing about the state of an alert.
"""

from __future__ import annotations

import functools
import re
from typing import Final

# States a sentence asserts, and the states of a bound excerpt.
FIRING: Final = "firing"
RESOLVED: Final = "resolved"
SILENCED: Final = "silenced"
FOUND: Final = "found"  # present, with no alert state (a log line, a runbook, "fired")
ABSENT: Final = "absent"  # a negative observation: the query found nothing
UNCHECKED: Final = "unchecked"  # the call failed: nothing is known
NOT_FIRING: Final = "not_firing"
NOT_RESOLVED: Final = "not_resolved"
NOT_SILENCED: Final = "not_silenced"

POSITIVE = frozenset({FIRING, RESOLVED, SILENCED, FOUND})
# An asserted state → the excerpt states that make it true.
AGREES: dict[str, frozenset[str]] = {
    FIRING: frozenset({FIRING}),
    RESOLVED: frozenset({RESOLVED}),
    SILENCED: frozenset({SILENCED}),
    FOUND: POSITIVE,
    ABSENT: frozenset({ABSENT}),
    UNCHECKED: frozenset({UNCHECKED}),
    NOT_FIRING: frozenset({RESOLVED, SILENCED, ABSENT}),
    NOT_RESOLVED: frozenset({FIRING, SILENCED}),
    NOT_SILENCED: frozenset({FIRING, RESOLVED}),
}
NEGATED = {FIRING: NOT_FIRING, RESOLVED: NOT_RESOLVED, SILENCED: NOT_SILENCED}

_N = r"(?:\bnot|n't|\bnever)"
_ZH_NOT = r"(?:未|没有|没|尚未|仍未|还没有|还没|还未|并未|并没有|不)"
_FIRE_EN = r"(?:firing|fire|fires|fired|active|alerting|triggered|triggering)"
_RESOLVE_EN = r"(?:resolved|recovered|cleared|ended)"
_SILENCE_EN = r"(?:silenced|muted|suppressed)"
_STATE_EN = rf"(?:{_FIRE_EN}|{_RESOLVE_EN}|{_SILENCE_EN})"

# (pattern, asserted state), tried in order; each match is masked before the next pattern runs,
# so "no longer firing" is read once, as resolved, and never again as firing.
_STATE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\b(?:could not|couldn't|cannot|can't|can not|was not able to|were not able to|unable to"
            r"|failed to)\s+(?:be\s+)?(?:check|checked|query|queried|reach|reached|read|run|verify|verified"
            r"|retrieve|retrieved|fetch|fetched|access|accessed|contact|contacted|evaluate|evaluated"
            r"|confirm|confirmed)\b|\bnot (?:been )?(?:checked|queried|verified)\b"
            r"|\b(?:query|call|check|lookup|tool call) (?:failed|errored)\b"
            r"|\b(?:is|was|were) (?:unreachable|unavailable|down)\b|\bno metrics source\b"
            r"|\bno (?:[\w-]+ ){1,3}(?:is|are) configured\b|\b(?:is|are) not configured\b"
            r"|(?:无法|未能|没能|不能)(?:检查|查询|确认|获取|访问|连接|读取|核实|执行|调用)"
            r"|(?:查询|调用|检查)(?:失败|出错)|未配置|不可用|不可达"
        ),
        UNCHECKED,
    ),
    (
        re.compile(
            r"\bno longer (?:firing|fires|active|alerting)\b|\bstopped (?:firing|alerting)\b"
            r"|\b(?:has|have|had) stopped\b(?!\s+(?:firing|alerting))|\bwent away\b|\bgone away\b"
            r"|\b(?:is|are|was|were|has|have) (?:now )?gone\b|\bcalm(?:ed)? down\b|\b(?:subsided|died down)\b"
            r"|\b(?:alert|alarm|incident)s? (?:has |have |was |were |is |are )?closed\b|\binactive\b"
            r"|\b(?:alert|alarm)s? (?:is|are|was|were) (?:now )?(?:ok|okay)\b"
            r"|\b(?:is|are|was|were|went|gone|has gone) quiet\b|\bquiet(?:ed)? (?:down|now)\b"
            r"|\bback to normal\b|不再(?:触发|告警|报警)|恢复正常"
        ),
        RESOLVED,
    ),
    (
        re.compile(
            r"\bnever\s+(?:been\s+)?(?:seen|fired|triggered|raised|found|reported|logged|recorded)\b"
            r"|从未(?:出现|触发|发现|记录)"
        ),
        ABSENT,
    ),
    (
        re.compile(
            rf"{_N}\s+(?:yet\s+)?(?:been\s+)?{_RESOLVE_EN}\b|\byet to (?:resolve|recover|clear)\b"
            rf"|\bunresolved\b|{_ZH_NOT}(?:被)?(?:恢复|解除|消除|清除|结束|消失|关闭|消(?![息耗费]))"
        ),
        NOT_RESOLVED,
    ),
    (
        re.compile(rf"{_N}\s+(?:\w+\s+)?{_FIRE_EN}\b|{_ZH_NOT}在?(?:触发|活跃)"),
        NOT_FIRING,
    ),
    (re.compile(rf"{_N}\s+(?:been\s+)?{_SILENCE_EN}\b|{_ZH_NOT}被?(?:静默|屏蔽|抑制)"), NOT_SILENCED),
    (
        re.compile(
            r"\bno\s+(?:[\w.-]+\s+){0,6}?(?:was|were|is|are|has been|have been)\s+(?:found|seen|returned"
            r"|logged|reported|detected|recorded|present|known|matched)\b"
            r"|\bfound no\b|\bno matching\b|\b(?:did not|didn't|could not|couldn't|does not|doesn't|do not"
            r"|don't)\s+(?:find|show|return|contain|have|exist|appear|know)\b"
            r"|\bno\s+(?:[\w.-]+\s+){0,6}?(?:was|were|is|are|has been|have been)\s+(?:found|seen|returned"
            r"|logged|reported|detected|recorded|present|known|matched)\b"
            r"|\bnot (?:been )?(?:found|seen|detected|present|known|matched|returned)\b"
            r"|\bthere (?:is|are|was|were) no\b|\b(?:has|have|had|with|returned|shows?|showed)\s+no\b"
            r"|\bnothing\b|\bnone\b|\bunknown (?:service|alert|name)\b|\bnot a known\b"
            r"|\bno\s+(?:[\w.-]+\s+){0,3}?exists?\b|\bno\b(?!\s*(?:longer|later|more|sooner|less|doubt|[,.;:!—–-]|$))"
            r"|(?:未|没有|没|并未)(?:检索|查询|查|搜索|发现|找|检测|看)到|(?:未|没有|没|并未)发现|不存在|找不到"
            r"|查不到"
            r"|没有(?:任何)?|无(?:匹配|相关|任何|记录|告警|日志|结果)|暂无|并无"
        ),
        ABSENT,
    ),
    (
        re.compile(
            r"\b(?:still|continues? to|keeps?)\s+(?:\w+\s+)?(?:firing|fire|active|alerting|going|happening"
            r"|ongoing|on)\b|\bstill\s+\w+ing\b|\bfiring\b|\bfires\b|\b(?:is|are) active\b|\bongoing\b"
            r"|\bin progress\b|\bremains? (?:open|active|in effect|on)\b|\bstill open\b|\bin effect\b"
            r"|\bpersist(?:s|ed|ing)?\b|\bunderway\b"
            r"|\b(?:is|are) (?:still )?(?:live|ringing|going off|raised)\b"
            r"|处于(?:触发|活跃|告警|激活)|活跃|依旧|尚在|仍然|仍旧|在持续|持续着|正在触发|仍在触发|还在触发|触发中|在触发|仍在持续|还在持续|持续中|依然存在|仍然存在|仍在|还在"
            r"|一直在|持续在|依然|告警中|未解决"
        ),
        FIRING,
    ),
    (
        re.compile(
            rf"\b{_RESOLVE_EN}\b|\b(?:is|are|was) over\b(?!\s+\d)|\b(?:fixed|solved|mitigated)\b"
            r"|已经?(?:恢复|解除|消除|清除|结束|平息|解决|修复|消失)|(?:恢复|解决|修复|消失)了|恢复|消失"
            r"|(?:已经|已|告警|报警)好了|没事了|已经?关闭|关闭了|平复"
        ),
        RESOLVED,
    ),
    (re.compile(rf"\b{_SILENCE_EN}\b|\backnowledged\b|静默|屏蔽|抑制"), SILENCED),
    (
        re.compile(
            r"\b(?:found|shows?|showed|logged|returned|reported|recorded|detected|observed|appear(?:s|ed)?"
            r"|occurred|fired|triggered)\b|\bthere (?:is|are|was|were) (?:a|an|\d)"
            r"|\b(?:has|have|had) (?:a|an|\d+)\b"
            r"|检索到|查到|发现|出现|存在|记录到|观察到|有\S{0,12}?(?:告警|日志|记录|错误|报错)|触发"
        ),
        FOUND,
    ),
]

# "No HighCPUUsage alert is firing", "none of the alerts has resolved": a negated state over all.
_UNIVERSAL_NOT = re.compile(
    rf"\b(?:no|none of(?: the| its| their)?|neither(?: of)?)\s+(?:[\w.'’-]+\s+){{0,5}}?"
    rf"(?:is|are|was|were|has|have)\s+(?:been\s+|now\s+|currently\s+|still\s+)?({_STATE_EN})\b"
    rf"|\b(?:no|zero)\s+(?:currently\s+|still\s+)?({_STATE_EN})\b"
    r"|(?:没有|无)(?:任何)?\S{1,20}?(?:在|正在|处于)(触发|恢复|静默)"
    r"|(?:没有|无)(?:任何)?(?:正在|处于|已经?)?(触发|恢复|静默)中?的"
)


def _mask(text: str, match: re.Match[str]) -> str:
    return text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]


def _state_word(word: str) -> str:
    if re.fullmatch(_FIRE_EN, word) or word == "触发":
        return FIRING
    if re.fullmatch(_SILENCE_EN, word) or word == "静默":
        return SILENCED
    return RESOLVED


def states(clause: str) -> tuple[list[tuple[str, str]], bool]:
    """(state, phrase) of each state a clause asserts, in the order of the patterns, and whether it
    asserts a negated state of every item ("no alert is firing")."""
    found, universal = _states(clause)
    return list(found), universal


@functools.lru_cache(maxsize=4096)
def _states(clause: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    # the same clause is read again by the kind rule, and a runbook's text by every step bound to it
    clause = _UNKNOWN_CAUSE.sub(" ", clause)  # "no root cause could be determined" finds nothing absent
    universal = _UNIVERSAL_NOT.search(clause)
    if universal is not None:
        word = next(g for g in universal.groups() if g)
        return ((NEGATED[_state_word(word)], universal.group().strip()),), True
    found: dict[str, str] = {}
    for pattern, state in _STATE_PATTERNS:
        for match in list(pattern.finditer(clause)):
            found.setdefault(state, match.group().strip())
            clause = _mask(clause, match)
    return tuple(found.items()), False


# --- scopes ---------------------------------------------------------------------------------

ALERT, LOG, METRIC, KNOWLEDGE, SERVICE = "alert", "log", "metric", "knowledge", "service"
_SCOPES = (
    (ALERT, re.compile(r"\balerts?\b|告警|报警")),
    (LOG, re.compile(r"\blogs?\b|\blog (?:lines?|patterns?|entries|records)\b|日志")),
    (METRIC, re.compile(r"\bmetrics?\b|\bsignals?\b|\bseries\b|指标")),
    (KNOWLEDGE, re.compile(r"\brunbooks?\b|\bknowledge\b|\bdocs?\b|知识库|手册|文档")),
    (SERVICE, re.compile(r"(?<![\w-])services?\b|服务(?!器)")),
)


def scopes(clause: str) -> set[str]:
    """What kind of data a clause speaks of; a more specific kind than 'service' wins."""
    found = {name for name, pattern in _SCOPES if pattern.search(clause)}
    return found - {SERVICE} if len(found) > 1 else found


# --- connectives, trends, severity ----------------------------------------------------------

CAUSAL = re.compile(
    r"\bbecause\b|\bdue to\b|\bcaus(?:e|es|ed|ing)\b|\bled to\b|\blead(?:s|ing)? to\b"
    r"|\bresult(?:s|ed|ing)? (?:in|from)\b|\bas a result\b|\btriggered by\b"
    r"|\btrigger(?:s|ed|ing)?\s+(?:a|an|the|this|these|those|its|their)\b|\btherefore\b|\bhence\b"
    r"|\bthus\b|\bso that\b|\bresponsible for\b|\bstem(?:s|med)? from\b|\bthanks to\b|\bowing to\b"
    r"|\bexplain(?:s|ed|ing)?\b|\bmak(?:e|es|ing)\s+(?:\S+\s+){0,4}?(?:fail|failing|slow|time out"
    r"|timing out|error|crash|unavailable|down|unresponsive)\b"
    r"|\b(?:affect|impact|break|hurt)(?:s|ed|ing)?\b|\b(?:slow|slows|slowing|slowed|take|takes|taking|took)\s+(?:\S+\s+)?down\b"
    r"|\bas a (?:consequence|result) of\b|\bconsequence of\b"
    r"|\b(?:is|are|was|were) behind\b(?!\s+(?:on|in|schedule)\b)"
    r"|\bwhenever\b|\bdriv(?:e|es|en|ing)\b|\broot of\b|\bon account of\b|\b(?:linked|tied) to\b"
    r"|\bcorrelat\w* with\b|\battributable to\b|\bblam(?:e|es|ed|ing)\b"
    r"|\bculprits?\b|\bto blame\b|罪魁祸首|元凶"
    r"|\bgiven (?:the|that|its)\b(?!\s+(?:evidence|data|results?|above|findings|query))"
    r"|[和与跟].{0,40}?有关|随之|于是|受到?.{0,20}?影响"
    r"|根源|源于|源自|起因|进而|继而|以致|以至于|所致|归咎|是.{1,30}?的结果"
    r"|因为|由于|导致|引起|引发|造成|致使|使得|所以|因此|从而|归因|根因|原因是|原因在于|影响了|影响到"
    r"|拖慢|拖垮|使\S{0,8}?(?:失败|变慢|超时|不可用|崩溃)"
)
# A consequence for people or the business ("users cannot log in", "orders are being lost",
# "用户无法登录"): a bound claim must say it in those words.
IMPACT = re.compile(
    r"\b(?:users?|customers?|clients?|shoppers?|buyers?|checkouts?|logins?|sign[- ]?ins?|revenue|sales"
    r"|outages?|downtime|data loss|lost|losing|dropped|unusable)\b"
    r"|用户|客户|顾客|买家|下单|结账|登录|丢失|丢单|营收|收入|宕机|停机|业务|付款|支付失败"
)
# The passive or adjective of "affect" ("payment-service is affected by its alert", "the affected
# service"): a link between a service and what its own claim reports.
AFFECTED = re.compile(r"\b(?:affected|impacted)\b|受到?.{0,20}?影响")
# "no root cause could be determined" asserts no link.
_UNKNOWN_CAUSE = re.compile(
    r"\bno root[- ]cause\b|\b(?:root )?cause (?:could|can)(?: not|n't)\b|\bcause (?:is|was|remains) unknown\b"
    r"|\bunknown (?:root )?cause\b|(?:无法|未能|不能|尚未|没有)(?:确定|找到|确认|定位|判断|查明)(?:根因|原因)"
)
TREND_UP = re.compile(
    r"\b(?:ris(?:e|es|ing|en)|rose|increas(?:e|es|ed|ing)|grow(?:s|ing|n)?|grew|climb(?:s|ed|ing)?"
    r"|spik(?:e|es|ed|ing)|surg(?:e|es|ed|ing)|soar(?:s|ed|ing)?|jump(?:s|ed|ing)?|going up|went up"
    r"|goes up|worsen(?:s|ed|ing)?|getting worse|skyrocket\w*|trending (?:up|higher)|on the rise"
    r"|doubl(?:ed|ing)|tripl(?:ed|ing)|creep(?:s|ing)? up|tick(?:s|ed|ing)? up)\b"
    r"|一路走高|翻倍|翻番|成倍|往上走|上扬|抬升|回升|(?<!上)涨"
    r"|上升|上涨|升高|增长|增加|增多|攀升|飙升|激增|暴涨|暴增|走高|恶化|变多|变高|越来越"
)
TREND_DOWN = re.compile(
    r"\b(?:fall(?:s|ing)?(?!\s+behind)|fell|drop(?:s|ped|ping)?|declin(?:e|es|ed|ing)"
    r"|decreas(?:e|es|ed|ing)|shrink\w*|shrank|going down|went down|goes down|improv(?:e|es|ed|ing)"
    r"|eas(?:ed|ing)|trending (?:down|lower)|halv(?:ed|ing))\b"
    r"|减半|往下走|下降|降低|回落|减少|下跌|走低|好转|变少|变低|缓解"
)


def causal_words(clause: str) -> list[re.Match[str]]:
    """Each causal word or consequence of a clause ("no root cause could be determined" is none)."""
    return list(CAUSAL.finditer(_mask_all(clause, _UNKNOWN_CAUSE)))


def _mask_all(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group()), text)


HIGH, MEDIUM, LOW = "high", "medium", "low"
_SEVERITY_WORDS = (
    (
        LOW,
        re.compile(
            r"\b(?:minor|low[- ](?:severity|priority)|not (?:urgent|serious|critical|severe|a (?:big |real )?"
            r"(?:problem|concern|issue))|nothing (?:urgent|serious|critical|to worry about)|non[- ]urgent"
            r"|harmless|benign|trivial|negligible|cosmetic|no cause for concern|false (?:alarm|positive)"
            r"|noise"
            r"|healthy|fine|(?<!back to )normal|no problems?|nothing wrong|all good"
            r"|non[- ]?critical|non[- ]?severe"
            r"|(?:can|could|may)\s+(?:safely\s+)?(?:be\s+ignored|wait)|safe to ignore|ignorable|no rush"
            r"|(?:not a|no) big deal|nothing to (?:panic|worry|be worried) about|low[- ]impact)\b"
            r"|优先级(?:低|较低|不高)|低优先级|不是什么大问题|不是大问题|没什么大碍|(?:可以)?先放一放|可以稍后|稍后处理|不必着急|不用急"
            r"|问题不大|可以忽略|可忽略|忽略即可|不着急|不急|影响(?:很|较|不)?小|小毛病|无伤大雅|不严重|不紧急|不要紧|无关紧要|无需担心|不用担心|小问题|次要|轻微|影响不大|无大碍|误报|虚警"
            r"|健康|(?<!恢复)正常|没问题|没有问题"
        ),
    ),
    (
        HIGH,
        re.compile(
            r"\b(?:critical|severe|serious|urgent|major|emergency|high[- ](?:severity|priority)|sev ?1|p1)\b"
            r"|严重|紧急|重大|致命|高危|高优先级"
        ),
    ),
    (
        MEDIUM,
        re.compile(
            r"\b(?:warning[- ]level|warning severity|severity (?:of )?warning|moderate"
            r"|(?:just|only|merely) (?:a )?warning)\b"
            r"|警告级别?|中等"
        ),
    ),
)
# The severity words of refs (severity=critical), by class.
REF_SEVERITY = {
    "critical": HIGH,
    "page": HIGH,
    "high": HIGH,
    "error": HIGH,
    "emergency": HIGH,
    "p1": HIGH,
    "warning": MEDIUM,
    "warn": MEDIUM,
    "medium": MEDIUM,
    "moderate": MEDIUM,
    "major": HIGH,
    "info": LOW,
    "low": LOW,
    "minor": LOW,
    "none": LOW,
}


def severities(clause: str) -> list[tuple[str, str]]:
    """(class, word) of each severity word; 'not critical' is read once, as low."""
    out = []
    for level, pattern in _SEVERITY_WORDS:
        for match in list(pattern.finditer(clause)):
            out.append((level, match.group()))
            clause = _mask(clause, match)
    return out


def without_severity(clause: str) -> str:
    """The clause with its severity words blanked ("nothing urgent" says no absence)."""
    for _, pattern in _SEVERITY_WORDS:
        for match in list(pattern.finditer(clause)):
            clause = _mask(clause, match)
    return clause


# --- yes / no ---------------------------------------------------------------------------------

YES_NO = re.compile(
    r"^\s*(yes|yeah|yep|no|nope|是的|是|对|没错|不是|不|没有|否)\s*(?:[,，.。:：!！;；—–-]|$)"
)
YES = frozenset({"yes", "yeah", "yep", "是的", "是", "对", "没错"})


_Q_RESOLVED = re.compile(r"\b(?:resolved?|recovered?|cleared?|over|ended)\b|恢复|解除|消除|结束")
_Q_FIRING = re.compile(
    r"\b(?:still|firing|active|right now|currently|now)\b|还在|仍在|正在|现在|目前|当前|触发"
)


_Q_HEALTHY = re.compile(
    r"\b(?:ok|okay|fine|healthy|normal|alright|all right|all good)\b|正常|健康|没问题|没事|还好"
)
# "is it healthy?" ("一切正常吗？"): the excerpt states that make a yes, and a no, true
HEALTHY_YES = frozenset({ABSENT, RESOLVED})
HEALTHY_NO = frozenset({FIRING, FOUND})


def asks_healthy(question: str) -> bool:
    """Whether a yes / no question asks if all is well (a yes says nothing is wrong); "has it
    recovered to normal?" asks whether it resolved."""
    return bool(_Q_HEALTHY.search(question)) and not _Q_RESOLVED.search(question)


def question_state(question: str) -> str:
    """The state a yes / no question asks about: resolved, firing, or found (any presence)."""
    if _Q_RESOLVED.search(question):
        return RESOLVED
    if _Q_FIRING.search(question):
        return FIRING
    return FOUND
