"""The words that are never a log question's subject: English function words and request words,
Chinese separators and edge characters, log stores, dates and the name beside "namespace"
(subjects.py reads a subject from what is left)."""

from __future__ import annotations

import re

# English function words and the words the other entities already stand for (levels, "logs").
_EN_STOP_WORDS = """
    a an the any some all are is was were be been being am do does did done have has had having
    there here it its this that these those what which who whom whose when where why how many much
    i me my we our you your they them their he she his her please can could would should will shall
    whether if may might must show find search see seen list get got give tell check look looking
    log logs logged logging logger entry entries line lines message messages record records
    event events output outputs print printed trace traces stack stacktrace
    error errors warn warns warning warnings info debug level levels fatal severity
    exception exceptions alert alerts alarm alarms firing fired resolved
    mention mentions mentioning mentioned contain contains containing contained include includes
    including with without about regarding related like such as of on in at by for from to into
    onto within during since until after before between over under and or but nor not no also too
    either neither both yet still ever now right currently current recent recently lately today
    yesterday last past previous latest hour hours minute minutes min mins day days week weeks
    time times happen happens happened happening occur occurs occurred occurring appear appears
    appeared there's any there're service services issue issues problem problems anything
    something thing things kind sort type types
    stuck really very keep keeps kept again constantly frequently often lot lots bad badly severe
    serious high low big huge too
    pod pods deployment deployments statefulset statefulsets daemonset daemonsets replicaset
    replicasets workload workloads container containers namespace namespaces ns
    fetch fetched retrieve pull display dump read view give gimme summarize summarise summary
    troubleshoot investigate debug diagnose explain cause causes causing caused reason reasons
    use using only answer both each every different distinct app apps application applications
    loki datadog newrelic relic elasticsearch kibana splunk cloudwatch graylog papertrail stackdriver
"""
# A log store's name is where the logs were asked from, never what they say ("from New Relic").
_LOG_STORES = ("new relic", "google cloud logging")
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
# A day or a month the question dates its logs by ("since last Thursday", "last December", "June 12",
# "上周四", "从 6 月 12 日以来", "去年 12 月") is when, never what the logs say.
_DATES = re.compile(
    r"(?i)\b(?:(?:last|this|next|past)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:(?:last|this|next|past)\s+)?(?:january|february|march|april|june|july|august|september"
    r"|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?"
    r"|\b(?:last|this|past)\s+(?:week|month|year)\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|(?:\d{1,4}\s*[年月日号]\s*)+|(?:上|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|上周|上个?月|去年|今年|本月|本周|这周"
)
# The name written beside the word "namespace" is a namespace, never a search term.
_NAMESPACE_NAME = (
    re.compile(r"(?i)\bnamespaces?\s+`?([\w.-]+)"),
    re.compile(r"(?i)(?<![\w-])([\w.-]+)`?\s*(?:namespaces?\b|命名空间|名字空间)"),
)
# Chinese phrases that separate the words of a question (never part of a subject).
_ZH_SEPARATORS = tuple(
    sorted(
        (
            "有没有",
            "是否有",
            "是否",
            "有无",
            "是不是",
            "日志",
            "记录",
            "报错",
            "错误",
            "警告",
            "异常",
            "告警",
            "报警",
            "警报",
            "堆栈",
            "级别",
            "相关",
            "命名空间",
            "名字空间",
            "哪些服务",
            "的",
            "吗",
            "呢",
            "吧",
            "以及",
            "或者",
            "同时",
            "并且",
            "还有",
            "现在",
            "当前",
            "目前",
            "正在",
            "此刻",
            "最近",
            "过去",
            "今天",
            "昨天",
            "出现过",
            "出现",
            "打印",
            "看看",
            "看一下",
            "查一下",
            "查查",
            "查询",
            "查看",
            "帮我",
            "请问",
            "一下",
            "什么",
            "哪些",
            "多少",
            "怎么",
            "如何",
            "为什么",
            "里面",
            "关于",
            "包含",
            "提到",
            "涉及",
            "类似",
            "这种",
            "那种",
            "这个",
            "那个",
            "这些",
            "那些",
            "情况",
            "信息",
            "内容",
            "问题",
            "原因",
            "办法",
            "建议",
            "步骤",
            "严重",
            "一直",
            "频繁",
            "经常",
            "总是",
            "很多",
            "太多",
            "突然",
            "是不是",
            "给我看",
            "查找",
            "搜索",
            "搜一下",
            "检索",
            "找出",
            "给我",
            "获取",
            "拉取",
            "调取",
            "列出",
            "列举",
            "总结",
            "汇总",
            "概括",
            "排查",
            "调查",
            "诊断",
            "应用",
            "所有",
            "全部",
            "不同",
            "两个",
            "各个",
            "每个",
            "只根据",
            "回答",
            "导致",
            "造成",
            "以来",
            "容器",
        ),
        key=len,
        reverse=True,
    )
)
# Trimmed from either end of a Chinese run ("有用户登录失败" → "用户登录失败").
_ZH_EDGE = (
    *("处理", "排查", "解决", "发生", "存在", "服务", "报"),
    *("有", "了", "过", "么", "和", "与", "及", "或", "在", "中", "里", "上", "下", "请", "还", "都"),
    *("把", "从"),
)
