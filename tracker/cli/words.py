"""The CLI's language and words: ``--lang``, else the locale of the environment (``LANG``), else English.

Every sentence and heading the CLI prints is a phrase (:mod:`tracker.core.phrases`), rendered in the chosen
catalogue's language (:func:`tracker.i18n.language`); names, codes (``KS``, ``DE``) and file names are written as
they are. JSON output never goes through here: its words are a contract, in English.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final

from tracker.core.phrases import Said, phrase, plural, render
from tracker.i18n.catalogue import LANGUAGES, Catalogue, choose, language

#: A place among the tied (DE) or in the standings, by the language's ordinal category (CLDR: English 1st, 2nd,
#: 3rd, 4th; French 1er, 2e; most languages one form).
ORDINALS: Final = {
    "one": phrase("ordinal.one", "{n}st"),
    "two": phrase("ordinal.two", "{n}nd"),
    "few": phrase("ordinal.few", "{n}rd"),
    "other": phrase("ordinal.other", "{n}th"),
}
UNKNOWN_LANGUAGE: Final = phrase("cli.unknown_language", "tracker does not speak {asked}: choose one of {languages}")


def environment_language(environ: Mapping[str, str]) -> str:
    """The language of the environment's locale: ``LC_ALL``, else ``LC_MESSAGES``, else ``LANG`` (the first one
    set), with GNU's ``LANGUAGE`` list first unless the locale is C; English for a language tracker does not speak."""
    locale = next((environ[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(k)), "")
    if locale.split(".")[0] in ("", "C", "POSIX"):
        return "en"
    return choose([environ.get("LANGUAGE"), locale])


def asked_language(text: str, environ: Mapping[str, str]) -> str:
    """``--lang``'s value as one of :data:`LANGUAGES` (``ru``, ``ru_RU.UTF-8`` and ``ru-RU`` are Russian).

    Raises :class:`argparse.ArgumentTypeError`, in the environment's language, for a language tracker does not
    speak.
    """
    code = text.strip().split(".")[0].replace("_", "-").split("-")[0].lower()
    if code not in LANGUAGES:
        said = UNKNOWN_LANGUAGE(asked=repr(text), languages=", ".join(LANGUAGES))
        raise argparse.ArgumentTypeError(say(said, language(environment_language(environ))))
    return code


def chosen(asked: str | None, environ: Mapping[str, str]) -> Catalogue:
    """The catalogue the CLI speaks: ``--lang`` when given, else the environment's, else English."""
    return language(asked or environment_language(environ))


def argv_language(argv: Sequence[str], environ: Mapping[str, str]) -> Catalogue:
    """The language of the parser (its ``--help`` and refusals), chosen before there is one to parse ``argv``.

    The last ``--lang CODE`` or ``--lang=CODE`` before a ``--``, as the parser will read it, else the
    environment's; a code tracker does not speak counts as none here (the parser refuses it, in the environment's
    language).
    """
    asked = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            asked = argv[i + 1]
        elif arg.startswith("--lang="):
            asked = arg.removeprefix("--lang=")
    try:
        code = asked_language(asked, environ) if asked else None
    except argparse.ArgumentTypeError:
        code = None
    return chosen(code, environ)


def say(said: Said, lang: Catalogue) -> str:
    """A phrase in ``lang`` (start numbers written as they are: the CLI names players itself)."""
    return render(said, str, lang)


def ordinal(n: int, lang: Catalogue) -> str:
    """A place as ``lang`` writes it (``1st``, ``2nd``; ``1-е``; ``1.``; ``1er``, ``2e``)."""
    category = lang.locale.ordinal_form(n)
    return say(ORDINALS.get(category, ORDINALS["other"])(n=n), lang)


def place(value: int, lang: Catalogue) -> str:
    """A DE value as a place among the tied (``1st``), ``—`` for 0 (no separation), as ``place_words`` does."""
    return "—" if value <= 0 else ordinal(value, lang)


def number(value: object, lang: Catalogue) -> str:
    """A value of the table: points as ``lang`` writes them (``2½``, ``2,5``), anything else as it is."""
    return lang.points(value) if isinstance(value, Fraction) else str(value)


def of(args: argparse.Namespace) -> Catalogue:
    """The language :func:`tracker.cli.main` chose for this command (English for arguments parsed elsewhere)."""
    found = getattr(args, "language", None)
    return found if isinstance(found, Catalogue) else language("en")


# -- the commands' sentences ---------------------------------------------------------------------------------

NOTE: Final = phrase("cli.note", "note: {note}")
CHECK_NOTHING: Final = phrase("cli.check.nothing", "{file} has no ranks (columns 86-89) and no XXT values to check")
CHECK_DISAGREE: Final = plural(
    "cli.check.disagree",
    "{file}: the official standings disagree on {n} figure (tie-breaks {codes}, C.07 {rules}):",
    "{file}: the official standings disagree on {n} figures (tie-breaks {codes}, C.07 {rules}):",
)
CHECK_AGREE: Final = plural(
    "cli.check.agree",
    "{file}: the official standings agree ({n} figure checked; tie-breaks {codes}, C.07 {rules})",
    "{file}: the official standings agree ({n} figures checked; tie-breaks {codes}, C.07 {rules})",
)
CHECK_FIGURE: Final = phrase(
    "cli.check.figure",
    "{name} ({start_no}): {what} {official} in the official standings, {computed} computed — {cause}",
)
CHECK_PLACE: Final = phrase("cli.check.place", "place")
LINES_FORM: Final = phrase("cli.lines.form", "--lines takes places separated by commas, e.g. 1,3, not {text}")
LINES_PLACES: Final = phrase("cli.lines.places", "--lines takes places of at least 1, e.g. 1,3, not {text}")
START_DATE: Final = phrase("cli.new.start_date", "--start-date takes YYYY/MM/DD, not {text}")
NEW_PLAYERS: Final = plural("cli.new.players", "{n} player", "{n} players")
NEW_ROUNDS: Final = plural("cli.new.rounds", "{n} round", "{n} rounds")
NEW_WRITTEN: Final = phrase(
    "cli.new.written", "{players:phrase}, {rounds:phrase} (FIDE Berger tables) written to {file}"
)
NEW_BOARDS_WITHOUT_TEAMS: Final = phrase(
    "cli.new.boards_without_teams", "{file}: --boards is for a team start list, and no player here has a team"
)
NEW_TEAMS: Final = plural("cli.new.teams", "{n} team", "{n} teams")
NEW_WRITTEN_TEAMS: Final = phrase(
    "cli.new.written.teams",
    "{teams:phrase} of {boards} boards ({players:phrase}), {rounds:phrase} (FIDE Berger tables over the teams) "
    "written to {file}",
)
TOKEN_SHORT: Final = phrase("cli.token.short", "the arbiter token must be at least {n} characters long")
PORT_BUSY: Final = phrase(
    "cli.port.busy",
    "port {port} on {host} is already in use (another tracker up?): stop it or choose another with --port; "
    "nothing was created",
)
PORT_RANGE: Final = phrase(
    "cli.port.range",
    "{port} is not a TCP port: choose one from 1 to 65535 (0: any free port) with --port; nothing was created",
)
PORT_PRIVILEGED: Final = phrase(
    "cli.port.privileged", "port {port} needs privileges: choose one above 1023 with --port"
)
REPLAY_NO_TOKEN: Final = phrase(
    "cli.replay.no_token",
    "no arbiter token was given: the tracker at {url} accepts results only with one; give it with --token-file PATH "
    "or TRACKER_TOKEN (or --token)",
)
REPLAY_WHERE: Final = phrase(
    "cli.replay.where", "give --url ws://HOST:PORT/ws (with --token) or --broker kafka://HOST:PORT"
)
