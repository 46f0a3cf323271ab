"""The signal catalog: named signals (cpu, memory, error rate, ...) as PromQL templates over a service.

The offline agents answer "payment-service 的 CPU 现在多少？" without writing PromQL: `detect` finds
the signal a question names (English or Chinese synonyms), `resolve` renders its templates for the
service and returns the first that finds series. The catalog is data (signals.json, shipped); a
user file with the same shape adds signals or replaces same-named ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from evigate.rules.errors import EvigateError

from .matching import DEFAULT_SERVICE_MATCHES, ServiceMatch, parse_service_matches
from .prom_types import QueryResult
from .prometheus import Prometheus

DEFAULT_CATALOG = Path(__file__).with_name("signals.json")


class SignalCatalogError(EvigateError, ValueError):
    """A catalog file is unreadable or malformed."""


@dataclass(frozen=True)
class SignalTemplate:
    promql: str  # every `{service}` becomes a matcher such as service="payment-service"
    unit: str | None
    exporter: str

    def render(self, matcher: str) -> str:
        return self.promql.replace("{service}", matcher)


@dataclass(frozen=True)
class Signal:
    name: str
    description: str
    synonyms: tuple[str, ...]
    templates: tuple[SignalTemplate, ...]
    service_matches: tuple[ServiceMatch, ...] | None  # None: the catalog's


@dataclass(frozen=True)
class SignalResult:
    """What resolving a signal found: the template and query that answered (None when none did),
    and every query tried, in order, so a no-evidence answer can say what was asked."""

    signal: Signal
    service: str
    template: SignalTemplate | None
    result: QueryResult | None
    tried: tuple[str, ...]

    @property
    def unit(self) -> str | None:
        return self.template.unit if self.template else None


def _parse_signal(raw: Any, where: str) -> Signal:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        raise SignalCatalogError(f"{where}: a signal needs a name")
    templates = []
    for i, t in enumerate(raw.get("templates") or ()):
        promql = t.get("promql") if isinstance(t, Mapping) else t
        if not isinstance(promql, str) or "{service}" not in promql:
            raise SignalCatalogError(
                f"{where}.templates[{i}]: promql must be a string containing {{service}}"
            )
        unit = t.get("unit") if isinstance(t, Mapping) else None
        exporter = t.get("exporter", "") if isinstance(t, Mapping) else ""
        templates.append(SignalTemplate(promql, str(unit) if unit else None, str(exporter)))
    if not templates:
        raise SignalCatalogError(f"{where}: signal {raw['name']!r} has no templates")
    try:
        matches = parse_service_matches(raw["service_match"]) if "service_match" in raw else None
    except ValueError as exc:
        raise SignalCatalogError(f"{where}.service_match: {exc}") from exc
    return Signal(
        name=raw["name"],
        description=str(raw.get("description", "")),
        synonyms=tuple(str(s) for s in raw.get("synonyms") or ()),
        templates=tuple(templates),
        service_matches=matches,
    )


def _boundary_pattern(word: str) -> re.Pattern[str]:
    # ASCII words must stand alone ("lag" is not in "flag"); Chinese has no word boundaries.
    text = re.escape(word.lower())
    return re.compile(text if not word.isascii() else rf"(?<![a-z0-9]){text}(?![a-z0-9])")


class SignalCatalog:
    def __init__(self, signals: Sequence[Signal], service_matches: Sequence[ServiceMatch]) -> None:
        self.signals = {s.name: s for s in signals}
        self.service_matches = tuple(service_matches)
        words = [(w, s) for s in signals for w in (s.name, s.name.replace("_", " "), *s.synonyms)]
        # Longest first, so 消费延迟 (consumer lag) wins over 延迟 (latency).
        self._words = [(_boundary_pattern(w), s) for w, s in sorted(words, key=lambda ws: -len(ws[0]))]

    def get(self, name: str) -> Signal | None:
        """A signal by its name or any synonym (case-insensitive)."""
        if name in self.signals:
            return self.signals[name]
        key = name.strip().lower()
        for pattern, signal in self._words:
            if pattern.fullmatch(key):
                return signal
        return None

    def detect(self, question: str) -> Signal | None:
        """The signal a free-text question names, if any."""
        text = question.lower()
        for pattern, signal in self._words:
            if pattern.search(text):
                return signal
        return None

    def matches_for(self, signal: Signal) -> tuple[ServiceMatch, ...]:
        return signal.service_matches or self.service_matches


def parse_signal_catalog(
    data: Any, where: str = "<catalog>", base: SignalCatalog | None = None
) -> SignalCatalog:
    """A catalog from its JSON; with `base`, the file's signals add to or replace the base's."""
    if not isinstance(data, Mapping) or not isinstance(data.get("signals"), list):
        raise SignalCatalogError(f"{where}: expected an object with a signals list")
    signals = dict(base.signals) if base else {}
    for i, raw in enumerate(data["signals"]):
        signal = _parse_signal(raw, f"{where}: signals[{i}]")
        signals[signal.name] = signal
    try:
        if "service_match" in data:
            matches = parse_service_matches(data["service_match"])
        else:
            matches = base.service_matches if base else DEFAULT_SERVICE_MATCHES
    except ValueError as exc:
        raise SignalCatalogError(f"{where}: service_match: {exc}") from exc
    return SignalCatalog(list(signals.values()), matches)


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SignalCatalogError(f"{path}: {exc}") from exc


def load_signal_catalog(user_file: Path | None = None) -> SignalCatalog:
    """The shipped catalog, overridden by `user_file` when given."""
    catalog = parse_signal_catalog(_read(DEFAULT_CATALOG), str(DEFAULT_CATALOG))
    return parse_signal_catalog(_read(user_file), str(user_file), base=catalog) if user_file else catalog


async def resolve(
    prom: Prometheus,
    catalog: SignalCatalog,
    signal: Signal,
    service: str,
    *,
    at: datetime | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    step_s: float | None = None,
) -> SignalResult:
    """Try each template with each service matcher until one returns series: an instant query at
    `at` (default now), or a range query when `start` and `end` are given. A failing query (down,
    timeout, rejected) raises: a fault is never mistaken for "this exporter is not there"."""
    tried: list[str] = []
    for template in signal.templates:
        for match in catalog.matches_for(signal):
            promql = template.render(match.selector(service))
            tried.append(promql)
            if start is not None and end is not None:
                result = await prom.query_range(promql, start, end, step_s)
            else:
                result = await prom.query(promql, at)
            if result.series:
                return SignalResult(signal, service, template, result, tuple(tried))
    return SignalResult(signal, service, None, None, tuple(tried))
