"""The phrases the sentence check reads, in Chinese and English, besides states (rules.sentence_words):
quantifiers and counts, actions, the role of a value (current, threshold, limit) and relative times.
Patterns run on the same normalised text as rules.sentence_words."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.rules import sentence_words as w

ALL_WORDS = re.compile(r"\b(?:all|every|each|both|entire)\b|所有|全部|每个|每一个|均|都")
# A quantifier over things no alert count can support: "every request", "所有请求".
ALL_OF_THINGS = re.compile(
    r"\b(?:all|every|each)\s+(?:of\s+(?:the\s+|its\s+|their\s+)?)?(?:[a-z-]+\s+){0,2}?(?:requests?|calls?|jobs?"
    r"|users?|messages?|orders?|payments?|queries|transactions?|customers?|checkouts?|connections?|pods?"
    r"|instances?|nodes?|hosts?|consumers?|partitions?|services?)\b"
    r"|(?:所有|全部|每个|每一个)的?\S{0,4}?(?:请求|调用|任务|用户|消息|订单|支付|查询|交易|连接|实例|节点|主机|消费者|服务)"
)
# A vague plural count ("several alerts", "多个告警"): at least two.
SEVERAL = re.compile(
    r"\b(?:several|multiple|many|numerous|various|a few|a number of)\s+(?:(?:other|more|different|separate"
    r"|firing|active|open|critical)\s+)?(alerts?|services?|pods?|instances?|nodes?|hosts?)\b"
    r"|(?:好几|多|若干|几)个?\S{0,6}?(告警|服务|实例|节点|主机)"
)
BOTH = re.compile(r"\bboth\b|两个都|二者都|两者都")
ONLY = re.compile(r"\bonly\b|\bjust\b|仅|只有|只")
TOP = re.compile(r"\b(?:top|most|first|largest|biggest|main)\b|最|前")
# A count of things: "3 alerts", "3 other services", "3 个告警", "3 个正在触发的告警".
_COUNT_NOUNS_EN = (
    r"alerts?|services?|pods?|hosts?|instances?|nodes?|topics?|queues?|containers?|replicas?|patterns?"
    r"|runbooks?"
)
_COUNT_NOUNS_ZH = r"告警|服务|实例|节点|主机|日志模式|模式|容器|副本"
COUNT = re.compile(
    rf"(?<![A-Za-z0-9_.:-])(\d+)\s*(?:(?:more|other|distinct|different|separate|firing|resolved|active|open"
    rf"|known|failing|running|critical|warning)\s+){{0,2}}"
    rf"({_COUNT_NOUNS_EN})\b|(?<![A-Za-z0-9_.:-])(\d+)\s*(?:个|条|项|种|台)\S{{0,10}}?({_COUNT_NOUNS_ZH})"
)


def counts(clause: str) -> Iterable[tuple[int, str, int, int]]:
    """(number, noun, start, end) of each count of things."""
    for match in COUNT.finditer(clause):
        if match.group(1) is not None:
            yield int(match.group(1)), match.group(2), match.start(1), match.end()
        else:
            yield int(match.group(3)), match.group(4), match.start(3), match.end()


# --- actions ----------------------------------------------------------------------------------

# class → (English forms, Chinese forms); an inflected or counted form is an observation
# ("7 restarts", "restarted"), a base form an instruction.
ACTIONS: dict[str, re.Pattern[str]] = {
    "restart": re.compile(r"\b(?:restart|reboot|bounce|recycle)(?:s|ed|ing)?\b|重启|重新启动"),
    "rollback": re.compile(
        r"\broll(?:s|ed|ing)?\s+(?:\S+\s+){0,3}?back\b|\brollbacks?\b|\brevert(?:s|ed|ing)?\b|回滚|回退|退回"
    ),
    "scale": re.compile(
        r"\bscal(?:e|es|ed|ing)\s+(?:\S+\s+){0,3}?(?:up|out|down|in|horizontally|vertically)\b"
        r"|\bscale[- ]?(?:up|out)\b"
        r"|\badd(?:s|ed|ing)?\s+(?:more\s+)?(?:replicas|instances|consumers|pods|nodes|workers|machines|servers)\b"
        r"|扩容|缩容|扩缩容|增加(?:副本|实例|节点|消费者)|加\S{0,3}?(?:机器|资源|内存|节点|实例|副本|服务器|消费者)"
    ),
    "raise": re.compile(
        r"\b(?:increase|raise|bump|enlarge|double)\s+(?!in\b|of\b|to\b|by\b|from\b)[\w.]+"
        r"|\bgive\s+(?:\S+\s+){0,3}?more\b|调大|调高|提高|增大|加大|扩大"
    ),
    "delete": re.compile(
        r"\b(?:kill|delete|remove|purge|drain|flush|clear|truncate)\s+(?:the|its|their|all|a|an|old|it)\b"
        r"|删除|清理|清空|清除|杀掉"
    ),
    "disable": re.compile(
        r"\b(?:disable|mute|snooze|silence|acknowledge|ack|turn off|switch off)\s+"
        r"(?:the|this|that|these|those"
        r"|its|their|all|it)\b|禁用|关闭(?:告警|报警|监控)|关掉"
    ),
    "tune": re.compile(
        r"\b(?:tune|adjust|tweak|reconfigure|change)\s+(?:the|its|their|a|an)\b|调整|调优|修改(?:配置|参数)"
    ),
    "rebuild": re.compile(r"\b(?:rebuild|reindex|recreate)\s+(?:the|its|their|a|an|it)\b|重建|重新索引"),
    "deploy": re.compile(
        r"\b(?:redeploy|deploy|upgrade|downgrade|patch|update)\s+(?:the|its|their|a|an|to|it)\b"
        r"|重新部署|重新发布|发新版|升级|降级|打补丁"
    ),
    "failover": re.compile(r"\bfail[- ]?over\b|\bswitch(?:es|ed|ing)?\s+over\b|主备切换|切换|故障转移"),
}
_OBSERVED_EN = re.compile(r"(?:s|ed|ing)$")
_OBSERVED_BEFORE = re.compile(r"(?:\d|\b(?:a|an|the|no|one|of|after|before|by|its|their))\s*$")
_OBSERVED_ZH_AFTER = re.compile(r"\s*(?:了|过|次|记录|循环|失败|中)")
_OBSERVED_ZH_BEFORE = re.compile(r"(?:\d\s*次|次|被|已|已经|在|正在|未|没|没有|尚未|仍未)\s*$")
# a gerund after these, or opening a clause ("consider restarting", "scaling up … should help"), is
# an instruction
_ADVISED_AFTER = re.compile(
    r"(?:\s+\S+){0,3}?\s+(?:should|would|could|might|may|will)\s+(?:fix|help|resolve|solve|clear|work|do)\b"
)
_ADVISED_BEFORE = re.compile(
    r"(?:^|\b(?:try|trying|consider|considering|recommend|recommends|suggest|suggests|advise|advises|start"
    r"|begin|by|propose|avoid|keep))\s*$"
)


def actions(clause: str) -> Iterable[tuple[str, str, bool, tuple[int, int]]]:
    """(class, word, instruction?, span) of each action word."""
    for name, pattern in ACTIONS.items():
        for match in pattern.finditer(clause):
            word = match.group()
            before, after = clause[: match.start()], clause[match.end() :]
            if word[0].isascii():
                head = word.split()[0]
                observed = bool(_OBSERVED_EN.search(head) and head not in ("bounce", "purge", "increase"))
                if observed and head.endswith("ing") and _ADVISED_BEFORE.search(before):
                    observed = False
                observed = observed or bool(_OBSERVED_BEFORE.search(before))
                if observed and _ADVISED_AFTER.match(after):
                    observed = False  # "a restart of order-service should fix it"
            else:
                observed = bool(_OBSERVED_ZH_AFTER.match(after) or _OBSERVED_ZH_BEFORE.search(before))
            yield name, word, not observed, match.span()


# --- value roles, relative times ------------------------------------------------------------

CURRENT, THRESHOLD, LIMIT = "current", "threshold", "limit"
ROLE_WORDS = re.compile(
    r"(?P<current>\bcurrent(?:ly)?\b|\bnow\b|\bat present\b|\breach(?:ed|es|ing)?\b|\bhit(?:s|ting)?\b"
    r"|\bpeak(?:ed|s)? at\b|\b(?:is|was|are|were|stands?|stood|sits?|sat|running|runs) at\b"
    r"|当前|目前|现为|现在|实时|达到|高达|已达|升至)"
    r"|(?P<threshold>\bthresholds?\b|\btrigger(?:s|ing)? (?:at|above)\b|\bfires? (?:at|above)\b"
    r"|\babove\b|\bover\b|\bexceed(?:s|ed|ing)?\b|\bbeyond\b|\bhigher than\b|\bgreater than\b|阈值|门限"
    r"|告警线|高于|超过|超出|大于)"
    r"|(?P<limit>\blimits?\b|\bmax(?:imum)?\b|\bcap(?:acity)?\b|\bceiling\b|上限|最大值?|容量)"
)
# Excerpt keys by role.
ROLE_KEYS = {
    CURRENT: frozenset({"current", "value", "usage", "used", "now", "actual", "observed", "current_value"}),
    THRESHOLD: frozenset({"threshold", "trigger", "warn_threshold", "alert_threshold"}),
    LIMIT: frozenset({"limit", "max", "maximum", "maximumpoolsize", "maxmemory", "capacity", "ulimit"}),
}

RELATIVE_TIME = re.compile(
    r"\b(?:since |until |from )?(?:last night|yesterday|this (?:morning|afternoon|evening)|earlier today"
    r"|tonight|overnight|the day before|just now|a (?:moment|while) ago"
    r"|(?:\d+(?:\.\d+)?|an?|a few|several|some|a couple of)\s+(?:seconds?|minutes?|mins?|hours?|hrs?"
    r"|days?|weeks?|months?)\s+ago|recently|lately|last (?:week|month|hour|night)"
    r"|(?:for|in|over|during|within) the (?:last|past) (?:\d+(?:\.\d+)? |few |couple of )?"
    r"(?:seconds?|minutes?"
    r"|hours?|days?|weeks?)|today|(?:moments|seconds|minutes|hours|days) ago|a (?:little|short) while ago"
    r"|a bit ago|all (?:night|day|morning|evening|week)|for (?:hours|days|weeks|ages)|the other day|this week"
    r"|(?:since|at|after|before) midnight|(?:over|during|on|at) the weekend|(?:last|this) weekend"
    r"|(?:around|at|since|after|before) (?:lunch(?:time)?|noon|dinner(?:time)?)|lunchtime"
    r"|earlier this (?:morning|week|evening|afternoon))\b"
    r"|周末|午夜|中午|午饭|晚饭|不久前|前不久|整晚|整夜|一整夜|一整晚|整天|一整天|这几天|这两天|昨日|夜里|半夜|深夜|这周|前一阵|前阵子|一早|早些时候"
    r"|(?:过去|近)\s*(?:[\d.]+|[一二两三四五六七八九十半几]+)\s*(?:个)?\s*(?:秒|分钟|小时|天|周)"
    r"|刚才|刚刚|昨晚|昨天|昨夜|前天|今早|今晨|今天|今日|早上|上午|下午|晚上|凌晨|近期|前几天|上周|本周"
    r"|最近(?=\s*(?:[\d一二两三四五六七八九十几半]+\s*(?:个)?\s*(?:秒|分钟|小时|天|周|月)|几天|一段时间|这段时间))"
    r"|(?:[\d.]+|[一二两三四五六七八九十半几]+)\s*(?:个)?\s*(?:秒|分钟|小时|天|周|月)(?:前|以前|之前|以来|内)"
)


_NOUN_SCOPES = (
    (w.ALERT, ("alert", "告警")),
    (w.SERVICE, ("service", "服务")),
    (w.LOG, ("pattern", "模式", "日志模式")),
)
_COUNT_FIELD = re.compile(
    r"(?<![\w.])[a-z_]*(?:total|count|known_services|services|alerts|instances|replicas|pods|consumers|partitions)"
    r"[a-z_]*\s*=\s*(\d+)\b"
)


def counts_of(text: str) -> set[str]:
    """The counts an excerpt gives (total=3, known_services=8, count=48)."""
    return set(_COUNT_FIELD.findall(text))


def noun_scope(noun: str) -> str | None:
    return next((scope for scope, starts in _NOUN_SCOPES if noun.startswith(starts)), None)
