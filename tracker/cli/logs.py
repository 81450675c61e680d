"""Logging for the long-running commands (``up``, ``gateway``, ``worker``, ``follow``, ``cluster``): text or JSON lines.

``--log-format text`` (the default) writes ``time level logger: message``
lines on stderr; ``--log-format json`` writes one JSON object per line
(python-json-logger) with ``time``, ``level``, ``logger`` and ``message``,
and every field a log call gives with ``extra=``: tracker's own calls name
the tournament (``tournament``) and the event (``event_id``) wherever there
is one, so a log pipeline can select a tournament's lines without parsing
sentences.  An exception's traceback goes in ``exc_info``, in the same line.

With ``json``, standard output carries JSON lines too: what the commands
print there (``journal …: 0 events replayed``, ``listening on …``, the
demo's narration) becomes one record per line (level ``INFO``, logger
``tracker.<command>``, the line as ``message``), so a log pipeline reading a
container's output parses every line of it.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import threading
from typing import Final, TextIO

from tracker.cli.parsers import Parser
from tracker.core.phrases import phrase

FORMATS: Final = ("text", "json")
LEVELS: Final = ("debug", "info", "warning", "error")
TEXT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_options(p: Parser, *, level: str = "warning") -> None:
    """``--log-level`` and ``--log-format``; their defaults from ``TRACKER_LOG_LEVEL`` and ``TRACKER_LOG_FORMAT``."""
    p.add_argument(
        "--log-level",
        choices=LEVELS,
        default=os.environ.get("TRACKER_LOG_LEVEL", level).lower(),
        help=p.help(
            phrase("cli.help.log_level", "what is logged (default {level}, or TRACKER_LOG_LEVEL)"), level=level
        ),
    )
    p.add_argument(
        "--log-format",
        choices=FORMATS,
        default=os.environ.get("TRACKER_LOG_FORMAT", "text").lower(),
        help=p.help(
            phrase(
                "cli.help.log_format",
                "text lines, or one JSON object per line for a log pipeline (default text, or TRACKER_LOG_FORMAT)",
            )
        ),
    )


def formatter(fmt: str) -> logging.Formatter:
    """The formatter of ``--log-format`` ``fmt`` (``text`` or ``json``)."""
    if fmt == "json":
        from pythonjsonlogger.json import JsonFormatter  # here: 26 ms of every CLI start's import, for a text log

        return JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
    return logging.Formatter(TEXT)


class JsonLines(io.TextIOBase):
    """A text stream that writes each line given to it as one JSON log record on ``stream`` (see the module).

    A line that already is a JSON object (a child process's record, as ``tracker cluster`` passes them on) is
    written as it is.  Lines from several threads are never interleaved.
    """

    def __init__(self, stream: TextIO, logger: str) -> None:
        self.stream = stream
        self.logger = logger
        self.pending = ""
        self.json = formatter("json")
        self.lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self.lock:
            *lines, self.pending = (self.pending + text).split("\n")
            for line in lines:
                if line.strip():
                    self.stream.write(self.record(line) + "\n")
        return len(text)

    def record(self, line: str, level: int = logging.INFO) -> str:
        """``line`` as a JSON record (itself when it is one)."""
        if line.startswith("{"):
            try:
                if isinstance(json.loads(line), dict):
                    return line
            except ValueError:
                pass
        return self.json.format(logging.LogRecord(self.logger, level, "", 0, line, None, None))

    def flush(self) -> None:
        with self.lock:
            if self.pending.strip():
                self.stream.write(self.record(self.pending) + "\n")
            self.pending = ""
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return False


def json_line(logger: str, level: int, message: str) -> str:
    """One JSON log record of ``message`` (the CLI's last sentence, on stderr, under ``--log-format json``)."""
    return formatter("json").format(logging.LogRecord(logger, level, "", 0, message, None, None))


def configure_logging(level: str = "warning", fmt: str = "text", *, command: str = "tracker") -> None:
    """The process's one logging set-up: the root logger at ``level``, one handler on stderr in format ``fmt``.

    With ``json``, standard output becomes a :class:`JsonLines` of logger ``tracker.<command>``.
    """
    if fmt == "json" and not isinstance(sys.stdout, JsonLines):
        sys.stdout = JsonLines(sys.stdout, f"tracker.{command}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
