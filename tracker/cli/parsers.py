"""argparse in the CLI's language: ``--help`` and the parser's refusals said in the chosen catalogue's language.

How this works
--------------

The options' help and the commands' descriptions are phrases (``cli.help.*``), said when the parser is built
(:meth:`Parser.help`), so :func:`tracker.cli.main` chooses the language before it builds one
(:func:`tracker.cli.words.argv_language`).  argparse says a few words of its own ("usage:", "options", "show this
help message and exit", its error sentences) through gettext's global domain; rather than touch that domain, a
:class:`Parser` sets its own words: the section titles and ``-h``'s help when it is made, the ``usage:`` prefix
in its :class:`Formatter`, and the sentences in :meth:`Parser.error`, which reads argparse's English sentence
back against :data:`ARGPARSE` (each phrase's English is argparse's own, ``%(name)s`` written ``{name}``) and says
it again in the parser's language.  A sentence no row matches (a type function's own, already in the language)
is said as it is.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from functools import partial
from typing import Any, Final, NoReturn

from tracker.cli.words import say
from tracker.core.phrases import Phrase, Plural, phrase
from tracker.i18n.catalogue import Catalogue, language

USAGE: Final = phrase("cli.argparse.usage", "usage:")
POSITIONALS: Final = phrase("cli.argparse.positionals", "positional arguments")
OPTIONS: Final = phrase("cli.argparse.options", "options")
HELP: Final = phrase("cli.argparse.help", "show this help message and exit")
VERSION: Final = phrase("cli.argparse.version", "show program's version number and exit")
ERROR: Final = phrase("cli.argparse.error", "{prog}: error: {message}")
ARGUMENT: Final = phrase("cli.argparse.argument", "argument {argument}: {message}")

#: argparse's sentences a ``tracker`` command line can provoke (its msgids, as Python 3.11 writes them), as phrases.
#: :data:`ARGUMENT` comes first: its ``{message}`` is one of the others (or a type function's own sentence).
ARGPARSE: Final = (
    ARGUMENT,
    phrase("cli.argparse.invalid_choice", "invalid choice: {value} (choose from {choices})"),
    phrase("cli.argparse.invalid_value", "invalid {type} value: {value}"),
    phrase("cli.argparse.required", "the following arguments are required: {arguments}"),
    phrase("cli.argparse.unrecognized", "unrecognized arguments: {arguments}"),
    phrase("cli.argparse.expected_one", "expected one argument"),
    phrase("cli.argparse.ignored", "ignored explicit argument {value}"),
    phrase("cli.argparse.ambiguous", "ambiguous option: {option} could match {matches}"),
)


def _pattern(p: Phrase) -> re.Pattern[str]:
    """The English sentences ``p`` says, as a pattern whose groups are its fields (each at least one character)."""
    parts = re.split(r"\{(\w+)\}", p.english)
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts)))


_PATTERNS: Final = tuple((p, _pattern(p)) for p in ARGPARSE)


def spoken(message: str, lang: Catalogue) -> str:
    """argparse's English ``message`` in ``lang`` (a message :data:`ARGPARSE` does not know, as it is)."""
    for p, pattern in _PATTERNS:
        found = pattern.fullmatch(message)
        if found:
            args = {k: spoken(v, lang) if k == "message" else v for k, v in found.groupdict().items()}
            return say(p(**args), lang)
    return message


class Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the ``usage:`` prefix in ``lang``."""

    def __init__(self, prog: str, *, lang: Catalogue, **kwargs: Any) -> None:
        super().__init__(prog, **kwargs)
        self.lang = lang

    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, f"{say(USAGE(), self.lang)} " if prefix is None else prefix)


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` that speaks ``lang``: its titles, ``-h``, usage and refusals.

    Its commands' parsers (``add_subparsers().add_parser(…, lang=…)``) are parsers of this class too.
    """

    def __init__(self, *, lang: Catalogue | None = None, **kwargs: Any) -> None:
        self.lang = lang or language("en")
        super().__init__(formatter_class=partial(Formatter, lang=self.lang), add_help=False, **kwargs)
        self._positionals.title = say(POSITIONALS(), self.lang)
        self._optionals.title = say(OPTIONS(), self.lang)
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=self.help(HELP))

    def help(self, p: Phrase | Plural, **args: Any) -> str:
        """``p`` said in the parser's language as an option's help (argparse expands ``%``: it is written ``%%``)."""
        return self.say(p, **args).replace("%", "%%")

    def say(self, p: Phrase | Plural, **args: Any) -> str:
        """``p`` said in the parser's language (a description or a title: argparse writes them as they are)."""
        return say(p(**args), self.lang)

    def error(self, message: str) -> NoReturn:
        """The usage and ``tracker CMD: error: …`` on stderr, in the parser's language; exits with status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, say(ERROR(prog=self.prog, message=spoken(message, self.lang)), self.lang) + "\n")
