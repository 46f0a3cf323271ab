"""How two spellings of a service name are the same name: separators and case aside, words in
another order, one letter off, a team prefix."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

_SEPARATORS = re.compile(r"[\s_.\-/:]+")


def normalize(text: str) -> str:
    """Lowercase without separators: "Orders_Consumer" and "orders consumer" → "ordersconsumer"."""
    return _SEPARATORS.sub("", text.casefold())


def parts(text: str) -> tuple[str, ...]:
    return tuple(p for p in _SEPARATORS.split(text.casefold()) if p)


def near(text: str, known: str) -> bool:
    """The same words in another order, or one edit apart (names of six letters and more)."""
    words, known_words = parts(text), parts(known)
    if len(known_words) > 1 and sorted(words) == sorted(known_words):
        return True
    a, b = normalize(text), normalize(known)
    if min(len(a), len(b)) < 6 or abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1 or any(
            a[:k] + a[k + 1] + a[k] + a[k + 2 :] == b for k in range(len(a) - 1)
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:k] + long[k + 1 :] == short for k in range(len(long)))


def team_prefixed(services: Mapping[str, object]) -> dict[str, str]:
    """Names that are another known name with a team prefix ("pricing/fare-search" where
    "fare-search" is known, as a Prometheus job names it): one service, its prefixed name an alias."""
    out = {}
    for name in services:
        bare = name.rsplit("/", 1)[-1]
        if bare != name and bare in services:
            out[name] = bare
    return out


def by_closeness(name: str, pool: Mapping[str, str], generic: frozenset[str]) -> list[str]:
    """The names of `pool` (normalized spelling → name), closest to `name` first: those that share a
    word with it (but a `generic` one), then those that hold it or that it holds, then by spelling."""
    wanted, asked = normalize(name), set(parts(name)) - generic
    ranked = sorted(
        pool,
        key=lambda key: (
            not set(parts(pool[key])) & asked,
            not (wanted and (wanted in key or key in wanted)),
            -difflib.SequenceMatcher(None, wanted, key).ratio(),
            key,
        ),
    )
    return list(dict.fromkeys(pool[key] for key in ranked))
