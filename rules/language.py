"""The language of a question, by script: what the answer is written in when the request names none.

A question is Chinese when it holds Chinese words outside quoted identifiers. Service names, alert
names, log lines in quotes and code-like tokens are written in Latin letters in either language, so
they decide nothing: `payment-service 现在有 HighCPUUsage 告警吗？` is Chinese, and
``why does order-service log "连接超时"?`` is English. A question with no Chinese outside its quotes
is English when it holds an English word; one with neither (`502?`, only a quoted Chinese line) falls
back to Chinese inside the quotes, then to the default.
"""

from __future__ import annotations

import re

ZH, EN = "zh", "en"
LANGUAGES = (ZH, EN)

# Quoted spans: `…`, "…", “…”, ‘…’, 「…」, 『…』, and '…' not inside a word (order-service's is no quote).
_QUOTED = re.compile(
    r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|‘[^’\n]*’|「[^」\n]*」|『[^』\n]*』|(?<![A-Za-z0-9])'[^'\n]*'(?![A-Za-z0-9])"
)
# A code-like token: starts in ASCII and holds a path separator, '=', '::' or '->' (a path such as
# /data/日志/app.log or a field such as reason=连接超时 is an identifier, not Chinese prose).
_CODE = re.compile(r"(?<!\S)[\x21-\x7e]\S*?(?:[/\\=]|::|->)\S*")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
# An English word: a lowercase or capitalised word standing alone; a piece of an identifier
# (order-service), a CamelCase or ALL-CAPS name (HighCPUUsage, ERROR) is a name in any language.
_ENGLISH_WORD = re.compile(r"(?<![\w\-./])[A-Za-z][a-z]+(?![\w\-./])")


def detect(question: str, default: str = ZH) -> str:
    """ "zh" or "en": the language of `question` by script (see the module docstring)."""
    outside = _CODE.sub(" ", _QUOTED.sub(" ", question))
    if _HAN.search(outside):
        return ZH
    if _ENGLISH_WORD.search(outside):
        return EN
    if _HAN.search(question):
        return ZH
    return default if default in LANGUAGES else ZH


def answer_language(requested: str | None, question: str, default: str = ZH) -> str:
    """The language to answer in: the request's ("zh" / "en", any case, "zh-CN" = "zh"), else the
    question's."""
    wanted = (requested or "").strip().lower()
    for language in LANGUAGES:
        if wanted == language or wanted.startswith(f"{language}-") or wanted.startswith(f"{language}_"):
            return language
    return detect(question, default)
