"""How a service name becomes a label matcher, configurable per deployment.

Exporters name the service differently: `service` (our rules), `job` (Prometheus' scrape job), `app`
(Kubernetes' recommended label), `namespace`, or only a pod name such as `payment-service-7d9f-x2k9p`.
A deployment lists the matchers to try, in order; the first that finds series wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# RE2 accepts a backslash before any punctuation, so this escapes exactly what could be a metacharacter.
_RE2_META = re.compile(r"([\\.+*?()|\[\]{}^$])")


def re2_escape(text: str) -> str:
    """`text` as a literal inside an RE2 (Prometheus / Alertmanager) regular expression."""
    return _RE2_META.sub(r"\\\1", text)


def promql_string(value: str) -> str:
    """A PromQL double-quoted string literal."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


LOOSE = "{service~}"  # in a regex pattern: the name with any separators or none between its words
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def loose(service: str) -> str:
    """An RE2 for `service` written with other separators or as CamelCase: order-router also
    matches OrderRouter, order_router and order.router (case is left to a `(?i)` flag)."""
    words = [w for part in re.split(r"[\s_.\-/:]+", service) for w in _PARTS.findall(part)]
    return "[-_. ]?".join(re2_escape(w.lower()) for w in words) if words else re2_escape(service)


@dataclass(frozen=True)
class ServiceMatch:
    """`label op pattern`, with `{service}` in the pattern replaced by the (regex-escaped) service."""

    label: str = "service"
    op: Literal["=", "=~"] = "="
    pattern: str = "{service}"

    def __post_init__(self) -> None:
        if not _LABEL.fullmatch(self.label):
            raise ValueError(f"not a label name: {self.label!r}")
        if self.op not in ("=", "=~"):
            raise ValueError(f"service match op must be = or =~, got {self.op!r}")
        if "{service}" not in self.pattern and (LOOSE not in self.pattern or self.op != "=~"):
            raise ValueError(f"service match pattern must contain {{service}}: {self.pattern!r}")

    def value(self, service: str) -> str:
        if self.op == "=":
            return self.pattern.replace("{service}", service)
        return self.pattern.replace(LOOSE, loose(service)).replace("{service}", re2_escape(service))

    def selector(self, service: str) -> str:
        """The matcher text to put inside `{...}`: `service="payment-service"`."""
        return f"{self.label}{self.op}{promql_string(self.value(service))}"

    def matches(self, labels: Mapping[str, str], service: str) -> bool:
        """The same test, client-side (Alertmanager's API filters cannot OR several labels)."""
        have = labels.get(self.label)
        if have is None:
            return False
        if self.op == "=":
            return have.lower() == self.value(service).lower()
        return re.fullmatch(self.value(service), have, re.IGNORECASE) is not None


DEFAULT_SERVICE_MATCHES: tuple[ServiceMatch, ...] = (
    ServiceMatch("service"),
    ServiceMatch("job"),
    ServiceMatch("app"),
    ServiceMatch("pod", "=~", "{service}-.*"),
    ServiceMatch("job", "=~", ".+/{service}"),  # a team-prefixed scrape job: pricing/fare-search
    # The same name spelled another way by the exporter: OrderRouter, ledger_sync, loyalty.points.
    ServiceMatch("service", "=~", "(?i)" + LOOSE),
    ServiceMatch("job", "=~", "(?i)(.+/)?" + LOOSE),
)


def parse_service_matches(raw: Any) -> tuple[ServiceMatch, ...]:
    """`["service", "job"]` or `[{"label": "pod", "op": "=~", "pattern": "{service}-.*"}, ...]`."""
    if not isinstance(raw, list) or not raw:
        raise ValueError("service_match must be a non-empty list")
    out = []
    for item in raw:
        if isinstance(item, str):
            out.append(ServiceMatch(item))
        elif isinstance(item, Mapping):
            out.append(
                ServiceMatch(
                    str(item.get("label", "service")),
                    item.get("op", "="),
                    str(item.get("pattern", "{service}")),
                )
            )
        else:
            raise ValueError(f"service_match item must be a label name or an object: {item!r}")
    return tuple(out)


def service_of(
    labels: Mapping[str, str], matches: Sequence[ServiceMatch] = DEFAULT_SERVICE_MATCHES
) -> str | None:
    """The service an alert or series names, from the first exact-match label it carries."""
    for m in matches:
        if m.op == "=" and m.pattern == "{service}" and labels.get(m.label):
            return labels[m.label]
    return None
