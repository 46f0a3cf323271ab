"""An excerpt of `key=value` fields as words a person reads: the cluster's objects, events and
revisions, the service catalog's entries, and any excerpt shape the offline Composer has no
sentence of its own for.

The item's name leads; each field follows as its key in words and its value in quotes, copied
verbatim from the excerpt (a long value cut at a word, the cut marked with an ellipsis), so the
sentence check finds every quoted span in the excerpt it is bound to and reads no state or action
into a value. Fields that only the trace needs (retrieval scores, sources, raw paths) and empty
values are left out.
"""

from __future__ import annotations

import re

MAX_VALUE = 240  # characters of one quoted value
MAX_ITEMS = 6  # items of one listed value
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)")
_END_MARKS = "。！？!?；;"
_OTHER_MARKS = re.compile(r"[“”「」『』`]")
_QUOTE_MARKS = re.compile(r"[\"“”「」『』`]")
_TELLING = re.compile(
    r"error|fail|fatal|exception|denied|refused|not found|no space|killed|panic|错误|失败", re.I
)
_INTERNAL_KEYS = frozenset({
    "source", "path", "raw_path", "match", "bm25", "dense", "evidence", "score", "template", "levels",
    "evidence_status", "query", "total",
})  # fmt: skip
_INTERNAL_FIELD = re.compile(
    r'\b(?:template="[^"]*"|(?:levels|bm25|dense|threshold|evidence|match)=\S+|(?:source|path)=[^;)\s]*)|\$\.\w+\[\d+\]'
)
_KEY = re.compile(r"[A-Za-z_][\w.]*=")
_QUOTES = (('"', '"'), ("“", "”"), ("「", "」"), ("『", "』"))
_OPEN, _CLOSE = "([{", ")]}"
_LEADS = {
    "$.objects": ("", "集群对象 "),
    "$.events": ("Event ", "Kubernetes 事件 "),
    "$.revisions": ("Rollout of ", "发布记录 "),
    "$.services": ("Service ", "服务 "),
}


# A log ref's `key=value; key=value` fields after its line, and the keys that say why it failed.
_LINE_FIELD = re.compile(r";\s+(?=[\w.@-]+=)")
_ERROR_KEYS = re.compile(r"(?:err|error|exception|reason)(?:[._]?(?:message|msg))?|errorMessage", re.I)


def error_field(fields: str) -> str:
    """The value of a log ref's error field (`error=rpc error: … desc = "… refused"`), whole up to the
    next field, quotes inside and all; "" when none holds text (an object such as `err={…}` is
    left to its own `message`)."""
    for part in _LINE_FIELD.split(fields):
        key, _, value = part.partition("=")
        value = value.strip()
        if _ERROR_KEYS.fullmatch(key.strip()) and len(value) >= 6 and value[0] not in "{[":
            return value
    return ""


def split_fields(text: str) -> tuple[str, list[tuple[str, str]]]:
    """`Pod ns/x: phase=Pending, containers=[(name=a, …)]` → ("Pod ns/x", [(phase, Pending), …]):
    fields are cut only at a top-level `, key=`, never inside brackets."""
    head, rest = text, ""
    first = _KEY.search(text)
    if first is None:
        return text.strip(), []
    head, rest = text[: first.start()], text[first.start() :]
    head = head.strip().rstrip(":,;").strip()
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(rest):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and _KEY.match(rest, i + 1 + (rest[i + 1 : i + 2] == " ")):
            parts.append(rest[start:i])
            start = i + 1
    parts.append(rest[start:])
    fields = []
    for part in parts:
        key, _, value = part.strip().partition("=")
        fields.append((key.strip(), value.strip()))
    return head, fields


def quoted(value: str) -> str:
    """`value` in double quotes, cut at a word past MAX_VALUE characters; a quote mark inside it
    (which would end the quote) is left out, an ellipsis in its place, so each span between
    ellipses is the excerpt's own text."""
    text = value.strip().rstrip("。；;！!？?").strip()
    if len(text) > MAX_VALUE:
        text = text[:MAX_VALUE].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    # double quotes inside go in single quotes (which they cannot end); other marks are left out
    mark = "'" if '"' in text and "'" not in text and not _OTHER_MARKS.search(text) else '"'
    if mark == '"':
        pieces = [p.strip() for p in _QUOTE_MARKS.split(text)]
        text = " … ".join(p for p in pieces if p and p != "…")
    if not text.strip(" …"):
        return ""
    # the answer check cuts sentences at `;`, `!`, `?` and at a full stop before a space, inside
    # quotes too: each such piece gets its own quote, the mark that ends it outside
    out, quote = [], mark
    for raw in _SENTENCE_END.split(text):
        piece = raw.strip()
        end = piece[-1] if piece and piece[-1] in _END_MARKS else ""
        body = piece[: len(piece) - len(end)].strip() if end else piece
        if body:
            out.append(f"{quote}{body}{quote}{end}")
    return " ".join(out)


def _quoted_value(value: str) -> str:
    """A field's value quoted: a list item by item (`[a; b]` → `"a"; "b"`), the items that report
    an error first when there are more than MAX_ITEMS; anything else as one quote."""
    if value.startswith("(") and value.endswith(")") and _KEY.match(value, 1):
        return _nested(value[1:-1])
    if not (value.startswith("[") and value.endswith("]")):
        return quoted(value)
    items = [i for i in _top_level(value[1:-1], ";") if i.strip()]
    if len(items) > MAX_ITEMS:
        telling = [i for i in items if _TELLING.search(i)]
        chosen = {id(i) for i in [*telling, *reversed(items)][:MAX_ITEMS]}
        items = [i for i in items if id(i) in chosen]
    return "; ".join(q for q in map(_quoted_value, (i.strip() for i in items)) if q)


def _nested(inner: str) -> str:
    """`(name=a, state=(state=waiting, reason=X))` → `a: state "waiting", reason "X"`."""
    _, fields = split_fields(inner)
    label = ""
    said = []
    for key, value in fields:
        if key == "name" and not label and "(" not in value:
            label = quoted(value)
            continue
        if key.lower() in _INTERNAL_KEYS or value.lower() in {"", "[]", "none", "null", "()"}:
            continue
        q = _quoted_value(value)
        if q:
            said.append(q if key == "state" and not value.startswith("(") else f"{key.replace('_', ' ')} {q}")
    body = ", ".join(said)
    return f"{label} ({body})" if label and body else label or body


def _top_level(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def phrase(text: str, raw_path: str, zh: bool) -> tuple[str, str] | None:
    """(sentence, short) of a field excerpt, or None when it holds no field worth saying."""
    head, fields = split_fields(text.strip())
    said = []
    for key, value in fields:
        if key == "problems" and value == "[]":  # an object with nothing wrong says so
            said.append((key, '"[]"'))
        if key.lower() in _INTERNAL_KEYS or value.lower() in {"", "[]", "none", "null", "()"}:
            continue
        q = _quoted_value(value)
        if q:
            said.append((key.replace("_", " "), q))
    if not said and not head:
        return None
    path = raw_path.split("[", 1)[0]
    lead_en, lead_zh = _LEADS.get(path, ("", ""))
    if path == "$.events" and len(head.split()) >= 3:  # `Warning BackOff ns/pod`: the type and reason as said
        kind, reason, where = head.split(" ", 2)
        head = f"{quoted(f'{kind} {reason}')} {where}"
    lead = (lead_zh if zh else lead_en) + head
    body = ("，" if zh else ", ").join(f"{k} {q}" for k, q in said)
    sentence = f"{lead}：{body}。" if zh and body else f"{lead}: {body}." if body else f"{lead}."
    short = (
        f"{lead}（{said[0][0]} {said[0][1]}）"
        if zh and said
        else f"{lead} ({said[0][0]} {said[0][1]})"
        if said
        else lead
    )
    return sentence, short


def verbatim(text: str, zh: bool) -> str:
    """The last resort: the excerpt quoted as it stands, its internal fields left out (an ellipsis
    in their place)."""
    pieces = [p.strip(" ,;|") for p in _INTERNAL_FIELD.split(text.strip())]
    q = quoted(" … ".join(p for p in pieces if p))
    if not q:
        return ""
    return f"证据原文：{q}。" if zh else f"The evidence reads {q}."


def hedge(text: str, zh: bool) -> str:
    return f"可能：{text}（未经证实）" if zh else f"Unconfirmed: {text}"


def step_text(text: str, language: str) -> str:
    """A runbook step in the answer's language as it is; one in another language quoted verbatim."""
    if in_language(text, language):
        return text
    return f"“{text}”" if language == "zh" else f'"{text}"'


def in_language(text: str, language: str) -> bool:
    has_han = re.search(r"[\u4e00-\u9fff]", text) is not None
    return has_han == (language == "zh")
