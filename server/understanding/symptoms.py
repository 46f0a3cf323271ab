"""The symptom vocabulary (symptoms.json) and the words of alert names: how a paraphrase ("rabbitmq
backlog", "堆内存", "句柄耗尽") finds the log pattern, the alerts and the signal that answer it,
on any world: alert names come from the service catalog, never from a list written for one world."""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SYMPTOMS_FILE = Path(__file__).with_name("symptoms.json")
# Words of alert names that say how, not what ("High", "Usage", "Too", "Many").
_ALERT_FILLER = frozenset(
    [
        "high",
        "low",
        "too",
        "many",
        "usage",
        "used",
        "rate",
        "ratio",
        "alert",
        "alerts",
        "is",
        "are",
        "the",
        "of",
        "on",
        "for",
        "above",
        "below",
        "exceeded",
        "exceeds",
        "critical",
        "warning",
        "warn",
        "increase",
        "increasing",
        "growing",
        "long",
        "total",
        "count",
        "percent",
    ]
)
# Technologies a question names beside its symptom ("rabbitmq backlog", "slow mongo queries"): they
# join an alert name's words but are no log subject of their own.
COMPONENT_WORDS = frozenset(
    [
        "rabbitmq",
        "rabbit",
        "kafka",
        "mongo",
        "mongodb",
        "redis",
        "mysql",
        "postgres",
        "postgresql",
        "elasticsearch",
        "jvm",
        "java",
        "nginx",
        "envoy",
        "zookeeper",
        "etcd",
        "memcached",
        "cassandra",
        "clickhouse",
        "smtp",
        "grpc",
        "http",
        "tomcat",
        "netty",
    ]
)
_CAMEL_PART = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|[0-9]|\b|_)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(frozen=True)
class Symptom:
    name: str
    label_zh: str
    label_en: str
    triggers: tuple[str, ...]
    descriptors: tuple[str, ...]
    log_pattern: str | None
    alert_words: tuple[str, ...]
    signal: str | None


@functools.cache
def symptoms() -> tuple[Symptom, ...]:
    data = json.loads(SYMPTOMS_FILE.read_text(encoding="utf-8"))
    return tuple(
        Symptom(
            name=item["name"],
            label_zh=item["label_zh"],
            label_en=item["label_en"],
            triggers=tuple(t.lower() for t in item["triggers"]),
            descriptors=tuple(d.lower() for d in item.get("descriptors", ())),
            log_pattern=item.get("log_pattern"),
            alert_words=tuple(w.lower() for w in item.get("alert_words", ())),
            signal=item.get("signal"),
        )
        for item in data["symptoms"]
    )


def trigger_spans(trigger: str, lowered: str) -> list[tuple[int, int]]:
    """Where `trigger` occurs: an ASCII trigger from a word start ("restart" in "restarted", not in
    "prestart"), a Chinese one anywhere (spaces ignored)."""
    if trigger.isascii():
        pattern = r"(?<![a-z0-9])" + r"[\s_-]*".join(re.escape(p) for p in trigger.split())
        return [m.span() for m in re.finditer(pattern, lowered)]
    pattern = r"\s*".join(re.escape(ch) for ch in trigger.replace(" ", ""))
    return [m.span() for m in re.finditer(pattern, lowered)]


def found_symptoms(lowered: str) -> list[tuple[int, Symptom]]:
    """(position, symptom) of every symptom the question names, in order."""
    out = []
    for symptom in symptoms():
        spans = [span for trigger in symptom.triggers for span in trigger_spans(trigger, lowered)]
        if spans:
            out.append((min(start for start, _ in spans), symptom))
    return sorted(out, key=lambda item: item[0])


def alert_words(name: str) -> frozenset[str]:
    """RabbitMQQueueBacklogHigh → {rabbit, mq, rabbitmq, queue, backlog} (fillers left out; adjacent
    parts also joined, so "rabbitmq" and "crashlooping" are words of the name)."""
    pieces = [p.lower() for p in _CAMEL_PART.findall(name)]
    joined = [a + b for a, b in itertools.pairwise(pieces)]
    return frozenset(w for w in (*pieces, *joined) if w not in _ALERT_FILLER and len(w) > 1)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def paraphrased_alerts(
    words: Iterable[str], found: Sequence[Symptom], known_alerts: Sequence[str], limit: int = 2
) -> list[str]:
    """The catalog's alerts a question means without naming them: those sharing the most words
    with the question's words and its symptoms' alert words (at least one symptom word, or two
    question words, so one incidental word is not enough)."""
    asked = {_singular(w.lower()) for w in words}
    symptom_words = {_singular(w) for s in found for w in s.alert_words}
    scored: list[tuple[int, int, str]] = []
    for position, name in enumerate(known_alerts):
        own = {_singular(w) for w in alert_words(name)}
        by_symptom = len(own & symptom_words)
        by_word = len(own & asked)
        if by_symptom or by_word >= 2:
            scored.append((-(2 * by_symptom + by_word), position, name))
    return [name for _, _, name in sorted(scored)[:limit]]
