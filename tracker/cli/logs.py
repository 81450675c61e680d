"""Logging for the long-running commands (``up``, ``gateway``, ``worker``, ``follow``, ``cluster``): text or JSON lines.

``--log-format text`` (the default) writes ``time level logger: message``
lines on stderr; ``--log-format json`` writes one JSON object per line
(python-json-logger) with ``time``, ``level``, ``logger`` and ``message``,
and every field a log call gives with ``extra=``: tracker's own calls name
the tournament (``tournament``) and the event (``event_id``) wherever there
is one, so a log pipeline can select a tournament's lines without parsing
sentences.  An exception's traceback goes in ``exc_info``, in the same line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Final

from pythonjsonlogger.json import JsonFormatter

FORMATS: Final = ("text", "json")
LEVELS: Final = ("debug", "info", "warning", "error")
TEXT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_options(p: argparse.ArgumentParser, *, level: str = "warning") -> None:
    """``--log-level`` and ``--log-format``; their defaults from ``TRACKER_LOG_LEVEL`` and ``TRACKER_LOG_FORMAT``."""
    p.add_argument(
        "--log-level",
        choices=LEVELS,
        default=os.environ.get("TRACKER_LOG_LEVEL", level).lower(),
        help=f"what is logged (default {level}, or TRACKER_LOG_LEVEL)",
    )
    p.add_argument(
        "--log-format",
        choices=FORMATS,
        default=os.environ.get("TRACKER_LOG_FORMAT", "text").lower(),
        help="text lines, or one JSON object per line for a log pipeline (default text, or TRACKER_LOG_FORMAT)",
    )


def formatter(fmt: str) -> logging.Formatter:
    """The formatter of ``--log-format`` ``fmt`` (``text`` or ``json``)."""
    if fmt == "json":
        return JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
    return logging.Formatter(TEXT)


def configure_logging(level: str = "warning", fmt: str = "text") -> None:
    """The process's one logging set-up: the root logger at ``level``, one handler on stderr in format ``fmt``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
