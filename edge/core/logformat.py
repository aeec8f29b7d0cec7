"""One log event per line, as key=value or JSON (house style: log events, not prose).

Messages are written ``event key=value key=value`` (``actuation board=gpio pin=GPIO17 value=on
by=telegram:42``). The key=value formatter prefixes level and logger; the JSON formatter parses the
message into fields. Under journald there is no timestamp (the journal adds one) and each line
starts with a ``<N>`` syslog priority, so ``journalctl -p warning`` works.

>>> parse_event("actuation board=gpio pin=GPIO17 by='cli:pi'")
('actuation', {'board': 'gpio', 'pin': 'GPIO17', 'by': 'cli:pi'}, '')
"""

from __future__ import annotations

import json
import logging
import re
import time

EVENT_WORD = re.compile(r"[a-z_][a-z0-9_.-]*$")
FIELD = re.compile(r"""([A-Za-z_][\w.]*)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S*)""")
ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "0": "\0"}
"""What a backslash and one letter stand for in a ``repr()`` or JSON string (the only quoting
these lines carry); any other escaped character stands for itself."""
SYSLOG_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3,
                   logging.CRITICAL: 2}


def _unescape(match: re.Match[str]) -> str:
    code = match[1]
    return chr(int(code[1:], 16)) if len(code) > 1 else ESCAPED.get(code, code)


def unquote(token: str) -> str:
    """The text of a value quoted by ``repr()`` or :func:`quote`.

    Not ``ast.literal_eval``: CPython 3.11 (Pi OS bookworm's) counts the depth of the syntax tree
    it builds per interpreter, not per thread, so two threads parsing at once can raise
    ``SystemError: AST constructor recursion depth mismatch`` (cpython#106905), and any thread
    logs.

    >>> unquote(repr("it's 20°C")), unquote('"say \\"hi\\" \\u2603 \\ud83d\\ude00"')
    ("it's 20°C", 'say "hi" ☃ 😀')
    """
    try:
        text = ESCAPE.sub(_unescape, token[1:-1])
    except ValueError:  # \U beyond the last code point
        return token
    # JSON writes a character beyond U+FFFF as two escaped halves (\ud83d\ude00): join them
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _value(token: str) -> object:
    if token[:1] in "'\"":
        return unquote(token)
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token


def split_event(message: str) -> tuple[str, str]:
    """(event word, the rest) for ``event k=v ...`` or a bare ``event``; ('', message) for prose."""
    head, _, tail = message.partition(" ")
    if EVENT_WORD.match(head) and (not tail or "=" in tail):
        return head, tail
    return "", message


def parse_event(message: str) -> tuple[str, dict[str, object], str]:
    """(event, fields, leftover text) for ``event k=v ...``; prose gives ('', {}, message)."""
    head, tail = split_event(message)
    if not head:
        return "", {}, message
    fields: dict[str, object] = {}

    def take(match: re.Match[str]) -> str:
        fields.setdefault(match[1], _value(match[2]))
        return ""

    leftover = FIELD.sub(take, tail)
    return head, fields, " ".join(leftover.split())


def quote(text: str) -> str:
    """A key=value value: bare when safe, else a JSON string (escapes newlines and quotes)."""
    if text and not re.search(r"[\s\"'=\\]", text):
        return text
    return json.dumps(text)


def _timestamp(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created)) + \
        f".{int(record.msecs):03d}"


class EventFormatter(logging.Formatter):
    """Base: timestamp or journald priority prefix, and the exception text on one line."""

    def __init__(self, *, journald: bool = False):
        super().__init__()
        self.journald = journald

    def exception_text(self, record: logging.LogRecord) -> str:
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        return record.exc_text or ""

    def prefix(self, record: logging.LogRecord) -> str:
        if self.journald:
            return f"<{SYSLOG_PRIORITY.get(record.levelno, 6)}>"
        return ""


class KeyValueFormatter(EventFormatter):
    """``ts=... level=info logger=edge.runtime event=stopping reason=signal``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        head, tail = split_event(message)
        parts = [] if self.journald else [f"ts={_timestamp(record)}"]
        parts += [f"level={record.levelname.lower()}", f"logger={record.name}"]
        if head:
            parts.append(f"event={head}")
            if tail:
                parts.append(tail.replace("\n", "\\n"))
        else:
            parts.append(f"msg={quote(message)}")
        if exc := self.exception_text(record):
            parts.append(f"exc={quote(exc)}")
        return self.prefix(record) + " ".join(parts)


class JsonFormatter(EventFormatter):
    """``{"ts": ..., "level": "info", "logger": ..., "event": ..., <fields>}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        event, fields, leftover = parse_event(record.getMessage())
        out: dict[str, object] = {} if self.journald else {"ts": _timestamp(record)}
        out.update(level=record.levelname.lower(), logger=record.name)
        if event:
            out["event"] = event
        for key, value in fields.items():
            out.setdefault(key, value)
        if leftover:
            out["msg"] = leftover
        if exc := self.exception_text(record):
            out["exc"] = exc
        return self.prefix(record) + json.dumps(out, default=str)


def make_formatter(style: str, *, journald: bool) -> EventFormatter:
    return JsonFormatter(journald=journald) if style == "json" else KeyValueFormatter(journald=journald)


def parse_line(line: str) -> dict[str, object]:
    """A formatted line (either style, with or without a priority prefix) back into a dict."""
    line = re.sub(r"^<\d>", "", line.strip())
    if line.startswith("{"):
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    fields: dict[str, object] = {str(m[1]): _value(m[2]) for m in FIELD.finditer(line)}
    return fields or {"msg": line}
