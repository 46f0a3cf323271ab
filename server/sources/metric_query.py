"""A question → the discovered metric it means and the PromQL that answers it; a range's change point.

`rank` scores each metric of the service against the question's words: the words of its name and
of its HELP text, plus a small table of how people say what metrics measure ("slower" → duration,
"命中率" → hit ratio). `promql` writes the query from the metric's type and suffix: a counter
(`_total`) as a rate, or as an increase over the question's window when it asks "how many"; a
histogram as a quantile of its buckets; a gauge as it is. Labels the question names are grouped by
(version, pod, route, upstream, 版本); a label value the question names once (an upstream, a
status class such as 5xx) filters. `change_point` finds where a range series shifted most and
states both levels with the time, so "what changed, and when" is cited from one ref.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .matching import promql_string
from .metric_discovery import SERVICE_LABELS, Metric
from .prom_types import Sample, Series, finite
from .series_text import fmt_number, fmt_time

# How a question says what a metric measures → words of metric names and HELP texts.
_SAYINGS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("latency", "slow", "slower", "faster", "response time", "duration", "延迟", "耗时", "慢", "快"),
     ("duration", "seconds", "latency", "time")),
    (("hit ratio", "hit rate", "命中率", "cache", "缓存"), ("hit", "ratio", "cache")),
    (("memory", "内存", "heap", "rss"), ("memory", "bytes", "resident")),
    (("5xx", "errors", "error", "failures", "failed", "fail", "失败", "报错", "错误"),
     ("code", "status", "failed", "errors", "responses")),
    (("retrain", "retrained", "stale", "old", "age", "多久", "训练", "模型"), ("age", "model")),
    (("connections", "clients", "连接"), ("connections", "activity", "stat")),
    (("retry", "retried", "retries", "重试"), ("retried", "retry")),
    (("sms", "短信"), ("sms",)),
    (("goroutines", "协程"), ("goroutines",)),
    (("cpu",), ("usage",)),
    (("率",), ("rate",)),
    (("rejected", "rejections", "拒绝"), ("rejected",)),
)  # fmt: skip
# Label names as a question says them.
_LABEL_WORDS = {
    "版本": "version",
    "versions": "version",
    "pods": "pod",
    "routes": "route",
    "上游": "upstream",
}
_GENERIC = frozenset({"total", "bucket", "count", "sum", "the", "of", "by", "and", "a", "in", "to", "for"})
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
_HOW_MANY = ("how many", "how much", "number of", "多少次", "多少个", "多少条", "几次")
_STATUS_CLASS = re.compile(r"(?<![0-9])([1-5])xx(?![a-z])", re.I)
_STATUS = ("code", "status", "status_code")
_RATIO = ("ratio", "share", "percent", "percentage", "比例", "占比", "百分比")
MIN_SHIFT = 0.2  # a change point is stated when the level moved by at least this share
# A question that asks for a cause ("investigate why", "有问题吗", "原因"; the caller reads it) is
# answered by comparing the metric across each label that splits the service's series into a few
# values (a `coupon`, an `exchange`): the value that stands out is the evidence, whichever label it is on.
MAX_BREAKDOWN_VALUES = 8  # a label with more values (ids, pods) is no comparison
_NOT_COMPARED = frozenset({*SERVICE_LABELS, "namespace", "instance", "pod", "le", "endpoint", "node"})


@dataclass(frozen=True)
class Built:
    expr: str
    group_by: tuple[str, ...]
    instant: bool  # an increase over the question's window is read at its end
    why: str
    unit: str | None = None  # what the expression's values are when not the metric's own unit


def _words(text: str) -> set[str]:
    lowered = text.lower()
    words = {w for w in _WORD.findall(lowered) if w not in _GENERIC}
    for said, means in _SAYINGS:
        if any(s in lowered for s in said):
            words.update(means)
    return words


def _metric_words(metric: Metric) -> tuple[set[str], set[str]]:
    name = {w for w in re.split(r"[_:]+", metric.name.lower()) if w and w not in _GENERIC}
    return name, {w for w in _WORD.findall(metric.help.lower()) if w not in _GENERIC and len(w) > 2}


def rank(question: str, metrics: Sequence[Metric]) -> list[tuple[float, Metric]]:
    """The metrics that share words with the question, best first (name words count double)."""
    wanted = _words(question)
    scored = []
    for metric in metrics:
        name, help_words = _metric_words(metric)
        score = 2.0 * len(name & wanted) + 1.0 * len(help_words & wanted)
        score += 0.5 * len({label for label in metric.labels if label in wanted})
        if score > 0:
            scored.append((score, metric))
    return sorted(scored, key=lambda sm: (-sm[0], sm[1].name))


def _labels_named(question: str, metric: Metric, compare: bool) -> tuple[list[str], list[str]]:
    """(labels to group by, matchers to filter with) from what the question names; `compare`: the
    question asks for a cause, so each label of a few values splits the series."""
    lowered = question.lower()
    group: list[str] = []
    filters: list[str] = []
    said = {_LABEL_WORDS.get(w, w) for w in _WORD.findall(lowered)} | {
        label for word, label in _LABEL_WORDS.items() if word in lowered
    }
    for label, values in metric.label_values:
        if label in ("instance", "le") or (
            not metric.scoped and (label in SERVICE_LABELS or label in ("namespace", "pod"))
        ):
            continue
        named = [
            v
            for v in values
            if len(v) > 1 and re.search(r"(?<![\w.-])" + re.escape(v.lower()) + r"(?![\w-])", lowered)
        ]
        if (label in said and len(values) > 1) or len(named) > 1:
            group.append(label)
        elif len(named) == 1:
            filters.append(f"{label}={promql_string(named[0])}")
    group = [label for label in group if label not in {f.split("=", 1)[0] for f in filters}]
    if not group and compare:
        filtered = {f.split("=", 1)[0] for f in filters}
        group = [
            label
            for label, values in metric.label_values
            if label not in _NOT_COMPARED and label not in filtered and label not in _STATUS
            and 1 < len(values) <= MAX_BREAKDOWN_VALUES
        ]  # fmt: skip
    status = _STATUS_CLASS.search(question)
    for label in _STATUS:
        if status is not None and label in metric.labels and label not in group:
            filters.append(f'{label}=~"{status.group(1)}.."')
            break
    return group, filters


def promql(metric: Metric, question: str, window: str | None, *, compare: bool = False) -> Built:
    """The query for `metric` as the question asks it (`window`: its range, e.g. "1h", if any;
    `compare`: the question asks for a cause, server.understanding.cause)."""
    group, filters = _labels_named(question, metric, compare)
    filters = [f for f in filters if f != metric.selector]  # a namespace's own matcher is there
    selector = "{" + ", ".join(m for m in [metric.selector, *filters] if m) + "}"
    by = f" by ({', '.join(group)})" if group else ""
    lowered = question.lower()
    if metric.kind == "histogram":
        quantile = "0.95" if re.search(r"p95|95", lowered) else "0.5" if "median" in lowered else "0.99"
        le = ", ".join(["le", *group])
        expr = f"histogram_quantile({quantile}, sum by ({le}) (rate({metric.name}_bucket{selector}[5m])))"
        return Built(expr, tuple(group), False, f"{metric.name} is a histogram: its {quantile} quantile")
    if metric.kind in ("counter", "summary") or metric.name.endswith("_total"):
        if window is not None and any(w in lowered for w in _HOW_MANY):
            expr = f"sum{by} (increase({metric.name}{selector}[{window}]))"
            return Built(expr, tuple(group), True, f"{metric.name} is a counter: its increase over {window}")
        expr = f"sum{by} (rate({metric.name}{selector}[5m]))"
        status = [f for f in filters if "=~" in f and f.split("=", 1)[0] in _STATUS]
        if status and any(w in lowered for w in _RATIO):
            rest = "{" + ", ".join(m for m in [metric.selector, *filters] if m and m not in status) + "}"
            expr = f"{expr} / sum{by} (rate({metric.name}{rest}[5m]))"
            why = f"{metric.name} is a counter: the share of {status[0]}"
            return Built(expr, tuple(group), False, why, "ratio")
        # A rate of a seconds counter is seconds per second: CPU time is cores.
        unit = "cores" if "cpu" in metric.name and metric.name.endswith("_seconds_total") else None
        return Built(expr, tuple(group), False, f"{metric.name} is a counter: its per-second rate", unit)
    expr = f"sum{by} ({metric.name}{selector})" if group else f"{metric.name}{selector}"
    return Built(expr, tuple(group), False, f"{metric.name} is a gauge: read as it is")


def unit_of(name: str) -> str | None:
    """The unit a metric's name states by the usual suffixes."""
    for suffix, unit in (("_seconds", "seconds"), ("_bytes", "bytes"), ("_ratio", "ratio")):
        if name.endswith(suffix) or f"{suffix}_" in name:
            return unit
    return None


def change_point(series: Series) -> str | None:
    """`change at T from avg=X to avg=Y`: the split of a range series where its level moved most
    (both sides' means, weighted by their sizes), when it moved by at least MIN_SHIFT."""
    values: list[Sample] = finite(series.samples)
    n = len(values)
    if n < 6:
        return None
    prefix = [0.0]
    for s in values:
        prefix.append(prefix[-1] + s.v)
    best: tuple[float, int] | None = None
    for k in range(2, n - 1):
        before, after = prefix[k] / k, (prefix[n] - prefix[k]) / (n - k)
        weight = abs(after - before) * math.sqrt(k * (n - k) / n)
        if best is None or weight > best[0]:
            best = (weight, k)
    if best is None:
        return None
    k = best[1]
    before, after = prefix[k] / k, (prefix[n] - prefix[k]) / (n - k)
    scale = max(abs(before), abs(after))
    if scale == 0 or abs(after - before) / scale < MIN_SHIFT:
        return None
    k = _onset(values, k, after)
    before, after = prefix[k] / k, (prefix[n] - prefix[k]) / (n - k)
    return f"change at {fmt_time(values[k].t)} from avg={fmt_number(before)} to avg={fmt_number(after)}"


def _onset(values: list[Sample], k: int, after: float) -> int:
    """Where the move that the split at `k` found began: a ramp leaves its earlier level before the
    split of the means, so the change is stated from the first sample of the run, ending at the
    split, that has already left that level (the median before the split) by a tenth of the move."""
    base = sorted(s.v for s in values[:k])[k // 2]
    tolerance = abs(after - base) / 10
    sign = 1.0 if after >= base else -1.0
    while k > 2 and (values[k - 1].v - base) * sign > tolerance:
        k -= 1
    return k
