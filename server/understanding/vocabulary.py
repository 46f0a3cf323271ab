"""The vocabulary of questions: the Chinese → English log vocabulary (LogTerm, with the symptom
vocabulary of symptoms.json), and the marker words of intents, levels and windows. Service and alert
names are not here: they come from the sources through the service catalog (mentions.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evigate.server.understanding.symptoms import Symptom, symptoms


@dataclass(frozen=True)
class LogTerm:
    """A log vocabulary entry: searched with an exact `keyword` or, for a concept, a regex `pattern`."""

    name: str  # canonical English name, e.g. "HikariCP"
    keyword: str | None
    pattern: str | None
    label_zh: str
    label_en: str

    def arguments(self) -> dict[str, str]:
        return {"keyword": self.keyword} if self.keyword is not None else {"pattern": self.pattern or ""}

    def matches(self, text: str) -> bool:
        """Whether `text` holds this term as the log tool searches it (keyword: case-insensitive
        substring; pattern: regular expression)."""
        if self.keyword is not None:
            return self.keyword.casefold() in text.casefold()
        if not self.pattern:
            return False
        try:
            return re.search(self.pattern, text) is not None
        except re.error:
            return False


_SEARCH_WORD = re.compile(r"[\u4e00-\u9fff]+|[a-z0-9_]{2,}")
# words a search phrase holds that say nothing of its subject
_FUNCTION_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "with",
})  # fmt: skip


@dataclass(frozen=True)
class SearchedWords:
    """A ranked log search's words (query_logs `query`): a line holds them when it holds more than
    half of their content words (a plural's singular counts)."""

    name: str

    def words(self) -> list[str]:
        found = _SEARCH_WORD.findall(self.name.casefold())
        return list(dict.fromkeys(w for w in found if w not in _FUNCTION_WORDS))

    def matches(self, text: str) -> bool:
        words, lowered = self.words(), text.casefold()
        held = sum(1 for w in words if w in lowered or (len(w) > 3 and w.rstrip("s") in lowered))
        return bool(words) and held * 2 > len(words)


@dataclass(frozen=True)
class _TermEntry:
    triggers: tuple[str, ...]  # lowercase substrings of the question
    term: LogTerm
    # Words that only describe the concept ("pool", "exhaustion"): next to a trigger they add no
    # subject of their own, so "HikariCP pool-exhaustion logs" is still the HikariCP concept.
    descriptors: tuple[str, ...] = ()
    symptom: Symptom | None = None  # the symptom vocabulary entry this concept comes from


def _symptom_entry(symptom: Symptom) -> _TermEntry:
    term = LogTerm(symptom.name, None, symptom.log_pattern, symptom.label_zh, symptom.label_en)
    return _TermEntry(symptom.triggers, term, symptom.descriptors, symptom)


# Chinese → English log vocabulary. A concept such as pool exhaustion is searched by a pattern that
# covers the ways the library logs it (HikariCP's logger prints "HikariPool-1 - Connection is not available").
LOG_TERMS: tuple[_TermEntry, ...] = (
    _TermEntry(
        ("hikaricp", "hikari", "连接池耗尽", "连接池", "connection pool", "pool exhaustion"),
        LogTerm(
            "HikariCP",
            None,
            "HikariCP|HikariPool|Connection is not available",
            "HikariCP 连接池耗尽",
            "HikariCP connection pool exhaustion",
        ),
        ("pool", "pools", "exhaustion", "exhausted", "connection", "connections", "耗尽", "满了", "打满"),
    ),
    _TermEntry(
        ("outofmemoryerror", "内存溢出", "oom", "out of memory"),
        # "OOM" is a JVM's OutOfMemoryError, a container's OOMKilled or a runtime's "out of memory".
        LogTerm(
            "OutOfMemoryError",
            None,
            r"(?i)OutOfMemoryError|OOMKilled|out of memory|(?<![a-z])oom(?![a-z])|内存溢出",
            "OutOfMemoryError 内存溢出",
            "OutOfMemoryError",
        ),
    ),
    _TermEntry(
        ("nullpointerexception", "空指针"),
        LogTerm(
            "NullPointerException",
            "NullPointerException",
            None,
            "NullPointerException 空指针",
            "NullPointerException",
        ),
    ),
    _TermEntry(
        ("超时", "timeout", "timed out", "time out"),
        LogTerm("timeout", None, "(?i)timeout|timed out|超时", "超时", "timeout"),
    ),
    _TermEntry(
        ("死锁", "deadlock"),
        LogTerm("deadlock", None, "(?i)deadlock|死锁", "死锁", "deadlock"),
    ),
    _TermEntry(
        ("连接被拒绝", "connection refused"),
        LogTerm(
            "Connection refused",
            None,
            "(?i)connection refused|ECONNREFUSED|连接被拒绝",
            "连接被拒绝",
            "connection refused",
        ),
    ),
    _TermEntry(
        # A kind of line, not its words: "a Python traceback", "what exception is X throwing",
        # "抛出的是什么异常" ask for the events that carry a stack trace or an exception class.
        (
            *("traceback", "stack trace", "stacktrace", "what exception", "which exception"),
            *("exception is", "exceptions is", "throwing", "thrown", "throws", "raised", "raising"),
            *("什么异常", "哪些异常", "抛出", "堆栈"),
        ),
        LogTerm(
            "exception",
            None,
            # an exception as it is printed ("pkg.SomeError: message", a traceback's header, a
            # cause, a panic), not a class named inside a message ("retrying after SomeError(...)")
            r"Traceback \(most recent call last\)|(?<![\w$.])(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*"
            r"(?:Exception|Error)(?=:)|(?<![\w.])(?:[a-z_]\w*\.)+[A-Z]\w*(?=:)|Caused by:|panic:",
            "异常堆栈",
            "exceptions and stack traces",
        ),
        ("python", "java", "go", "exception", "exceptions", "异常", "错误"),
    ),
    # The symptom vocabulary's log concepts (those with a log pattern), after the library names.
    *(_symptom_entry(symptom) for symptom in symptoms() if symptom.log_pattern),
)

_ASCII_LEFT = r"(?<![A-Za-z0-9_-])"
_ASCII_RIGHT = r"(?![A-Za-z0-9_-])"
_SERVICE_RE = re.compile(
    _ASCII_LEFT + r"([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-(?:service|gateway)|gateway)" + _ASCII_RIGHT
)
_POOL_RE = re.compile(_ASCII_LEFT + r"(HikariPool-\d+)" + _ASCII_RIGHT)
_EXCEPTION_RE = re.compile(
    _ASCII_LEFT + r"((?:[a-z]+\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error))" + _ASCII_RIGHT
)
_CAMEL_RE = re.compile(_ASCII_LEFT + r"([A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+)" + _ASCII_RIGHT)
# HTTP error statuses named in a question ("502 错误", "any 503s"), not durations or percentages.
_STATUS_RE = re.compile(r"(?<![0-9.=%])([45]\d{2})(?![0-9.%]|\s*(?:ms|s\b|m\b|分钟|秒|次))")
# errno names logged by the C library and runtimes (EMFILE, ECONNREFUSED, ENOSPC): exact terms.
_ERRNO_RE = re.compile(
    _ASCII_LEFT
    + r"(E(?:MFILE|NFILE|NOSPC|CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|ACCES|NOENT|AGAIN"
    + r"|ADDRINUSE|HOSTUNREACH|NETUNREACH|NOMEM|PERM|BADF|NOTCONN|DQUOT|ROFS))"
    + _ASCII_RIGHT
)
# Kubernetes container states and reasons, logged as written: exact terms.
_K8S_REASON_RE = re.compile(
    _ASCII_LEFT
    + r"(OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError)"
    + _ASCII_RIGHT
)
# An apostrophe is no quote: "ledger-api's logs about the reconciler's backlog" quotes nothing.
_QUOTED_RE = re.compile(r"(?:[\"“「]|(?<![A-Za-z0-9])['‘])([^\"”」'’]{3,80})(?:[\"”」]|['’](?![A-Za-z0-9]))")

_CN_DIGITS = {
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "半": 0,
}
_ZH_WINDOW = re.compile(r"(?:最近|过去|近)\s*(\d+|[一两二三四五六七八九十半]+)?\s*(?:个)?\s*(分钟|小时|天)")
_EN_WINDOW = re.compile(
    r"\b(?:last|past|previous|within the last|in the last)\s+(\d+|an|a|one|two|three)?\s*"
    r"(minutes?|mins?|m|hours?|hrs?|h|days?|d)\b",
    re.IGNORECASE,
)
_UNIT_MINUTES = {"分钟": 1, "小时": 60, "天": 1440}

_CURRENT_MARKERS = (
    "现在",
    "当前",
    "目前",
    "正在",
    "此刻",
    "right now",
    "currently",
    "current",
    "now",
    "firing",
)
_RESOLVED_MARKERS = ("已恢复", "已解决", "resolved")
_ALERT_MARKERS = ("告警", "报警", "警报", "alert", "alerts", "alarm", "alarms", "firing")
_LOG_MARKERS = (
    *("日志", "报错", "异常", "log", "logs", "logged", "exception", "exceptions", "stack trace", "堆栈"),
    *("warnings", "errors"),
)
# Asks for every item, or for the logs themselves ("summarize the errors", "show me the logs",
# "列出所有不同的错误"): the answer lists each distinct template, not the newest lines alone.
_LIST_MARKERS = (
    *("summarize", "summarise", "summary", "list", "every", "all the", "distinct", "different"),
    *("show me", "fetch", "retrieve", "give me", "get me", "display", "dump", "what are the"),
    *("what were the", "列出", "列举", "总结", "汇总", "概括", "所有", "全部", "有哪些", "给我看"),
    *("给我", "获取", "拉取", "调取"),
)
_GUIDANCE_MARKERS = (
    "找谁",
    "怎么升级",
    "escalate",
    "who owns",
    "是什么意思",
    "什么意思",
    "mean",
    "means",
    "diagnose",
    "troubleshoot",
    "怎么办",
    "怎么处理",
    "如何处理",
    "如何排查",
    "怎么排查",
    "排查步骤",
    "处理建议",
    "处理步骤",
    "runbook",
    "手册",
    "知识库",
    "how to",
    "how do i",
    "how should",
    "what should",
    "guidance",
    "steps to",
    "steps for",
    "remediation",
    "remediate",
    "mitigation",
    "mitigate",
    "what to do",
    "what do i do",
    "处置",
    "怎么解决",
    "如何解决",
    "解决办法",
    "解决方法",
    "应对",
    "the steps",
    "which commands",
    "what commands",
    "步骤",
    "命令",
    "playbook",
)
_ERROR_MARKERS = ("错误日志", "error日志", "error log", "errors", "error-level", "error level", "报错")
_WARN_MARKERS = ("警告日志", "warn日志", "warning", "warnings", "warn log", "warn-level", "warn level")
# Broad questions: a survey of the service rather than one exact query.
_BROAD_MARKERS = (
    "what's wrong",
    "what is wrong",
    "whats wrong",
    "wrong with",
    "what's going on",
    "what is going on",
    "going on with",
    "what happened",
    "why is",
    "why are",
    "why does",
    "why do",
    "why did",
    "is something wrong",
    "health of",
    "healthy",
    "diagnose",
    "look into",
    "怎么了",
    "为什么",
    "什么原因",
    "的原因",
    "原因是",
    "出什么问题",
    "有什么问题",
    "出了什么",
    "哪里有问题",
    "状况",
    "诊断",
    "排查一下",
    "帮我看看",
    "正常吗",
)
# A guidance question that asks for the runbook's procedure, not only its name.
_STEPS_MARKERS = (
    "步骤",
    "怎么处理",
    "如何处理",
    "怎么办",
    "怎么排查",
    "如何排查",
    "命令",
    "steps",
    "step",
    "how do i",
    "how to",
    "how should",
    "what should",
    "commands",
    "command",
    "procedure",
    "remediation",
    "remediate",
    "mitigation",
    "mitigate",
    "what to do",
    "处置",
    "解决",
    "runbook",
    "手册",
    "playbook",
)
