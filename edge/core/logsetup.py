"""Logging setup: structured events to stdout under journald and to stderr otherwise (stdout is
the terminal channel's chat there), a rotating log file in the
state directory when not under systemd (``[logging] file``), secrets redacted on every handler, and
a ring buffer of recent warnings and errors that ``edge-cli status`` shows.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from edge.core.logformat import make_formatter
from edge.core.redaction import Redactor

LOG_FILE_MAX_BYTES = 1024 * 1024
LOG_FILE_BACKUPS = 3
RECENT_EVENTS = 20
LIBRARY_LOGGERS = ("httpx", "httpcore", "aiomqtt", "mcp", "uvicorn", "uvicorn.access",
                   "urllib3", "asyncio")
"""Other packages' loggers: at warning unless the agent logs at debug or runs with ``-v``
(httpx's line per Telegram long poll was 73 % of the log)."""


def under_systemd(env: Mapping[str, str] = os.environ) -> bool:
    """True when started by systemd with output to the journal."""
    return bool(env.get("JOURNAL_STREAM") or env.get("INVOCATION_ID"))


def log_file_path(configured: str, state_dir: Path) -> Path | None:
    """``[logging] file``: empty disables it; a relative name lives in the state directory."""
    if not configured:
        return None
    path = Path(configured).expanduser()
    return path if path.is_absolute() else state_dir / path


def configure(level: str = "info", *, style: str = "keyvalue", file: Path | None = None,
              secrets: Iterable[str] = (), env: Mapping[str, str] = os.environ,
              stream: bool = True, stream_level: str | None = None,
              verbose: bool = False) -> None:
    """Replace the root logger's handlers. ``file`` is ignored under systemd (journald has it).
    ``stream=False``: nothing on stderr (one-shot commands print their own friendly error; the
    events still reach the log file). ``stream_level``: a higher threshold for stderr than for
    the file (an interactive chat shows warnings only; ``-v``/``-q`` move it). Other packages'
    loggers (:data:`LIBRARY_LOGGERS`) say warnings and worse, unless ``level`` is debug or
    ``verbose``."""
    journald = bool(env.get("JOURNAL_STREAM"))
    redaction = RedactionFilter(Redactor(secrets))
    handlers: list[logging.Handler] = []
    if stream or journald:
        console = logging.StreamHandler(sys.stdout if journald else sys.stderr)
        console.setFormatter(make_formatter(style, journald=journald))
        if stream_level is not None and not journald:
            console.setLevel(stream_level.upper())
        handlers.append(console)
    if file is not None and not under_systemd(env):
        file.parent.mkdir(parents=True, exist_ok=True)
        rotating = RotatingLogFile(file, LOG_FILE_MAX_BYTES, LOG_FILE_BACKUPS)
        os.chmod(file, 0o640)
        rotating.setFormatter(make_formatter(style, journald=False))
        handlers.append(rotating)
    for handler in handlers:
        handler.addFilter(redaction)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level.upper())
    quiet = not verbose and level.lower() != "debug"
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING if quiet else logging.NOTSET)



class RedactionFilter(logging.Filter):
    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor
        self._exc_formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._exc_formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.redact(record.exc_text)
        return True


class RotatingLogFile(logging.FileHandler):
    """The log file, rotated by size as ``logging.handlers.RotatingFileHandler`` does
    (``edge-agent.log`` -> ``.1`` ... ``.N``, the oldest dropped). Our own because that module
    imports pickle, socket and queue with it: 0.3 MB of a resident agent's idle memory."""

    def __init__(self, path: Path, max_bytes: int, backups: int):
        super().__init__(path, encoding="utf-8")
        self.max_bytes, self.backups = max_bytes, backups

    def emit(self, record: logging.LogRecord) -> None:
        """Format once, rotate when the line would pass ``max_bytes``, then write it."""
        try:
            line = self.format(record) + self.terminator
            if self.stream is None:
                self.stream = self._open()
            if (os.path.isfile(self.baseFilename)  # never rotate a pipe or /dev/null
                    and self.stream.seek(0, os.SEEK_END) + len(line.encode()) >= self.max_bytes):
                self._rotate()
                self.stream = self._open()
            self.stream.write(line)
            self.flush()
        except RecursionError:
            raise
        except Exception:  # as logging.StreamHandler does: a log line never breaks the agent
            self.handleError(record)

    def _rotate(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        for index in range(self.backups - 1, 0, -1):
            older = f"{self.baseFilename}.{index}"
            if os.path.exists(older):
                os.replace(older, f"{self.baseFilename}.{index + 1}")
        if self.backups > 0:
            os.replace(self.baseFilename, f"{self.baseFilename}.1")
        else:
            open(self.baseFilename, "w").close()  # noqa: SIM115  (truncate)


def configure_from(loaded: Any, env: Mapping[str, str] = os.environ, *, stream: bool = True,
                   stream_level: str | None = None, verbose: bool = False) -> None:
    """Configure from a LoadedConfig: level, style, log file and the config's secrets."""
    from edge.core.redaction import secret_values

    cfg = loaded.config.logging
    configure(cfg.level, style=cfg.format, file=log_file_path(cfg.file, loaded.state_dir),
              secrets=secret_values(loaded.config), env=env, stream=stream,
              stream_level=stream_level, verbose=verbose)


class RecentEvents(logging.Handler):
    """The last warnings and errors, newest last, for the status operation."""

    def __init__(self, capacity: int = RECENT_EVENTS, secrets: Iterable[str] = ()):
        super().__init__(logging.WARNING)
        self.events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self.addFilter(RedactionFilter(Redactor(secrets)))

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append({"time": round(record.created, 3), "level": record.levelname.lower(),
                            "logger": record.name, "message": record.getMessage()})

    def snapshot(self) -> list[dict[str, Any]]:
        return list(self.events)

    def attach(self) -> RecentEvents:
        logging.getLogger().addHandler(self)
        return self

    def detach(self) -> None:
        logging.getLogger().removeHandler(self)
