"""``--help`` in the CLI's language (issue 38): ``tracker --help`` and every command's, in en, de, es, fr and ru.

The English help is the documentation users know: ``data/help-en.txt`` holds it as it was before the help went
through the catalogues, and it must stay so, word for word (``python -m tests.cli.test_cli_help`` writes it
again when an option is added on purpose).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tracker.cli import main, parser

ENGLISH_HELP = Path(__file__).parent / "data" / "help-en.txt"
WIDTH = "100"  # argparse wraps at the terminal's width ($COLUMNS)


def commands() -> list[str]:
    """Every command of ``tracker``, in the order its help lists them."""
    found = parser()._subparsers
    assert found is not None
    (sub,) = found._group_actions
    return list(sub.choices)


def help_of(argv: Sequence[str]) -> str:
    """What ``tracker ARGV --help`` prints (it exits 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return out.getvalue()


def every_help() -> Iterator[str]:
    """``tracker --help`` and each command's ``--help``, each after a ``$ tracker … --help`` line."""
    for argv in ([], *([c] for c in commands())):
        yield f"$ tracker {' '.join([*argv, '--help'])}\n{help_of(argv)}"


def test_english_help_is_what_it_was_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", WIDTH)
    assert "\n".join(every_help()) == ENGLISH_HELP.read_text(encoding="utf-8")


if __name__ == "__main__":
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        os.environ.pop(name, None)
    os.environ["COLUMNS"] = WIDTH
    ENGLISH_HELP.write_text("\n".join(every_help()), encoding="utf-8")
    sys.exit(0)
