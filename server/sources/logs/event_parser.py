"""Single events read out of one file's bytes, and which lines start one: what a query needs of a
file it reads through its index (query.py) or by scanning its bytes (scan.py). Verdicts on lines
that start no event, which repeat word for word in stack traces, are remembered per parser."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import BinaryIO

from .events import LineFormat, LogEvent
from .jsonlines import Quick
from .layouts import LogSource
from .log_config import LogConfig
from .multiline import Continuations
from .reader import (
    MAX_LINE,
    OVERLONG,
    REMEMBERED,
    Draft,
    FileFormat,
    StreamParser,
    decode,
    event_continuation,
    event_fields,
    event_level,
    event_service,
    finish,
    raw_lines,
)
from .stamps import Stamps


@dataclass(frozen=True)
class EventParser:
    """Reads single events out of one file's bytes, and tells which lines start one."""

    source: LogSource
    rel: str
    file_format: FileFormat
    config: LogConfig

    def event(self, data: bytes, line: int, offset: int) -> LogEvent | None:
        """The first event of bytes that start with one (its first line number and file offset given)."""
        draft = self.draft(data, line, offset)
        return finish(draft, self.source, self.file_format, self.rel, self.config) if draft else None

    def pending(self, data: bytes, line: int, offset: int) -> Pending | None:
        """As event(), read only as far as a filter needs: made whole if the query returns it."""
        draft = self.draft(data, line, offset)
        return Pending(self, draft) if draft is not None else None

    def draft(self, data: bytes, line: int, offset: int) -> Draft | None:
        """The first event of the bytes as StreamParser drafts it: its first line the first that
        parses with a time, then the lines Continuations takes up to the next such line (lines
        that are neither are skipped). Without a container, read here line by line directly:
        a query reads thousands of single events, each a line or a few."""
        if self.file_format.container:
            parser = StreamParser(self.rel, self.file_format, self._unparsed)
            for item in parser.run(raw_lines(io.BytesIO(data), line, offset)):
                if isinstance(item, Draft):
                    return item
            return None
        parse, unparsed = self.file_format.line_format.parse, self._unparsed
        draft: Draft | None = None
        continuations: Continuations | None = None
        lines = data.split(b"\n")
        last = len(lines) - 1  # lines[last] follows the last newline (b"" when the bytes end in one)
        for k, raw in enumerate(lines):
            if k == last and not raw:
                break
            start, offset = offset, offset + len(raw) + (k < last)
            number, line = line, line + 1
            text, _ = decode(raw if len(raw) < MAX_LINE else OVERLONG)
            if not text or text.isspace():
                continue
            if text in unparsed:
                parsed = None
            else:
                parsed = parse(text)
                if parsed is None:
                    if len(unparsed) >= REMEMBERED:
                        unparsed.clear()
                    unparsed.add(text)
            if parsed is not None and parsed.timestamp is not None:
                if draft is not None:
                    return draft
                draft = Draft(number, start, offset, parsed, parsed.timestamp, None)
                continuations = Continuations()
            elif continuations is not None and draft is not None and continuations.accepts(text):
                draft.continuation.append(text)
                draft.end = offset
        return draft

    def first(self, handle: BinaryIO, line: int, offset: int) -> tuple[LogEvent | None, int]:
        """The event starting at the handle's position (its first line number and offset given),
        read until the next one starts, and where its last line ends."""
        parser = StreamParser(self.rel, self.file_format)
        for item in parser.run(raw_lines(handle, line, offset)):
            if isinstance(item, Draft):
                return finish(item, self.source, self.file_format, self.rel, self.config), item.end
        return None, offset

    def starts(self, raw: bytes) -> bool:
        """Whether a line (without its newline) starts an event of a file without a container:
        as the batch indexer tells, the commonest lines by the format's quick() and a time.

        Lines that start none are remembered: they are the frames of stack traces, which repeat
        word for word and would otherwise each take the full parse of every format tried."""
        not_starting = self._not_starting
        if len(raw) >= MAX_LINE or raw in not_starting:
            return False
        text, _ = decode(raw)
        if text and not text.isspace():
            found = self._quick(text) if self._quick is not None else None
            if found is not None and self._stamps(found[0]) is not None:
                return True
            parsed = self._light.parse(text)
            if parsed is not None and parsed.timestamp is not None:
                return True
        if len(not_starting) >= REMEMBERED:
            not_starting.clear()
        not_starting.add(raw)
        return False

    @cached_property
    def _not_starting(self) -> set[bytes]:
        return set()

    @cached_property
    def _unparsed(self) -> set[str]:
        return set()

    @cached_property
    def _light(self) -> LineFormat:
        """The format reading only what tells a start (a time), as indexing reads it."""
        return self.file_format.for_indexing().line_format

    @cached_property
    def _quick(self) -> Callable[[str], Quick | None] | None:
        return getattr(self._light, "quick", None)

    @cached_property
    def _stamps(self) -> Stamps:
        return Stamps(self.config.default_tz)


@dataclass(frozen=True)
class Pending:
    """An event read as far as a query's filters look (time, level, service, the text a keyword
    or regex searches, each as the LogEvent would have it); `event()` makes it whole. A scan
    finds many events and returns a few: the rest never pay for their exception chain."""

    parser: EventParser
    draft: Draft

    @property
    def timestamp(self) -> datetime:
        return self.draft.timestamp

    @property
    def level(self) -> str:
        return event_level(self.draft.parsed, self.parser.config)

    @property
    def service(self) -> str:
        return event_service(self.draft, self.parser.source)

    def search_text(self) -> str:
        """LogEvent.search_text() of the event it makes."""
        fields = event_fields(self.draft, self.parser.source)
        return "\n".join([self.draft.parsed.message, *fields.values(), *event_continuation(self.draft)])

    def event(self) -> LogEvent:
        parser = self.parser
        return finish(self.draft, parser.source, parser.file_format, parser.rel, parser.config)
